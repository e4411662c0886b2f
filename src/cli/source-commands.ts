import type { Config } from '../config/config.ts';
import type { Database } from '../runtime.ts';
import { systemClock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { CliError, parseCommandArgs, required } from './args.ts';

const USAGE = 'Usage: leadintake source backfill SOURCE_ID [--since ISO-TIME] [--form FORM_ID] [--json]';

/**
 * `leadintake source backfill SOURCE_ID`: a Meta source's forms read from the Graph API and the
 * leads it has not made yet submitted (docs/INTAKE.md, "Meta Lead Ads"). The leads go through the
 * same LeadService as the webhook's, so the command builds the application's services (without
 * listening); their first messages are handed to the job queue before it exits.
 */
export async function sourceCommand(args: string[], config: Config, log: Logger, db: Database): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'backfill') throw new CliError(USAGE);
  const { values, positionals } = parseCommandArgs(
    rest,
    { since: 'string', form: 'string', json: 'boolean' },
    'source backfill',
  );
  const sourceId = required(positionals[0], 'source id');
  let since: Date | undefined;
  if (values.since !== undefined) {
    since = new Date(values.since);
    if (Number.isNaN(since.getTime())) throw new CliError(`Not a time: "${values.since}" (e.g. 2026-11-20T08:00:00Z).`);
  }
  if (values.form !== undefined && !/^\d{1,30}$/.test(values.form))
    throw new CliError(`Not a form id: "${values.form}".`);
  // Loaded here only: the other commands need none of the HTTP and queue modules.
  const [{ openBossClient }, { compose }, { buildApp }] = await Promise.all([
    import('../jobs/dead-letters.ts'),
    import('../composition.ts'),
    import('../app.ts'),
  ]);
  const boss = await openBossClient(db.url);
  try {
    const c = compose({ config, log, clock: systemClock, pool: db.pool, boss });
    const app = buildApp(c);
    try {
      const report = await app.metaIntake.backfill(sourceId, {
        ...(since ? { since } : {}),
        ...(values.form ? { formIds: [values.form] } : {}),
      });
      if (!report) throw new CliError(`No Meta source "${sourceId}" (or it was revoked).`);
      // The new leads' first turns, queued now rather than at a server's next relay pass.
      await c.relay.drain();
      if (values.json) console.log(JSON.stringify(report));
      else {
        console.log(
          `Read ${report.read} leads of ${report.forms} form(s): ${report.created} created, ` +
            `${report.known} already here, ` +
            `${report.duplicatePhone} with a phone the workspace has, ${report.failed} not accepted.`,
        );
        if (report.forms === 0) console.log('The source lists no forms: pass --form FORM_ID.');
      }
      if (report.error) throw new CliError(report.error);
      return 0;
    } finally {
      await app.http.close();
    }
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

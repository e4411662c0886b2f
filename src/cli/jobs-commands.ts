import { listDeadTurns, openBossClient, retryDeadTurns } from '../jobs/dead-letters.ts';
import type { Logger } from '../shared/logger.ts';
import { CliError, parseCommandArgs } from './args.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `leadintake jobs dead|retry`: the dead-letter queue of agent turns. */
export async function jobsCommand(args: string[], databaseUrl: string, _log: Logger): Promise<number> {
  const [sub, ...rest] = args;
  if (sub !== 'dead' && sub !== 'retry')
    throw new CliError('Usage: leadintake jobs dead [--json] | jobs retry JOB_ID... | jobs retry --all');
  const { values, positionals } = parseCommandArgs(
    rest,
    { json: 'boolean', all: 'boolean' },
    `jobs ${sub}`,
    sub === 'dead' ? ['json'] : ['all'],
  );
  if (sub === 'retry' && !values.all && positionals.length === 0) throw new CliError('Missing job id (or --all).');
  for (const id of positionals) if (!UUID.test(id)) throw new CliError(`Not a job id: "${id}".`);
  const boss = await openBossClient(databaseUrl);
  try {
    if (sub === 'dead') {
      const dead = await listDeadTurns(boss);
      if (values.json) console.log(JSON.stringify(dead));
      else if (dead.length === 0) console.log('No dead-lettered agent turns.');
      else
        for (const d of dead)
          console.log(
            `${d.id}\tlead ${d.leadId ?? '?'}\t${d.deadAt.toISOString()}\t${d.attempts} attempt(s)\t${d.reason}`,
          );
      return 0;
    }
    const moved = await retryDeadTurns(boss, values.all ? 'all' : positionals);
    if (moved === 0) throw new CliError(values.all ? 'No dead-lettered agent turns.' : 'No such dead-lettered job.');
    console.log(`Sent ${moved} agent turn(s) back to the queue.`);
    return 0;
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

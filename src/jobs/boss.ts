import { PgBoss } from 'pg-boss';
import type { Logger } from '../shared/logger.ts';
import { ensureQueues } from './queues.ts';

/** Starts pg-boss on our database (its own `pgboss` schema) and makes sure our queues exist. */
export async function startBoss(connectionString: string, log: Logger): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString,
    application_name: 'leadintake-jobs',
    max: 5,
    // Wakes notify-enabled workers the moment a job is created instead of at the next poll.
    useListenNotify: true,
  });
  boss.on('error', (err) => log.error({ err }, 'pg-boss error'));
  await boss.start();
  await ensureQueues(boss);
  return boss;
}

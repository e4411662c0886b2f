import { PgBoss } from 'pg-boss';
import type { Logger } from '../shared/logger.ts';
import { ensureQueues } from './queues.ts';

export interface BossTuning {
  /** See JOB_HEARTBEAT_SECONDS. */
  heartbeatSeconds?: number;
  /** How often lapsed heartbeats are looked for (JOB_MONITOR_SECONDS); pg-boss's default is 60. */
  monitorIntervalSeconds?: number;
  /** Connections of pg-boss's own pool (fetches, completions, heartbeats). */
  max?: number;
}

/** Starts pg-boss on our database (its own `pgboss` schema) and makes sure our queues exist. */
export async function startBoss(connectionString: string, log: Logger, tuning: BossTuning = {}): Promise<PgBoss> {
  const monitor = tuning.monitorIntervalSeconds ?? 20;
  const boss = new PgBoss({
    connectionString,
    application_name: 'leadintake-jobs',
    max: tuning.max ?? 5,
    // Wakes notify-enabled workers the moment a job is created instead of at the next poll.
    useListenNotify: true,
    // The monitor pass (which fails jobs whose heartbeat lapsed) runs every max(monitor, supervise).
    monitorIntervalSeconds: monitor,
    superviseIntervalSeconds: monitor,
  });
  boss.on('error', (err) => log.error({ err }, 'pg-boss error'));
  await boss.start();
  await ensureQueues(boss, tuning.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: tuning.heartbeatSeconds });
  return boss;
}

import { PgBoss } from 'pg-boss';
import type { Logger } from '../shared/logger.ts';
import { ALL_QUEUES, ensureQueues, type QueueTuning } from './queues.ts';

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
  // Database faults reach us here (a failed fetch, completion or maintenance pass: pg-boss retries
  // them itself). It emits copies of errors as plain objects, which the log's error serializer
  // would print as "[object Object]".
  boss.on('error', (e: unknown) => log.error({ err: asError(e) }, 'pg-boss error'));
  await boss.start();
  await ensureQueues(boss, tuning.heartbeatSeconds === undefined ? {} : { heartbeatSeconds: tuning.heartbeatSeconds });
  return boss;
}

/**
 * Part of `migrate` (every start and every CLI command, src/runtime.ts): installs or upgrades
 * pg-boss's schema and creates our queues when they are missing, so `leadintake jobs dead` works
 * on a database no `serve` has run on yet. Existing queues keep their policy: a CLI command must
 * not undo the JOB_HEARTBEAT_SECONDS a running server set (startBoss brings it up to date).
 */
export async function installJobQueues(connectionString: string, tuning: QueueTuning = {}): Promise<void> {
  const boss = new PgBoss({
    connectionString,
    application_name: 'leadintake-migrate',
    max: 1,
    supervise: false,
    schedule: false,
  });
  boss.on('error', () => {});
  await boss.start();
  try {
    const existing = await boss.getQueues([...ALL_QUEUES]);
    if (existing.length < ALL_QUEUES.length) await ensureQueues(boss, tuning);
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

function asError(e: unknown): unknown {
  if (e instanceof Error || typeof e !== 'object' || e === null) return e;
  const o = e as { message?: unknown; code?: unknown; stack?: unknown };
  return Object.assign(new Error(String(o.message)), {
    ...(typeof o.code === 'string' ? { code: o.code } : {}),
    ...(typeof o.stack === 'string' ? { stack: o.stack } : {}),
  });
}

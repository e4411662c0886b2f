import { PgBoss, type Job, type JobWithMetadata } from 'pg-boss';
import { AGENT_TURN_DEAD_LETTER } from './queues.ts';

// Agent turns that exhausted their retries, or failed in a way retrying cannot fix (a provider
// refused the workspace's settings, the chat model's key is wrong), wait in the dead-letter
// queue for an operator: `leadintake jobs dead` lists them, `leadintake jobs retry` sends them
// back to `agent-turn` once the cause is fixed. A retried turn resumes at its last checkpoint.
//
// One id names a turn throughout: the id of the job the outbox created (pg-boss's "root" id).
// pg-boss gives the dead-letter copy and every redriven copy ids of their own, but keeps the
// root on each of them; the `agent turn` log line, `jobs dead` and `jobs retry` all use the root.

export interface DeadTurn {
  /** The turn's id: the one its `agent turn` log lines show and `jobs retry` takes. */
  id: string;
  leadId: string | null;
  /** When it arrived in the dead-letter queue. */
  deadAt: Date;
  /** When the original job was created. */
  createdAt: Date | null;
  /** Attempts the original job made. */
  attempts: number;
  /** Why the last attempt failed. */
  reason: string;
}

/** A pg-boss client for administration: no maintenance, no cron, a small pool. */
export async function openBossClient(connectionString: string): Promise<PgBoss> {
  const boss = new PgBoss({
    connectionString,
    application_name: 'leadintake-admin',
    max: 2,
    supervise: false,
    schedule: false,
  });
  boss.on('error', () => {});
  await boss.start();
  return boss;
}

/** Dead-lettered turns still waiting, oldest first. */
export async function listDeadTurns(boss: PgBoss): Promise<DeadTurn[]> {
  const jobs = await boss.findJobs<{ leadId?: unknown }>(AGENT_TURN_DEAD_LETTER, { queued: true });
  return jobs
    .map((j) => ({
      id: turnIdOfDeadLetter(j),
      leadId: typeof j.data?.leadId === 'string' ? j.data.leadId : null,
      deadAt: j.createdOn,
      createdAt: j.sourceCreatedOn,
      attempts: (j.sourceRetryCount ?? 0) + 1,
      reason: reasonOf(j.sourceOutput),
    }))
    .sort((a, b) => a.deadAt.getTime() - b.deadAt.getTime());
}

/** Sends dead-lettered turns back to their queue: the given turn ids, or all of them. Returns how many moved. */
export async function retryDeadTurns(boss: PgBoss, ids: string[] | 'all'): Promise<number> {
  if (ids === 'all') return boss.redrive(AGENT_TURN_DEAD_LETTER, {});
  const wanted = new Set(ids.map((id) => id.toLowerCase()));
  const dead = await boss.findJobs(AGENT_TURN_DEAD_LETTER, { queued: true });
  const copies = dead.filter((j) => wanted.has(turnIdOfDeadLetter(j))).map((j) => j.id);
  return copies.length === 0 ? 0 : boss.redrive(AGENT_TURN_DEAD_LETTER, { ids: copies });
}

/** The turn id of a dead-letter copy: the root of its chain (the failed job itself if it was the first). */
function turnIdOfDeadLetter(j: JobWithMetadata<unknown>): string {
  return j.sourceRootId ?? j.sourceId ?? j.id;
}

/** The turn id of a job the worker runs: its root once it went through the dead-letter queue, else its own. */
export function turnIdOf(job: Job<unknown> & Partial<Pick<JobWithMetadata<unknown>, 'sourceRootId'>>): string {
  return job.sourceRootId ?? job.id;
}

function reasonOf(output: unknown): string {
  if (typeof output !== 'object' || output === null) return 'unknown';
  const o = output as { reason?: unknown; message?: unknown };
  const text = typeof o.reason === 'string' ? o.reason : typeof o.message === 'string' ? o.message : JSON.stringify(o);
  return text.slice(0, 500);
}

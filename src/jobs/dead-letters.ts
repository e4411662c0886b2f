import { PgBoss } from 'pg-boss';
import { AGENT_TURN_DEAD_LETTER } from './queues.ts';

// Agent turns that exhausted their retries, or failed in a way retrying cannot fix (a provider
// refused the workspace's settings, the chat model's key is wrong), wait in the dead-letter
// queue for an operator: `leadintake jobs dead` lists them, `leadintake jobs retry` sends them
// back to `agent-turn` once the cause is fixed. A retried turn resumes at its last checkpoint.

export interface DeadTurn {
  /** The id in the dead-letter queue (what `jobs retry` takes). */
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
  const boss = new PgBoss({ connectionString, application_name: 'leadintake-admin', max: 2, supervise: false, schedule: false });
  boss.on('error', () => {});
  await boss.start();
  return boss;
}

/** Dead-lettered turns still waiting, oldest first. */
export async function listDeadTurns(boss: PgBoss): Promise<DeadTurn[]> {
  const jobs = await boss.findJobs<{ leadId?: unknown }>(AGENT_TURN_DEAD_LETTER, { queued: true });
  return jobs
    .map((j) => ({
      id: j.id,
      leadId: typeof j.data?.leadId === 'string' ? j.data.leadId : null,
      deadAt: j.createdOn,
      createdAt: j.sourceCreatedOn,
      attempts: (j.sourceRetryCount ?? 0) + 1,
      reason: reasonOf(j.sourceOutput),
    }))
    .sort((a, b) => a.deadAt.getTime() - b.deadAt.getTime());
}

/** Sends dead-lettered turns back to their queue: the given ids, or all of them. Returns how many moved. */
export async function retryDeadTurns(boss: PgBoss, ids: string[] | 'all'): Promise<number> {
  return boss.redrive(AGENT_TURN_DEAD_LETTER, ids === 'all' ? {} : { ids });
}

function reasonOf(output: unknown): string {
  if (typeof output !== 'object' || output === null) return 'unknown';
  const o = output as { reason?: unknown; message?: unknown };
  const text = typeof o.reason === 'string' ? o.reason : typeof o.message === 'string' ? o.message : JSON.stringify(o);
  return text.slice(0, 500);
}

import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../../db/pool.ts';
import { META_LEAD_RETRY_QUEUE } from '../../jobs/queues.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import { findLeadBySourceLeadId } from '../lead-source-queries.ts';
import type { MetaIntakeService, MetaSource } from './meta-intake-service.ts';
import { readMetaConfig } from './meta-source-settings.ts';

// A Meta lead whose webhook read or submission failed for a temporary reason (docs/INTAKE.md,
// "Failures"): the webhook was answered 200 all the same, so Meta will not send it again. One
// job per retry reads the lead from Graph by its leadgen id and submits it, as the webhook does;
// one that fails for a temporary reason again queues the next, a minute later at first, the wait
// doubling up to an hour, for about a day. A lead the source already made (the backfill ran, or
// another retry) is found first and nothing is read. When the retries run out, the source's
// last_error says so and a warning names the source and the leadgen id.

export interface MetaLeadRetryJob {
  sourceId: string;
  leadgenId: string;
  pageId?: string;
  /** This job's retry, 1 for the first. */
  retry: number;
}

/** 1, 2, 4 … 32 minutes, then hourly: the last retry is about a day after the failure. */
export const META_LEAD_RETRIES = 29;

export function retryDelaySeconds(retry: number): number {
  return Math.min(60 * 2 ** (retry - 1), 3600);
}

/** Queues retry `job.retry` through the outbox, due after its delay (by `now`). */
export async function queueLeadRetry(db: Queryable, job: MetaLeadRetryJob, now: Date): Promise<void> {
  const at = new Date(now.getTime() + retryDelaySeconds(job.retry) * 1000);
  await db.query('INSERT INTO outbox (queue, payload, start_after) VALUES ($1, $2, $3)', [
    META_LEAD_RETRY_QUEUE,
    job,
    at,
  ]);
}

export type RetryResult = 'created' | 'known' | 'retrying' | 'failed' | 'exhausted' | 'gone';

export interface MetaLeadRetryDeps {
  meta: MetaIntakeService;
  db: Queryable;
  clock: Clock;
  /** The live `meta` source with this id, its secret opened; null when revoked or gone. */
  sourceById(id: string): Promise<MetaSource | null>;
  recordError(sourceId: string, message: string): Promise<void>;
}

/** Runs one retry job; what came of it. */
export async function runLeadRetry(d: MetaLeadRetryDeps, job: MetaLeadRetryJob, log: Logger): Promise<RetryResult> {
  const source = await d.sourceById(job.sourceId);
  if (!source) return 'gone';
  if (await findLeadBySourceLeadId(d.db, source.id, job.leadgenId)) return 'known';
  const outcome = await d.meta.readAndSubmit(source, readMetaConfig(source.config), job.leadgenId, job.pageId);
  if (outcome.kind !== 'failed') return outcome.kind === 'created' ? 'created' : 'known';
  // A permanent refusal is on the source and in the log already (readAndSubmit, IntakeService).
  if (!outcome.temporary) return 'failed';
  if (job.retry < META_LEAD_RETRIES) {
    await queueLeadRetry(d.db, { ...job, retry: job.retry + 1 }, d.clock());
    return 'retrying';
  }
  await d.recordError(
    source.id,
    `Lead ${job.leadgenId} was not taken after ${job.retry} retries over about a day (${outcome.message}); ` +
      '`leadintake source backfill` reads it again.',
  );
  log.warn(
    { workspaceId: source.workspaceId, sourceId: source.id, leadgenId: job.leadgenId, retries: job.retry },
    'meta lead retries exhausted; the lead is not taken',
  );
  return 'exhausted';
}

/** Runs meta-lead-retry jobs (src/worker.ts). An error fails the job and pg-boss runs it again. */
export async function startMetaLeadRetryWorker(o: {
  boss: PgBoss;
  run(job: MetaLeadRetryJob, log: Logger): Promise<RetryResult>;
  log: Logger;
  pollSeconds: number;
}): Promise<void> {
  await o.boss.work<MetaLeadRetryJob>(
    META_LEAD_RETRY_QUEUE,
    { batchSize: 1, pollingIntervalSeconds: o.pollSeconds, notifyPollingIntervalSeconds: o.pollSeconds },
    async (jobs) => {
      for (const job of jobs) {
        const fields = { sourceId: job.data.sourceId, leadgenId: job.data.leadgenId, retry: job.data.retry };
        try {
          o.log.info({ ...fields, result: await o.run(job.data, o.log) }, 'meta lead retry');
        } catch (err) {
          o.log.warn({ err, ...fields }, 'meta lead retry failed; pg-boss runs it again');
          throw err;
        }
      }
    },
  );
}

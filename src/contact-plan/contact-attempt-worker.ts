import type { PgBoss } from 'pg-boss';
import { attemptsLeft, CONTACT_ATTEMPT_QUEUE } from '../jobs/queues.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
import type { ContactPlanService } from './contact-plan-service.ts';

/** Attempts one process makes at once (a call placed, a follow-up queued): short, mostly waiting on a provider. */
export const CONTACT_ATTEMPT_CONCURRENCY = 4;

/**
 * Runs contact-attempt jobs, each one step of one lead's plan. An error fails the job and pg-boss
 * retries it (a killed worker's job likewise, once its heartbeat lapses); the step then finds
 * itself marked in flight and its channel checks whether the attempt was made. On the job's last
 * retry the lead goes to a person instead (ContactPlanService.handOverFailedStep): the queue has
 * no dead letter, and the plan would otherwise stay in flight with nothing to run it.
 */
export async function startContactAttemptWorker(o: {
  boss: PgBoss;
  service: ContactPlanService;
  log: Logger;
  pollSeconds: number;
}): Promise<void> {
  await o.boss.work<{ leadId: string; step: number }>(
    CONTACT_ATTEMPT_QUEUE,
    {
      localConcurrency: CONTACT_ATTEMPT_CONCURRENCY,
      batchSize: 1,
      includeMetadata: true,
      pollingIntervalSeconds: o.pollSeconds,
      notifyPollingIntervalSeconds: o.pollSeconds,
    },
    async (jobs) => {
      for (const job of jobs) {
        try {
          const outcome = await o.service.run(job.data.leadId, job.data.step);
          o.log.debug({ leadId: job.data.leadId, step: job.data.step, outcome }, 'contact attempt job');
        } catch (err) {
          if (attemptsLeft(job) !== 0) {
            o.log.warn({ err, leadId: job.data.leadId }, 'contact attempt failed; pg-boss retries it');
            throw err;
          }
          const detail = `the attempt kept failing: ${scrubText((err as Error).message ?? String(err)).slice(0, 300)}`;
          const handed = await o.service.handOverFailedStep(job.data.leadId, job.data.step, detail);
          o.log.error({ err, leadId: job.data.leadId, handedOver: handed }, 'contact attempt failed on its last retry');
        }
      }
    },
  );
}

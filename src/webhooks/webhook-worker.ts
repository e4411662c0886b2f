import type { PgBoss } from 'pg-boss';
import { WEBHOOK_DELIVERY_QUEUE } from '../jobs/queues.ts';
import type { Logger } from '../shared/logger.ts';
import type { WebhookDeliveryService } from './webhook-delivery-service.ts';

/** Webhook attempts one process runs at once; each holds no connection while it waits on the receiver. */
export const WEBHOOK_CONCURRENCY = 4;

/**
 * Runs webhook-delivery jobs: each is one attempt. A failed attempt completes its job (the service
 * has already scheduled the retry in its own transaction); only an error before or while recording
 * the attempt fails the job, and pg-boss retries it (a killed worker's job likewise, once its
 * heartbeat lapses).
 */
export async function startWebhookWorker(o: {
  boss: PgBoss;
  service: WebhookDeliveryService;
  log: Logger;
  pollSeconds: number;
}): Promise<void> {
  await o.boss.work<{ deliveryId: string }>(
    WEBHOOK_DELIVERY_QUEUE,
    {
      localConcurrency: WEBHOOK_CONCURRENCY,
      batchSize: 1,
      pollingIntervalSeconds: o.pollSeconds,
      notifyPollingIntervalSeconds: o.pollSeconds,
    },
    async (jobs) => {
      for (const job of jobs) {
        try {
          await o.service.attempt(job.data.deliveryId);
        } catch (err) {
          o.log.warn({ err, deliveryId: job.data.deliveryId }, 'webhook job failed; pg-boss retries it');
          throw err;
        }
      }
    },
  );
}

import type { Job, JobWithMetadata, PgBoss } from 'pg-boss';

/** Every pg-boss queue the service uses, with its retry and dead-letter policy. */
export const AGENT_TURN_QUEUE = 'agent-turn';
export const AGENT_TURN_DEAD_LETTER = 'agent-turn-dead';
/** One job per outbound webhook attempt (src/webhooks/); the retry schedule is the service's, not pg-boss's. */
export const WEBHOOK_DELIVERY_QUEUE = 'webhook-delivery';
/** A contact plan's next attempt (src/contact-plan/), held by pg-boss until it is due. */
export const CONTACT_ATTEMPT_QUEUE = 'contact-attempt';
/** A Meta lead refused for a temporary reason, read and submitted again (src/intake/meta/meta-lead-retry.ts). */
export const META_LEAD_RETRY_QUEUE = 'meta-lead-retry';
export const ALL_QUEUES = [
  AGENT_TURN_QUEUE,
  AGENT_TURN_DEAD_LETTER,
  WEBHOOK_DELIVERY_QUEUE,
  CONTACT_ATTEMPT_QUEUE,
  META_LEAD_RETRY_QUEUE,
] as const;

export interface QueueTuning {
  /**
   * A running turn's heartbeat interval: a crashed worker's turn is retried once it lapses (and the monitor notices).
   */
  heartbeatSeconds?: number;
}

export async function ensureQueues(boss: PgBoss, tuning: QueueTuning = {}): Promise<void> {
  await boss.createQueue(AGENT_TURN_DEAD_LETTER, { retentionSeconds: 30 * 24 * 3600 });
  const policy = {
    retryLimit: 5,
    retryDelay: 2,
    retryBackoff: true,
    retryDelayMax: 300,
    // The default expiry (15 min) would leave a crashed worker's turn waiting that long.
    heartbeatSeconds: tuning.heartbeatSeconds ?? 15,
    // Wakes idle workers the moment a job is created (needs useListenNotify, src/jobs/boss.ts).
    notify: true,
  };
  await boss.createQueue(AGENT_TURN_QUEUE, { ...policy, deadLetter: AGENT_TURN_DEAD_LETTER });
  // createQueue leaves an existing queue as it was: bring its policy up to date.
  await boss.updateQueue(AGENT_TURN_QUEUE, policy);
  // pg-boss retries a webhook job only when its attempt could not run (a crashed worker, a lease
  // still held, the database away); a failed HTTP attempt completes the job and schedules the next.
  const webhookPolicy = {
    retryLimit: 20,
    retryDelay: 10,
    retryBackoff: true,
    retryDelayMax: 600,
    heartbeatSeconds: policy.heartbeatSeconds,
    notify: true,
  };
  await boss.createQueue(WEBHOOK_DELIVERY_QUEUE, webhookPolicy);
  await boss.updateQueue(WEBHOOK_DELIVERY_QUEUE, webhookPolicy);
  // An attempt is idempotent per plan step (the step moves on when it is taken), so a crashed
  // worker's attempt is simply run again; a failed provider call is recorded by the attempt itself.
  const attemptPolicy = {
    retryLimit: 10,
    retryDelay: 30,
    retryBackoff: true,
    retryDelayMax: 900,
    heartbeatSeconds: policy.heartbeatSeconds,
    notify: true,
  };
  await boss.createQueue(CONTACT_ATTEMPT_QUEUE, attemptPolicy);
  await boss.updateQueue(CONTACT_ATTEMPT_QUEUE, attemptPolicy);
  // Like the webhook jobs: the back-off between a lead's retries is the service's (each retry
  // queues the next); pg-boss retries a job only when it could not run. A rerun is harmless: a
  // lead already made from the leadgen id is found before anything is read or submitted.
  const metaRetryPolicy = { ...attemptPolicy, retryLimit: 5 };
  await boss.createQueue(META_LEAD_RETRY_QUEUE, metaRetryPolicy);
  await boss.updateQueue(META_LEAD_RETRY_QUEUE, metaRetryPolicy);
}

/** Retries the job has left after this attempt; undefined when pg-boss gave no metadata (includeMetadata). */
export function attemptsLeft(job: Job<unknown>): number | undefined {
  const m = job as Partial<JobWithMetadata<unknown>>;
  return m.retryLimit === undefined ? undefined : Math.max(0, m.retryLimit - (m.retryCount ?? 0));
}

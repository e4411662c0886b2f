import type { Job, JobResult, PgBoss } from 'pg-boss';
import { z } from 'zod';
import { AGENT_TURN_QUEUE } from '../jobs/queues.ts';
import type { Logger } from '../shared/logger.ts';
import type { TurnEngine, TurnJobResult } from './turn-engine.ts';

// Runs `agent-turn` jobs (pg-boss, woken by LISTEN/NOTIFY, heartbeats from the queue's policy in
// src/jobs/queues.ts). Each job names a lead; the engine does whatever that lead needs. Outcomes
// map to pg-boss: done → completed, retry → failed (retried with exponential back-off), dead →
// straight to the dead-letter queue (an operator must act; `leadintake jobs retry` re-runs it).

const jobData = z.object({ leadId: z.uuid(), workspaceId: z.uuid().optional() });

export interface TurnWorkerOptions {
  boss: PgBoss;
  engine: TurnEngine;
  log: Logger;
  /** Turns this process runs at once. */
  concurrency: number;
  /** Idle poll (JOB_POLL_SECONDS): jobs that become due without a NOTIFY (retries after back-off). */
  pollSeconds?: number;
  /** Called as a job's handler starts (the bench measures enqueue → start with it). */
  onJobStart?: (job: Job<unknown>) => void;
}

export class TurnWorker {
  readonly #o: TurnWorkerOptions;
  readonly #inFlight = new Set<Promise<unknown>>();

  constructor(opts: TurnWorkerOptions) {
    this.#o = opts;
  }

  async start(): Promise<void> {
    await this.#o.boss.work<unknown>(
      AGENT_TURN_QUEUE,
      {
        localConcurrency: this.#o.concurrency,
        batchSize: 1,
        perJobResults: true,
        // pg-boss's defaults (2 s, and 30 s while NOTIFY works) would leave a retry whose back-off
        // has passed waiting up to 30 s: nothing announces it.
        pollingIntervalSeconds: this.#o.pollSeconds ?? 2,
        notifyPollingIntervalSeconds: this.#o.pollSeconds ?? 2,
      },
      (jobs) => Promise.all(jobs.map((job) => this.#track(this.runJob(job)))),
    );
  }

  /** Runs one job's turn and says how pg-boss should settle it. Never throws. */
  async runJob(job: Job<unknown>): Promise<JobResult> {
    this.#o.onJobStart?.(job);
    const parsed = jobData.safeParse(job.data);
    if (!parsed.success) {
      this.#o.log.error({ jobId: job.id }, 'agent-turn job without a valid leadId');
      return { id: job.id, status: 'deadletter', output: { reason: 'job data has no valid leadId' } };
    }
    const leadId = parsed.data.leadId;
    let result: TurnJobResult;
    try {
      result = await this.#o.engine.run(leadId, job.signal);
    } catch (err) {
      this.#o.log.error({ err, jobId: job.id, leadId, attempt: job.retryCount }, 'agent turn failed');
      result = { kind: 'retry', reason: (err as Error).message ?? String(err) };
    }
    this.#o.log.info({ jobId: job.id, leadId, attempt: job.retryCount, result: result.kind, ...('outcome' in result ? { outcome: result.outcome } : {}) }, 'agent turn');
    switch (result.kind) {
      case 'done':
        return { id: job.id, status: 'completed', output: { outcome: result.outcome } };
      case 'retry':
        return { id: job.id, status: 'failed', output: { reason: result.reason } };
      case 'dead':
        return { id: job.id, status: 'deadletter', output: { reason: result.reason } };
    }
  }

  /**
   * For tests: relays nothing, fetches the queue's ready jobs and runs them here until none is
   * left. `deadletter` outcomes are failed instead (pg-boss settles dead letters only from its
   * own workers), which tests of dead letters must keep in mind.
   */
  async drainOnce(opts: { ignoreBackoff?: boolean } = {}): Promise<number> {
    const boss = this.#o.boss;
    let ran = 0;
    for (;;) {
      const jobs = await boss.fetch<unknown>(AGENT_TURN_QUEUE, { batchSize: 20, ...(opts.ignoreBackoff ? { ignoreStartAfter: true } : {}) });
      if (jobs.length === 0) return ran;
      for (const job of jobs) {
        const r = await this.runJob(job);
        const attempt = { id: job.id, retryCount: job.retryCount };
        if (r.status === 'completed') await boss.complete(AGENT_TURN_QUEUE, attempt, r.output as object);
        else await boss.fail(AGENT_TURN_QUEUE, attempt, r.output as object);
        ran++;
      }
    }
  }

  /** Resolves when the handlers running now have finished. */
  async idle(): Promise<void> {
    await Promise.allSettled([...this.#inFlight]);
  }

  #track<T>(p: Promise<T>): Promise<T> {
    this.#inFlight.add(p);
    void p.finally(() => this.#inFlight.delete(p));
    return p;
  }
}

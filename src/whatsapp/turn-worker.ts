import type { Job, JobResult, PgBoss } from 'pg-boss';
import { z } from 'zod';
import { turnIdOf } from '../jobs/dead-letters.ts';
import { AGENT_TURN_QUEUE } from '../jobs/queues.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
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
  /**
   * Jobs one fetch takes (WORKER_BATCH_SIZE, default 1): `concurrency` turns are then run by
   * concurrency / batchSize pollers. A batch's next fetch waits for its slowest turn.
   */
  batchSize?: number;
  /** Idle poll (JOB_POLL_SECONDS): jobs that become due without a NOTIFY (retries after back-off). */
  pollSeconds?: number;
  /** Called as a job's handler starts (the bench measures enqueue → start with it). */
  onJobStart?: (job: Job<unknown>) => void;
  /**
   * True while the process's public API is under pressure (`serve` with its handlers in-process):
   * then one turn runs at a time instead of `concurrency`, so the requests get the CPU.
   */
  yieldToApi?: () => boolean;
}

/** The batch size of each poller: `concurrency` jobs in all, at most `batchSize` a fetch. */
export function pollerBatches(concurrency: number, batchSize: number): number[] {
  const size = Math.max(1, Math.min(batchSize, concurrency));
  const batches: number[] = [];
  for (let left = concurrency; left > 0; left -= size) batches.push(Math.min(size, left));
  return batches;
}

/** How often a turn held back by yieldToApi looks again. */
const YIELD_POLL_MS = 25;

export class TurnWorker {
  readonly #o: TurnWorkerOptions;
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Turns running their engine now. */
  #running = 0;

  constructor(opts: TurnWorkerOptions) {
    this.#o = opts;
  }

  /**
   * Pollers of `batchSize` jobs each (the last one takes the remainder), `concurrency` jobs in all.
   * A batch costs one fetch and one completion statement however many jobs it holds: with two a
   * fetch, a burst of first contacts drained 9–20 % faster (docs/PERFORMANCE.md, "Burst drain").
   * The price: a poller fetches again only when every turn of its batch has ended, so a slow turn
   * (a model call) keeps its batch's other slots idle meanwhile; hence batches of one by default.
   *
   * pg-boss sleeps for the poll interval after every fetch once NOTIFY wake-ups stop, so a backlog
   * drained at concurrency / poll interval jobs a second (4/s with the defaults) however fast each
   * turn was. So a poller whose fetch found jobs asks pg-boss to fetch again at once when its turns
   * end: while jobs are ready it keeps taking them, and only a fetch that finds nothing waits for
   * the poll or a NOTIFY.
   */
  async start(): Promise<void> {
    for (const batchSize of pollerBatches(this.#o.concurrency, this.#o.batchSize ?? 1)) {
      const registered: Promise<string> = this.#o.boss.work<unknown>(
        AGENT_TURN_QUEUE,
        {
          localConcurrency: 1,
          batchSize,
          perJobResults: true,
          // For sourceRootId: a retried dead letter keeps its turn id in the logs (turnIdOf).
          includeMetadata: true,
          // pg-boss's defaults (2 s, and 30 s while NOTIFY works) would leave a retry whose back-off
          // has passed waiting up to 30 s: nothing announces it.
          pollingIntervalSeconds: this.#o.pollSeconds ?? 2,
          notifyPollingIntervalSeconds: this.#o.pollSeconds ?? 2,
        },
        async (jobs) => {
          const results = await Promise.all(jobs.map((job) => this.#track(this.runJob(job))));
          // work() has resolved long before a fetch returns; the id is this worker's own.
          if (jobs.length > 0) this.#o.boss.notifyWorker(await registered);
          return results;
        },
      );
      await registered;
    }
  }

  /** Runs one job's turn and says how pg-boss should settle it. Never throws. */
  async runJob(job: Job<unknown>): Promise<JobResult> {
    this.#o.onJobStart?.(job);
    // The id `jobs dead` lists and `jobs retry` takes, also after a retry from the dead letters.
    const jobId = turnIdOf(job);
    const parsed = jobData.safeParse(job.data);
    if (!parsed.success) {
      this.#o.log.error({ jobId }, 'agent-turn job without a valid leadId');
      return { id: job.id, status: 'deadletter', output: { reason: 'job data has no valid leadId' } };
    }
    const leadId = parsed.data.leadId;
    if (!(await this.#turnToRun(job.signal))) return { id: job.id, status: 'failed', output: { reason: 'stopped while waiting to run' } };
    let result: TurnJobResult;
    try {
      result = await this.#o.engine.run(leadId, job.signal);
    } catch (err) {
      this.#o.log.error({ err, jobId, leadId, attempt: job.retryCount }, 'agent turn failed');
      result = { kind: 'retry', reason: (err as Error).message ?? String(err) };
    } finally {
      this.#running -= 1;
    }
    this.#o.log.info({ jobId, leadId, attempt: job.retryCount, result: result.kind, ...('outcome' in result ? { outcome: result.outcome } : {}) }, 'agent turn');
    switch (result.kind) {
      case 'done':
        return { id: job.id, status: 'completed', output: { outcome: result.outcome } };
      case 'retry':
        return { id: job.id, status: 'failed', output: { reason: result.reason } };
      case 'dead':
        // An operator must act: the line names the job `leadintake jobs retry` takes once the cause is fixed.
        this.#o.log.warn({ jobId, leadId, reason: scrubText(result.reason) }, `agent turn dead-lettered; once fixed: leadintake jobs retry ${jobId}`);
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
      const jobs = await boss.fetch<unknown>(AGENT_TURN_QUEUE, { batchSize: 20, includeMetadata: true, ...(opts.ignoreBackoff ? { ignoreStartAfter: true } : {}) });
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

  /**
   * Under pressure (docs/RELIABILITY.md, "Overload"), a turn waits until no other turn of this
   * process runs: a flood of requests then shares the process and PostgreSQL with one turn, not
   * with `concurrency` of them, and the first contacts still go out, one at a time, until the
   * flood is over. True: the turn may run, and counts as running (the caller ends it). False when
   * the job was stopped (shutdown, expiry) while it waited.
   */
  async #turnToRun(signal: AbortSignal | undefined): Promise<boolean> {
    const yieldToApi = this.#o.yieldToApi;
    while (yieldToApi && this.#running > 0 && yieldToApi()) {
      if (signal?.aborted) return false;
      await new Promise((resolve) => setTimeout(resolve, YIELD_POLL_MS));
    }
    if (signal?.aborted) return false;
    // Counted in the same synchronous step as the check above: two turns cannot both see none running.
    this.#running += 1;
    return true;
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

import type { Job, JobResult, PgBoss } from 'pg-boss';
import { z } from 'zod';
import { listDeadTurns, turnIdOf } from '../jobs/dead-letters.ts';
import { AGENT_TURN_QUEUE, attemptsLeft } from '../jobs/queues.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
import type { TurnJobResult } from './turn-context.ts';
import type { TurnEngine } from './turn-engine.ts';
import { TURN_FAILED } from './turn-rules.ts';

// Runs `agent-turn` jobs (pg-boss, woken by LISTEN/NOTIFY, heartbeats from the queue's policy in
// src/jobs/queues.ts). Each job names a lead; the engine does whatever that lead needs. Outcomes
// map to pg-boss: done → completed, retry → failed (retried with exponential back-off), dead →
// straight to the dead-letter queue (an operator must act; `leadintake jobs retry` re-runs it).
// A retry that must wait a given time (a model server's Retry-After, a workspace's model calls all
// in use or its circuit breaker open: src/agent/model-gate.ts) completes the job and sends its
// successor with `startAfter` and the retries left, so no worker sleeps through the wait; the last
// attempt is told to the engine, which then hands the lead to a person instead of failing again.

const jobData = z.object({ leadId: z.uuid(), workspaceId: z.uuid().optional() });
const leadIdOf = (job: Job<unknown>): string | null => jobData.safeParse(job.data).data?.leadId ?? null;

export interface TurnWorkerOptions {
  boss: PgBoss;
  engine: TurnEngine;
  log: Logger;
  /** Turns this process runs at once (a batch of first contacts counts as one: it runs on one connection). */
  concurrency: number;
  /**
   * Jobs each of the `concurrency` pollers takes a fetch (WORKER_BATCH_SIZE, default 8). The first
   * contacts among them run together; the others one by one within the `concurrency` limit. A
   * poller fetches again once every job of its batch has ended.
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

/** How often a turn held back by yieldToApi looks again. */
const YIELD_POLL_MS = 25;
/** How often the dead-letter queue is looked at for leads left waiting (dead-turns.ts). */
const DEAD_TURN_SWEEP_MS = 60_000;

export class TurnWorker {
  readonly #o: TurnWorkerOptions;
  readonly #inFlight = new Set<Promise<unknown>>();
  /** Turns (or batches of first contacts) running their engine now. */
  #running = 0;
  /** Turns waiting for one of the `concurrency` slots; woken when one ends. */
  #waiting: (() => void)[] = [];

  constructor(opts: TurnWorkerOptions) {
    this.#o = opts;
  }

  /**
   * `concurrency` pollers of up to `batchSize` jobs each: while turns trickle in, each poller holds
   * one slow turn (a model call) and `concurrency` of them run at once, as with batches of one; in
   * a burst of new leads, each fetch brings a batch whose first contacts cost one lock, one read,
   * one insert, one fetch and one completion statement together
   * (docs/decisions/0004-record-sends-by-set.md: about a third of the CPU per lead in a burst).
   * Turns never exceed `concurrency` at once, so neither do the connections they hold.
   *
   * pg-boss sleeps for the poll interval after every fetch once NOTIFY wake-ups stop, so a backlog
   * drained at concurrency / poll interval jobs a second (4/s with the defaults) however fast each
   * turn was. So a poller whose fetch found jobs asks pg-boss to fetch again at once when its turns
   * end: while jobs are ready it keeps taking them, and only a fetch that finds nothing waits for
   * the poll or a NOTIFY.
   */
  async start(): Promise<void> {
    for (let i = 0; i < this.#o.concurrency; i++) {
      const registered: Promise<string> = this.#o.boss.work<unknown>(
        AGENT_TURN_QUEUE,
        {
          localConcurrency: 1,
          batchSize: this.#o.batchSize ?? 8,
          perJobResults: true,
          // For sourceRootId: a retried dead letter keeps its turn id in the logs (turnIdOf).
          includeMetadata: true,
          // pg-boss's defaults (2 s, and 30 s while NOTIFY works) would leave a retry whose back-off
          // has passed waiting up to 30 s: nothing announces it.
          pollingIntervalSeconds: this.#o.pollSeconds ?? 2,
          notifyPollingIntervalSeconds: this.#o.pollSeconds ?? 2,
        },
        async (jobs) => {
          const results = await this.#track(
            jobs.length > 1 ? this.runBatch(jobs) : Promise.all(jobs.map((job) => this.runJob(job))),
          );
          // work() has resolved long before a fetch returns; the id is this worker's own.
          if (jobs.length > 0) this.#o.boss.notifyWorker(await registered);
          return results;
        },
      );
      await registered;
    }
    void this.sweepDeadTurns();
    const sweep = setInterval(() => void this.sweepDeadTurns(), DEAD_TURN_SWEEP_MS);
    sweep.unref();
    this.#o.boss.once('stopped', () => clearInterval(sweep));
  }

  /**
   * A fetched batch: the first contacts among its leads are done together (one lock, read and
   * insert for all, the sends side by side: TurnEngine.runFirstContacts); every other job, and a
   * lead the batch did not take, runs on its own afterwards, as runJob. Never throws.
   */
  async runBatch(jobs: Job<unknown>[]): Promise<JobResult[]> {
    for (const job of jobs) this.#o.onJobStart?.(job);
    const leadIds = jobs.map(leadIdOf);
    // A job on its last attempt runs on its own (runJob): a send that fails then hands the lead over.
    const batched = jobs.map((job, i) => leadIds[i] !== null && attemptsLeft(job) !== 0);
    const valid = leadIds.filter((id, i): id is string => batched[i]!);
    const signal = AbortSignal.any(jobs.map((job) => job.signal));
    let batch = new Map<string, TurnJobResult>();
    if (valid.length > 1 && (await this.#turnToRun(signal))) {
      try {
        batch = await this.#o.engine.runFirstContacts(valid, signal);
      } catch (err) {
        this.#o.log.error({ err, leads: valid.length }, 'first contacts in a batch failed; each lead runs on its own');
      } finally {
        this.#turnEnded();
      }
    }
    // A lead named by two jobs of the batch: the first one's job has the batch's result.
    return Promise.all(
      jobs.map((job, i) => {
        const result = batched[i] ? batch.get(leadIds[i]!) : undefined;
        if (!result) return this.runJob(job, { started: true });
        batch.delete(leadIds[i]!);
        return this.#settle(job, leadIds[i]!, result);
      }),
    );
  }

  /** Runs one job's turn and says how pg-boss should settle it. Never throws. */
  async runJob(job: Job<unknown>, opts: { started?: boolean } = {}): Promise<JobResult> {
    if (!opts.started) this.#o.onJobStart?.(job);
    const leadId = leadIdOf(job);
    if (!leadId) {
      this.#o.log.error({ jobId: turnIdOf(job) }, 'agent-turn job without a valid leadId');
      return { id: job.id, status: 'deadletter', output: { reason: 'job data has no valid leadId' } };
    }
    if (!(await this.#turnToRun(job.signal)))
      return { id: job.id, status: 'failed', output: { reason: 'stopped while waiting to run' } };
    let result: TurnJobResult;
    const lastAttempt = attemptsLeft(job) === 0;
    try {
      result = await this.#o.engine.run(leadId, job.signal, { lastAttempt });
    } catch (err) {
      this.#o.log.error({ err, jobId: turnIdOf(job), leadId, attempt: job.retryCount }, 'agent turn failed');
      result = { kind: 'retry', reason: (err as Error).message ?? String(err) };
      // No retry left: the lead goes to a person, and the job to the dead-letter queue. Should
      // the hand-over fail too, the failed job is dead-lettered by pg-boss all the same.
      if (lastAttempt) result = await this.#handOver(job, leadId, result.reason);
    } finally {
      this.#turnEnded();
    }
    return this.#settle(job, leadId, result);
  }

  /** The last attempt's error: `dead` once the lead is handed over, else the retry pg-boss dead-letters. */
  async #handOver(job: Job<unknown>, leadId: string, reason: string): Promise<TurnJobResult> {
    try {
      await this.#o.engine.handOverFailedTurn(leadId, reason);
      return { kind: 'dead', reason };
    } catch (err) {
      this.#o.log.error({ err, jobId: turnIdOf(job), leadId }, 'handing a failed agent turn over failed');
      return { kind: 'retry', reason };
    }
  }

  /** The turn's result as pg-boss settles it, with the job's log line. */
  async #settle(job: Job<unknown>, leadId: string, result: TurnJobResult): Promise<JobResult> {
    // The id `jobs dead` lists and `jobs retry` takes, also after a retry from the dead letters.
    const jobId = turnIdOf(job);
    this.#o.log.info(
      {
        jobId,
        leadId,
        attempt: job.retryCount,
        result: result.kind,
        ...('outcome' in result ? { outcome: result.outcome } : {}),
      },
      'agent turn',
    );
    switch (result.kind) {
      case 'done':
        return { id: job.id, status: 'completed', output: { outcome: result.outcome } };
      case 'retry':
        if (result.afterMs !== undefined) return this.#reschedule(job, leadId, { ...result, afterMs: result.afterMs });
        return { id: job.id, status: 'failed', output: { reason: result.reason } };
      case 'dead':
        // An operator must act: the line names the job `leadintake jobs retry` takes once the cause is fixed.
        this.#o.log.warn(
          { jobId, leadId, reason: scrubText(result.reason) },
          `agent turn dead-lettered; once fixed: leadintake jobs retry ${jobId}`,
        );
        return { id: job.id, status: 'deadletter', output: { reason: result.reason } };
    }
  }

  /**
   * The job again after `afterMs` (at least a second: pg-boss counts in seconds), as a successor
   * with the retries this one has left (one fewer unless the attempt was not spent). A successor
   * that cannot be sent leaves this job to pg-boss's own retry.
   */
  async #reschedule(
    job: Job<unknown>,
    leadId: string,
    r: { reason: string; afterMs: number; keepAttempt?: boolean },
  ): Promise<JobResult> {
    const jobId = turnIdOf(job);
    const retryLimit = Math.max(0, (attemptsLeft(job) ?? 0) - (r.keepAttempt ? 0 : 1));
    const startAfter = Math.max(1, Math.ceil(r.afterMs / 1000));
    try {
      const next = await this.#o.boss.send(AGENT_TURN_QUEUE, job.data as object, { startAfter, retryLimit });
      const line = {
        jobId,
        leadId,
        next,
        afterSeconds: startAfter,
        retriesLeft: retryLimit,
        reason: scrubText(r.reason),
      };
      this.#o.log.warn(line, 'agent turn rescheduled');
      return { id: job.id, status: 'completed', output: { rescheduled: next, afterSeconds: startAfter } };
    } catch (err) {
      this.#o.log.error({ err, jobId, leadId }, 'rescheduling an agent turn failed; pg-boss retries it');
      return { id: job.id, status: 'failed', output: { reason: r.reason } };
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
      const jobs = await boss.fetch<unknown>(AGENT_TURN_QUEUE, {
        batchSize: 20,
        includeMetadata: true,
        ...(opts.ignoreBackoff ? { ignoreStartAfter: true } : {}),
      });
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
   * Waits for one of the `concurrency` slots. Under pressure (docs/RELIABILITY.md, "Overload"), a
   * turn also waits until no other turn of this process runs: a flood of requests then shares the
   * process and PostgreSQL with one turn, not with `concurrency` of them, and the first contacts
   * still go out, one batch at a time, until the flood is over. True: the turn may run, and counts
   * as running (the caller ends it with #turnEnded). False when the job was stopped (shutdown,
   * expiry) while it waited.
   */
  async #turnToRun(signal: AbortSignal | undefined): Promise<boolean> {
    for (;;) {
      if (signal?.aborted) return false;
      const yielding = this.#running > 0 && this.#o.yieldToApi?.() === true;
      // Counted in the same synchronous step as the check: two turns cannot both take the last slot.
      if (!yielding && this.#running < this.#o.concurrency) {
        this.#running += 1;
        return true;
      }
      // A slot is announced when a turn ends; pressure and a stop are looked at again every 25 ms.
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, YIELD_POLL_MS);
        this.#waiting.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  #turnEnded(): void {
    this.#running -= 1;
    const waiting = this.#waiting;
    this.#waiting = [];
    for (const wake of waiting) wake();
  }

  /**
   * Hands the leads of dead-lettered turns that still wait to a person (dead-turns.ts): at start
   * and every minute. Returns how many went; never throws.
   */
  async sweepDeadTurns(): Promise<number> {
    try {
      const handed = await this.#o.engine.handOverDeadTurns(await listDeadTurns(this.#o.boss));
      for (const t of handed)
        this.#o.log.warn(
          { jobId: t.id, leadId: t.leadId, outcome: TURN_FAILED },
          `dead-lettered agent turn: its lead went to a person; once fixed: leadintake jobs retry ${t.id}`,
        );
      return handed.length;
    } catch (err) {
      this.#o.log.warn({ err }, 'looking for dead-lettered agent turns failed');
      return 0;
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

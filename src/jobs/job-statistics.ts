import type { Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';

// Keeps PostgreSQL's statistics of pg-boss's job table in step with a burst (docs/PERFORMANCE.md,
// "Burst drain"). pg-boss settles a job with an UPDATE joined to a JSON recordset of ids; planned
// on statistics taken while the table held a few dozen jobs, that join reads every job of the
// queue (a hash join over a scan of the queue's rows, 22 ms at 10,000 jobs) instead of looking
// each id up in the primary key (0.1 ms): every completion of a burst grew slower with the
// backlog. Autovacuum would analyze the table, but only after its next look (a minute by
// default), which is the length of a whole burst. So the relay, which creates the jobs, analyzes
// the table itself once it has created many since the last time.

/** Jobs created since the last ANALYZE that make another worth it. */
export const ANALYZE_AFTER_JOBS = 1000;
/** At most one ANALYZE per this many milliseconds (each samples up to 30,000 rows). */
export const ANALYZE_INTERVAL_MS = 5_000;

export class JobStatistics {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #log: Logger;
  #created = 0;
  #last = Number.NEGATIVE_INFINITY;
  #running: Promise<void> | null = null;

  constructor(opts: { db: Queryable; clock: Clock; log: Logger }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log;
  }

  /** Notes `n` new jobs; starts an ANALYZE in the background when it is due. Returns it (tests await it). */
  created(n: number): Promise<void> | null {
    this.#created += n;
    const now = this.#clock().getTime();
    if (this.#running || this.#created < ANALYZE_AFTER_JOBS || now - this.#last < ANALYZE_INTERVAL_MS) return null;
    this.#created = 0;
    this.#last = now;
    // pgboss.job is partitioned: ANALYZE of the parent takes every queue's partition with it.
    this.#running = this.#db
      .query('ANALYZE pgboss.job')
      .then(() => undefined, (err: unknown) => this.#log.warn({ err }, 'could not analyze the job table'))
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}

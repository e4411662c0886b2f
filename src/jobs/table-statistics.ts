import type { Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';

// Keeps PostgreSQL's statistics of pg-boss's job table in step with a burst of jobs
// (docs/decisions/0010-analyze-the-job-table.md). pg-boss settles a job with an UPDATE joined to a
// JSON recordset of ids, and PostgreSQL keeps the plan of a statement it has run five times for as
// long as the connection lives: planned while the table held a few dozen jobs, the join reads every
// job of the queue instead of looking each id up. Only an ANALYZE of the table makes PostgreSQL
// drop that plan, and autovacuum analyzes a table a minute after it grew at the earliest; a job
// table's jobs come and go (a burst's backlog is created, then completed), so the relay, which
// creates every job, has it analyzed by time while jobs are being created.

/** Jobs created since the last ANALYZE that make another one worth it. */
export const ANALYZE_AFTER_JOBS = 1000;
/** The job table is analyzed at most once per this many milliseconds. */
export const JOB_TABLE_INTERVAL_MS = 5_000;
/** default_statistics_target of these ANALYZEs: 300 × this many rows sampled. */
export const SAMPLE_TARGET = 10;

export class TableStatistics {
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

  /** Notes `n` new jobs; starts the ANALYZE in the background when it is due. Returns it (tests await it). */
  created(n: number): Promise<void> | null {
    this.#created += n;
    const now = this.#clock().getTime();
    if (this.#running || this.#created < ANALYZE_AFTER_JOBS || now - this.#last < JOB_TABLE_INTERVAL_MS) return null;
    this.#created = 0;
    this.#last = now;
    // pgboss.job is partitioned: ANALYZE of the parent takes every queue's partition with it. The
    // plan needs the table's size and a rough shape, not the detail of a full ANALYZE, so it
    // samples a tenth of the default (a tenth of the time). Autovacuum's own ANALYZE brings the
    // full detail back. SET LOCAL ends with the statement string's implicit transaction.
    this.#running = this.#db
      .query(`SET LOCAL default_statistics_target = ${SAMPLE_TARGET}; ANALYZE pgboss.job`)
      .then(() => undefined)
      .catch((err: unknown) => this.#log.warn({ err }, 'could not analyze the job table'))
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }
}

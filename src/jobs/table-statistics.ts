import type { Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';

// Keeps PostgreSQL's statistics of the tables a burst of leads grows in step with it
// (docs/PERFORMANCE.md, "Young tables"). A plan made while a table held a few rows reads the whole
// table, and PostgreSQL keeps such a plan for as long as the connection lives: a statement it has
// run five times gets a generic plan, and foreign-key checks and PL/pgSQL triggers keep theirs the
// same way. On a young table a generic plan for `WHERE id = $1` is a scan of every row — the
// cheapest plan for one page, and every lead after it pays for the table's whole growth:
// - pg-boss settles a job with an UPDATE joined to a JSON recordset of ids; planned while the
//   table held a few dozen jobs, the join read every job of the queue (22 ms at 10,000 jobs)
//   instead of looking each id up (0.1 ms);
// - each new lead's timeline entry checked its lead (the foreign key, and the outbound webhooks'
//   trigger) by reading every lead: on a fresh database POST ran at half its rate until
//   autovacuum came by.
// Only an ANALYZE of the table makes PostgreSQL drop those plans, and autovacuum analyzes a table
// a minute after it grew at the earliest — the length of a whole burst. So the relay, which sees
// every new lead and job, has these tables analyzed while they are young.

/** Jobs created since the last look that make another look worth it. */
export const ANALYZE_AFTER_JOBS = 1000;
/** At most one look per this many milliseconds: a look is one catalog query, and ANALYZE of a young table a few milliseconds. */
export const LOOK_INTERVAL_MS = 1_000;
/** pg-boss's job table is analyzed at most once per this many milliseconds while jobs are created. */
export const JOB_TABLE_INTERVAL_MS = 5_000;
/**
 * A table of ours is analyzed once the rows changed since its last ANALYZE outnumber both this
 * and the rows it had then: while it grows from nothing that is at 1,000 rows, then each time it
 * doubles; past some tens of thousands of rows autovacuum's own threshold (a tenth) comes first,
 * so a large table is left to it.
 */
export const GROWTH_ROWS = 1000;

/** default_statistics_target of these ANALYZEs: 300 × this many rows sampled a table. */
export const SAMPLE_TARGET = 10;

/** The tables each lead adds rows to, and that per-lead statements look rows up in. */
export const GROWING_TABLES = ['leads', 'lead_events', 'lead_funnel', 'agent_turns', 'whatsapp_messages', 'call_sessions', 'integration_events'] as const;

const DUE_TABLES = `SELECT s.relname AS name
   FROM pg_stat_user_tables s JOIN pg_class c ON c.oid = s.relid
  WHERE s.schemaname = current_schema() AND s.relname = ANY($1::text[])
    AND s.n_mod_since_analyze > greatest($2::float8, c.reltuples)`;

export class TableStatistics {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #log: Logger;
  #created = 0;
  #last = Number.NEGATIVE_INFINITY;
  #jobTableLast = Number.NEGATIVE_INFINITY;
  #running: Promise<void> | null = null;

  constructor(opts: { db: Queryable; clock: Clock; log: Logger }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#log = opts.log;
  }

  /** Notes `n` new jobs; starts the look (and the ANALYZE) in the background when it is due. Returns it (tests await it). */
  created(n: number): Promise<void> | null {
    this.#created += n;
    const now = this.#clock().getTime();
    if (this.#running || this.#created < ANALYZE_AFTER_JOBS || now - this.#last < LOOK_INTERVAL_MS) return null;
    this.#created = 0;
    this.#last = now;
    const jobTable = now - this.#jobTableLast >= JOB_TABLE_INTERVAL_MS;
    if (jobTable) this.#jobTableLast = now;
    this.#running = this.#analyze(jobTable)
      .catch((err: unknown) => this.#log.warn({ err }, 'could not analyze the job and lead tables'))
      .finally(() => {
        this.#running = null;
      });
    return this.#running;
  }

  async #analyze(jobTable: boolean): Promise<void> {
    const { rows } = await this.#db.query<{ name: string }>(DUE_TABLES, [GROWING_TABLES, GROWTH_ROWS]);
    const grown = new Set(rows.map((r) => r.name));
    // The names come from GROWING_TABLES, never from the database's answer alone.
    const due: string[] = GROWING_TABLES.filter((t) => grown.has(t));
    // pgboss.job is partitioned: ANALYZE of the parent takes every queue's partition with it. Its
    // jobs come and go (a burst's backlog is created, then completed), so it is analyzed by time
    // while jobs are being created, not by its growth.
    if (jobTable) due.unshift('pgboss.job');
    // What these plans need is the tables' sizes and a rough shape, not the detail of a full
    // ANALYZE: sampling 3,000 rows instead of 30,000 (and sorting them per column, JSON columns
    // included) took an ANALYZE of 62,000 jobs from 227 to 22 ms (of 62,000 leads, 99 to 10 ms),
    // while the job table is analyzed every 5 s of a burst. Autovacuum's own ANALYZE of a grown
    // table brings the full detail back. SET LOCAL ends with the statement string's implicit
    // transaction.
    if (due.length > 0) await this.#db.query(`SET LOCAL default_statistics_target = ${SAMPLE_TARGET}; ANALYZE ${due.join(', ')}`);
  }
}

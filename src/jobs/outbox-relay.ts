import type { PgBoss } from 'pg-boss';
import type { Pool } from '../db/pool.ts';
import { systemClock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { TableStatistics } from './table-statistics.ts';

const BATCH = 500;

/**
 * Moves outbox rows into pg-boss. Requests only INSERT into the outbox, inside their own
 * transaction (cheap); this relay, outside any request, deletes a batch of rows and inserts
 * the matching jobs in one transaction of its own, so a row becomes exactly one job and no
 * job exists without its row having been committed. It is woken at once after each commit in
 * this process and polls every `pollMs` as a safety net (rows left by a process that died
 * between its commit and its relay, or written by another process).
 */
export class OutboxRelay {
  readonly #pool: Pool;
  readonly #boss: PgBoss;
  readonly #log: Logger;
  readonly #pollMs: number;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #again = false;
  readonly #statistics: TableStatistics;
  // Not started: wake() does nothing, so tests move rows only when they call drain().
  #stopped = true;

  constructor(opts: { pool: Pool; boss: PgBoss; log: Logger; pollMs: number }) {
    this.#pool = opts.pool;
    this.#boss = opts.boss;
    this.#log = opts.log;
    this.#pollMs = opts.pollMs;
    this.#statistics = new TableStatistics({ db: opts.pool, clock: systemClock, log: opts.log });
  }

  /**
   * The process's pg-boss handle, for the dashboard's dead letters (src/admin/dead-letter-admin.ts):
   * the app reaches pg-boss only through the relay, so one handle serves both.
   */
  get boss(): PgBoss {
    return this.#boss;
  }

  start(): void {
    this.#stopped = false;
    this.#timer = setInterval(() => this.wake(), this.#pollMs);
    this.#timer.unref();
    this.wake();
  }

  /** Runs the relay soon; calls while it runs coalesce into one more pass. */
  wake(): void {
    if (this.#stopped) return;
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.#loop().finally(() => {
      this.#running = undefined;
    });
  }

  /** Relays until the outbox is empty; returns how many jobs were created. For tests and shutdown. */
  async drain(): Promise<number> {
    await this.#running;
    let total = 0;
    for (let n = await this.relayBatch(); n > 0; n = await this.relayBatch()) total += n;
    return total;
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    await this.#running;
  }

  async #loop(): Promise<void> {
    do {
      this.#again = false;
      try {
        while ((await this.relayBatch()) === BATCH) {}
      } catch (err) {
        this.#log.error({ err }, 'outbox relay failed; will retry at the next poll');
        return;
      }
    } while (this.#again && !this.#stopped);
  }

  /** Moves one batch; returns its size. */
  async relayBatch(): Promise<number> {
    const client = await this.#pool.connect();
    // Set when ROLLBACK fails: the connection is gone or in an unknown state; the pool drops it.
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const { rows } = await client.query(
        `DELETE FROM outbox WHERE id IN (SELECT id FROM outbox ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED)
         RETURNING id, job_id, queue, payload, start_after`,
        [BATCH],
      );
      const byQueue = new Map<string, { id: string; data: object; startAfter?: Date }[]>();
      for (const r of rows) {
        const list = byQueue.get(r.queue) ?? [];
        // A row may wait (a contact plan's next attempt): pg-boss holds the job until then.
        list.push({ id: r.job_id, data: r.payload, ...(r.start_after ? { startAfter: r.start_after } : {}) });
        byQueue.set(r.queue, list);
      }
      const db = { executeSql: (text: string, values?: unknown[]) => client.query(text, values) };
      for (const [queue, jobs] of byQueue) await this.#boss.insert(queue, jobs, { db });
      await client.query('COMMIT');
      if (rows.length > 0) void this.#statistics.created(rows.length);
      return rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.release(broken);
    }
  }
}

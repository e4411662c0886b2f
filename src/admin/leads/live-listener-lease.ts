import crypto from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import os from 'node:os';
import type { Queryable } from '../../db/pool.ts';
import type { Logger } from '../../shared/logger.ts';

// This process's row in `live_listeners` (migration 019): while it has a live page open, the
// triggers' pg_notify runs; while no process has one, no transaction notifies (NOTIFY serialises
// commits database-wide). The row carries a lease, renewed well before it ends, so a process
// that dies without deleting it stops counting on its own.

const LEASE_SECONDS = 90;
const RENEW_MS = 30_000;
/** How long a new lease waits for the writes that were under way without it (see #writtenBefore). */
const IN_FLIGHT_WAIT_MS = 5_000;

export class ListenerLease {
  readonly #db: Queryable;
  readonly #log: Logger;
  readonly #lapsed: () => void;
  readonly #id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  #renewal: NodeJS.Timeout | null = null;
  // Writes are applied one after the other, in the order they were asked for.
  #chain: Promise<void> = Promise.resolve();

  /** `lapsed`: a renewal failed, or found that nothing had been notified for a while: pages must refetch. */
  constructor(db: Queryable, log: Logger, lapsed: () => void) {
    this.#db = db;
    this.#log = log;
    this.#lapsed = lapsed;
  }

  /**
   * Makes the row say what `wanted()` says when the write runs (not when it was asked for), so a
   * page that opens while the last one closes never ends with the row deleted. Resolves once the
   * triggers will notify every change a page's refetch cannot see yet, and rejects when the row
   * could not be written: a page must be told `ready` only then.
   */
  sync(wanted: () => boolean): Promise<void> {
    return this.#enqueue(async () => {
      if (wanted()) await this.#hold();
      else await this.#release();
    });
  }

  #enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const step = this.#chain.then(fn);
    this.#chain = step.then(
      () => {},
      () => {},
    );
    return step;
  }

  /** Writes the lease; says whether the triggers were notifying already (some lease, ours or not, was valid). */
  async #hold(): Promise<boolean> {
    const { rows } = await this.#db.query<{ watched: boolean }>(
      `WITH before AS (SELECT EXISTS (SELECT 1 FROM live_listeners WHERE until > now()) AS watched)
       INSERT INTO live_listeners (listener, until) VALUES ($1, now() + make_interval(secs => $2))
       ON CONFLICT (listener) DO UPDATE SET until = excluded.until
       RETURNING (SELECT watched FROM before)`,
      [this.#id, LEASE_SECONDS],
    );
    if (!this.#renewal) {
      this.#renewal = setInterval(() => void this.renew(), RENEW_MS);
      this.#renewal.unref();
    }
    const watched = rows[0]!.watched;
    if (!watched) await this.#writtenBefore();
    return watched;
  }

  async #release(): Promise<void> {
    if (this.#renewal) clearInterval(this.#renewal);
    this.#renewal = null;
    await this.#db.query('DELETE FROM live_listeners WHERE listener = $1', [this.#id]);
  }

  /**
   * A transaction that changed a lead before the lease was written ran its trigger unwatched, so it
   * announces nothing; if it commits after the page's refetch, the page never hears of it. Waits (a
   * bounded time) for the writing transactions of this database that were running when the lease
   * was committed (other databases of the server do not touch its leads).
   */
  async #writtenBefore(): Promise<void> {
    const { rows } = await this.#db.query<{ xids: string[] | null }>(
      `SELECT array_agg(backend_xid::text) AS xids FROM pg_stat_activity
        WHERE datname = current_database() AND backend_xid IS NOT NULL AND pid <> pg_backend_pid()`,
    );
    const xids = rows[0]?.xids ?? [];
    const deadline = Date.now() + IN_FLIGHT_WAIT_MS;
    while (xids.length > 0 && Date.now() < deadline) {
      const running = await this.#db.query(
        `SELECT 1 FROM pg_stat_activity
          WHERE datname = current_database() AND backend_xid::text = ANY($1::text[]) LIMIT 1`,
        [xids],
      );
      if (running.rowCount === 0) return;
      await sleep(20);
    }
  }

  /** Renews the lease (every RENEW_MS while held); calls `lapsed` when it fails or had lapsed. */
  async renew(): Promise<void> {
    try {
      const watched = await this.#enqueue(async () => (this.#renewal ? this.#hold() : true));
      if (watched) return;
      this.#log.warn('live updates: the listener lease had lapsed; pages refetch');
    } catch (err) {
      this.#log.warn({ err: (err as Error).message }, 'live updates: listener lease not renewed; pages refetch');
    }
    this.#lapsed();
  }
}

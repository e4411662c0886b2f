import crypto from 'node:crypto';
import os from 'node:os';
import type { Queryable } from '../../db/pool.ts';
import type { Logger } from '../../shared/logger.ts';

// This process's row in `live_listeners` (migration 019): while it has a live page open, the
// triggers' pg_notify runs; while no process has one, no transaction notifies (NOTIFY serialises
// commits database-wide). The row carries a lease, renewed well before it ends, so a process
// that dies without deleting it stops counting on its own.

const LEASE_SECONDS = 90;
const RENEW_MS = 30_000;

export class ListenerLease {
  readonly #db: Queryable;
  readonly #log: Logger;
  readonly #id = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString('hex')}`;
  #renewal: NodeJS.Timeout | null = null;
  // Writes are applied one after the other, in the order they were asked for.
  #chain: Promise<void> = Promise.resolve();

  constructor(db: Queryable, log: Logger) {
    this.#db = db;
    this.#log = log;
  }

  /**
   * Makes the row say what `wanted()` says when the write runs (not when it was asked for), so a
   * page that opens while the last one closes never ends with the row deleted. Resolves once
   * written: a page must be told `ready` only after the triggers will notify.
   */
  sync(wanted: () => boolean): Promise<void> {
    this.#chain = this.#chain
      .then(() => this.#write(wanted()))
      .catch((err: Error) => {
        this.#log.warn({ err: err.message }, 'live updates: listener lease not written');
      });
    return this.#chain;
  }

  async #write(on: boolean): Promise<void> {
    if (on) {
      await this.#db.query(
        `INSERT INTO live_listeners (listener, until) VALUES ($1, now() + make_interval(secs => $2))
         ON CONFLICT (listener) DO UPDATE SET until = excluded.until`,
        [this.#id, LEASE_SECONDS],
      );
      if (!this.#renewal) {
        this.#renewal = setInterval(() => void this.sync(() => this.#renewal !== null), RENEW_MS);
        this.#renewal.unref();
      }
    } else {
      if (this.#renewal) clearInterval(this.#renewal);
      this.#renewal = null;
      await this.#db.query('DELETE FROM live_listeners WHERE listener = $1', [this.#id]);
    }
  }
}

import type { Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';

export const WINDOW_SECONDS = 3600;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends (at least 1). */
  resetSeconds: number;
}

interface Waiter {
  resolve(d: RateLimitDecision): void;
  reject(err: unknown): void;
}

/**
 * Fixed hourly windows counted in PostgreSQL, so the limit holds across processes and
 * restarts. Every request is counted by an atomic `count = count + n` upsert, and PostgreSQL's
 * answer decides: with the count before the batch known exactly, the first `limit - before`
 * requests are admitted, the rest refused, so concurrent requests admit exactly `limit`.
 *
 * Requests for one key that arrive while its statement is in flight are counted together by
 * the next statement (group counting). A single hot counter row updated once per request
 * serialised every request of that key on its row lock; batching keeps the exactness and
 * spends one statement per batch instead (docs/PERFORMANCE.md).
 */
export class RateLimiter {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #queues = new Map<string, { limit: number; waiting: Waiter[]; busy: boolean }>();

  constructor(db: Queryable, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  consume(apiKeyId: string, limit: number): Promise<RateLimitDecision> {
    return new Promise((resolve, reject) => {
      let q = this.#queues.get(apiKeyId);
      if (!q) {
        q = { limit, waiting: [], busy: false };
        this.#queues.set(apiKeyId, q);
      }
      q.limit = limit;
      q.waiting.push({ resolve, reject });
      if (!q.busy) void this.#flush(apiKeyId, q);
    });
  }

  async #flush(apiKeyId: string, q: { limit: number; waiting: Waiter[]; busy: boolean }): Promise<void> {
    q.busy = true;
    while (q.waiting.length > 0) {
      const batch = q.waiting.splice(0);
      const limit = q.limit;
      const now = this.#clock().getTime();
      const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS * 1000;
      const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_SECONDS * 1000 - now) / 1000));
      try {
        const { rows } = await this.#db.query({
          name: 'rate-limit-count',
          text: `INSERT INTO rate_limit_counters AS c (api_key_id, window_start, count) VALUES ($1, $2, $3)
                 ON CONFLICT (api_key_id, window_start) DO UPDATE SET count = c.count + $3
                 RETURNING count`,
          values: [apiKeyId, new Date(windowStart), batch.length],
        });
        const before = rows[0].count - batch.length;
        batch.forEach((w, i) => {
          const used = before + i + 1;
          w.resolve({ allowed: used <= limit, limit, remaining: Math.max(0, limit - used), resetSeconds });
        });
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    q.busy = false;
    this.#queues.delete(apiKeyId);
  }

  /** Drops counters of windows that ended; called from the maintenance loop. */
  async prune(): Promise<void> {
    const cutoff = new Date(this.#clock().getTime() - 2 * WINDOW_SECONDS * 1000);
    await this.#db.query('DELETE FROM rate_limit_counters WHERE window_start < $1', [cutoff]);
  }
}

/** IETF draft-ietf-httpapi-ratelimit-headers fields for a decision. */
export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"hourly";q=${d.limit};w=${WINDOW_SECONDS}`,
    ratelimit: `"hourly";r=${d.remaining};t=${d.resetSeconds}`,
  };
}

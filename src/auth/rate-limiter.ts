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

/**
 * Fixed hourly windows counted in PostgreSQL, so the limit holds across processes and
 * restarts. One statement both counts and decides: the conditional upsert only increments
 * while the count is under the limit, so N concurrent requests admit exactly `limit`.
 */
export class RateLimiter {
  readonly #db: Queryable;
  readonly #clock: Clock;

  constructor(db: Queryable, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async consume(apiKeyId: string, limit: number): Promise<RateLimitDecision> {
    const now = this.#clock().getTime();
    const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS * 1000;
    const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_SECONDS * 1000 - now) / 1000));
    const { rows } = await this.#db.query({
      name: 'rate-limit-consume',
      text: `INSERT INTO rate_limit_counters AS c (api_key_id, window_start, count) VALUES ($1, $2, 1)
             ON CONFLICT (api_key_id, window_start) DO UPDATE SET count = c.count + 1 WHERE c.count < $3
             RETURNING count`,
      values: [apiKeyId, new Date(windowStart), limit],
    });
    const count: number | undefined = rows[0]?.count;
    if (count === undefined) return { allowed: false, limit, remaining: 0, resetSeconds };
    return { allowed: true, limit, remaining: Math.max(0, limit - count), resetSeconds };
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

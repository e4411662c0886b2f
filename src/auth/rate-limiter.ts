import { retryOnLostConnection, type Queryable } from '../db/pool.ts';
import { StatementBatcher } from '../db/statement-batcher.ts';
import type { Clock } from '../shared/clock.ts';

export const WINDOW_SECONDS = 3600;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends (at least 1). */
  resetSeconds: number;
}

/** One request to count: its key and the key's hourly limit (as the authenticator cached it). */
interface CountRequest {
  apiKeyId: string;
  limit: number;
}

/** Start (ms) of the fixed window that holds `ms`. */
const windowOf = (ms: number) => Math.floor(ms / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS * 1000;

// `$1` window start, `$2` key ids, `$3` how many requests of each; returns each key's count after
// them. Rows are locked in key order (the keys arrive sorted), so two processes counting
// overlapping keys cannot deadlock. The table is UNLOGGED: its commit waits for no WAL flush.
const COUNT = `INSERT INTO rate_limit_counters AS k (api_key_id, window_start, count)
  SELECT r.key, $1, r.size FROM unnest($2::uuid[], $3::int[]) AS r(key, size) ORDER BY r.key
  ON CONFLICT (api_key_id, window_start) DO UPDATE SET count = k.count + excluded.count
  RETURNING api_key_id, count`;

/**
 * Fixed hourly windows counted in PostgreSQL, so the limit holds across processes and restarts.
 * Every request is counted by an atomic `count = count + n` upsert, and PostgreSQL's answer
 * decides: with the count before the statement known exactly, the first `limit - before` requests
 * of a key are admitted and the rest refused, so concurrent requests admit exactly `limit`, from
 * any number of processes.
 *
 * The requests in flight in this process, of every key, are counted together: one statement for
 * what arrives while the previous one runs (src/db/statement-batcher.ts). With many workspaces,
 * each with its own key, a statement per key would count one request.
 */
export class RateLimiter {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #batch: StatementBatcher<CountRequest, RateLimitDecision>;

  constructor(db: Queryable, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
    // A lost connection is no request's fault: the whole batch is counted again on another
    // connection. A count that did commit before its answer was lost counts those requests twice.
    this.#batch = new StatementBatcher({ run: (requests) => retryOnLostConnection(() => this.#count(requests)) });
  }

  /** Counts one request of the key and says whether it is within the key's hourly limit. */
  admit(apiKeyId: string, limit: number): Promise<RateLimitDecision> {
    return this.#batch.submit({ apiKeyId, limit });
  }

  /** The key's quota as it stands, counting nothing: the RateLimit headers of a request that spends none. */
  async peek(apiKeyId: string, limit: number): Promise<RateLimitDecision> {
    const { windowStart, resetSeconds } = this.#window();
    const { rows } = await this.#db.query(
      'SELECT count FROM rate_limit_counters WHERE api_key_id = $1 AND window_start = $2',
      [apiKeyId, new Date(windowStart)],
    );
    const count = (rows[0]?.count as number | undefined) ?? 0;
    return { allowed: count < limit, limit, remaining: Math.max(0, limit - count), resetSeconds };
  }

  #window(): { windowStart: number; resetSeconds: number } {
    const now = this.#clock().getTime();
    const windowStart = windowOf(now);
    return { windowStart, resetSeconds: Math.max(1, Math.ceil((windowStart + WINDOW_SECONDS * 1000 - now) / 1000)) };
  }

  async #count(requests: CountRequest[]): Promise<RateLimitDecision[]> {
    const { windowStart, resetSeconds } = this.#window();
    // Each request's place among its key's requests in this statement (1-based).
    const sizes = new Map<string, number>();
    const places = requests.map((r) => {
      const n = (sizes.get(r.apiKeyId) ?? 0) + 1;
      sizes.set(r.apiKeyId, n);
      return n;
    });
    const ids = [...sizes.keys()].sort();
    const { rows } = await this.#db.query({
      name: 'rate-limit-count',
      text: COUNT,
      values: [new Date(windowStart), ids, ids.map((id) => sizes.get(id)!)],
    });
    const after = new Map<string, number>(
      rows.map((r: { api_key_id: string; count: number }) => [r.api_key_id, r.count]),
    );
    return requests.map((r, i) => {
      const count = after.get(r.apiKeyId);
      if (count === undefined) throw new Error('rate limit: a key of the batch was not counted');
      const position = count - sizes.get(r.apiKeyId)! + places[i]!;
      return { allowed: position <= r.limit, limit: r.limit, remaining: Math.max(0, r.limit - position), resetSeconds };
    });
  }
}

/** Drops the counters of windows that ended over an hour ago (a step of src/maintenance.ts). */
export async function pruneRateLimitCounters(db: Queryable): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM rate_limit_counters WHERE window_start < now() - make_interval(secs => $1)`,
    [2 * WINDOW_SECONDS],
  );
  return rowCount ?? 0;
}

/** IETF draft-ietf-httpapi-ratelimit-headers fields for a decision. */
export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"hourly";q=${d.limit};w=${WINDOW_SECONDS}`,
    ratelimit: `"hourly";r=${d.remaining};t=${d.resetSeconds}`,
  };
}

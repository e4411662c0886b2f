import type { Queryable } from '../db/pool.ts';
import { leadsByIdsSql, toLeadWithCall, type LeadWithCall } from '../leads/lead-queries.ts';
import type { Clock } from '../shared/clock.ts';

export const WINDOW_SECONDS = 3600;

const COUNT_CTE = `WITH c AS (
  INSERT INTO rate_limit_counters AS k (api_key_id, window_start, count) VALUES ($1, $2, $3)
  ON CONFLICT (api_key_id, window_start) DO UPDATE SET count = k.count + $3
  RETURNING count)`;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends (at least 1). */
  resetSeconds: number;
}

/**
 * A read answered by the same statement that counts the request (GET /api/public/leads/:id):
 * one round trip instead of two, and one for the whole batch instead of one per request.
 * A key belongs to one workspace, so every read of a batch shares it.
 */
export interface CountedRead {
  leadId: string;
  workspaceId: string;
  withCall: boolean;
}

export interface Admission {
  decision: RateLimitDecision;
  /** The lead of a CountedRead (null when it does not exist in the workspace); undefined without one. */
  lead?: LeadWithCall | null;
}

interface Waiter {
  read: CountedRead | undefined;
  resolve(a: Admission): void;
  reject(err: unknown): void;
}

interface KeyQueue {
  limit: number;
  waiting: Waiter[];
  busy: boolean;
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
 * spends one statement per batch instead. The same statement also reads the leads the batch's
 * GET requests ask for: on this machine every round trip to PostgreSQL costs the sender more
 * CPU than the rest of a GET (docs/PERFORMANCE.md).
 */
export class RateLimiter {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #queues = new Map<string, KeyQueue>();

  constructor(db: Queryable, clock: Clock) {
    this.#db = db;
    this.#clock = clock;
  }

  async consume(apiKeyId: string, limit: number): Promise<RateLimitDecision> {
    return (await this.admit(apiKeyId, limit)).decision;
  }

  /** Counts one request of the key and, in the same statement, runs its read if it has one. */
  admit(apiKeyId: string, limit: number, read?: CountedRead): Promise<Admission> {
    return new Promise((resolve, reject) => {
      let q = this.#queues.get(apiKeyId);
      if (!q) {
        q = { limit, waiting: [], busy: false };
        this.#queues.set(apiKeyId, q);
      }
      q.limit = limit;
      q.waiting.push({ read, resolve, reject });
      if (!q.busy) void this.#flush(apiKeyId, q);
    });
  }

  async #flush(apiKeyId: string, q: KeyQueue): Promise<void> {
    q.busy = true;
    while (q.waiting.length > 0) {
      const batch = q.waiting.splice(0);
      const limit = q.limit;
      const now = this.#clock().getTime();
      const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS * 1000;
      const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_SECONDS * 1000 - now) / 1000));
      try {
        const { count, leads } = await this.#countAndRead(apiKeyId, new Date(windowStart), batch);
        const before = count - batch.length;
        batch.forEach((w, i) => {
          const used = before + i + 1;
          const decision = { allowed: used <= limit, limit, remaining: Math.max(0, limit - used), resetSeconds };
          w.resolve(w.read ? { decision, lead: leads.get(w.read.leadId) ?? null } : { decision });
        });
      } catch (err) {
        for (const w of batch) w.reject(err);
      }
    }
    q.busy = false;
    this.#queues.delete(apiKeyId);
  }

  async #countAndRead(apiKeyId: string, windowStart: Date, batch: Waiter[]): Promise<{ count: number; leads: Map<string, LeadWithCall> }> {
    const reads = batch.flatMap((w) => (w.read ? [w.read] : []));
    const counted = [apiKeyId, windowStart, batch.length];
    if (reads.length === 0) {
      const { rows } = await this.#db.query({ name: 'rate-limit-count', text: `${COUNT_CTE} SELECT count FROM c`, values: counted });
      return { count: rows[0].count, leads: new Map() };
    }
    const withCall = reads.some((r) => r.withCall);
    const { rows } = await this.#db.query({
      name: withCall ? 'rate-limit-count-read-calls' : 'rate-limit-count-read',
      text: `${COUNT_CTE} SELECT c.count AS rate_limit_count, r.* FROM c
               LEFT JOIN LATERAL (${leadsByIdsSql('$4', '$5', withCall)}) r ON true`,
      values: [...counted, [...new Set(reads.map((r) => r.leadId))], reads[0]!.workspaceId],
    });
    const leads = new Map<string, LeadWithCall>();
    for (const { rate_limit_count: _count, ...row } of rows) {
      if (row.id) leads.set(row.id, toLeadWithCall(row));
    }
    return { count: rows[0].rate_limit_count, leads };
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

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

/** The counting part of a batch: `$1` key id, `$2` window start, `$3` how many requests. */
export interface CountParams {
  apiKeyId: string;
  windowStart: Date;
  size: number;
  limit: number;
}

/** The upsert every batch statement starts with; its CTE `c` returns the count after the batch. */
export const COUNT_CTE = `WITH c AS (
  INSERT INTO rate_limit_counters AS k (api_key_id, window_start, count) VALUES ($1, $2, $3)
  ON CONFLICT (api_key_id, window_start) DO UPDATE SET count = k.count + $3
  RETURNING count)`;

export function countValues(p: CountParams): unknown[] {
  return [p.apiKeyId, p.windowStart, p.size];
}

/**
 * What a batch runs besides counting, in the same statement. `ops[i]` belongs to the batch's
 * i-th request (undefined: it is only counted); the i-th request is admitted when
 * `count - size + i + 1 <= limit`, and a statement must not act for a refused request.
 */
export interface BatchStatement<Op, Out> {
  run(db: Queryable, count: CountParams, ops: ReadonlyArray<Op | undefined>): Promise<{ count: number; outputs: ReadonlyArray<Out | undefined> }>;
}

/** A batch that only counts. */
const countOnly: BatchStatement<never, never> = {
  async run(db, count) {
    const { rows } = await db.query({ name: 'rate-limit-count', text: `${COUNT_CTE} SELECT count FROM c`, values: countValues(count) });
    return { count: rows[0].count, outputs: [] };
  },
};

export interface Admission<Out> {
  decision: RateLimitDecision;
  /** The result of the request's op; undefined without one or when it was refused. */
  output?: Out;
}

interface Waiter<Op, Out> {
  op: Op | undefined;
  resolve(a: Admission<Out>): void;
  reject(err: unknown): void;
}

interface KeyQueue<Op, Out> {
  limit: number;
  waiting: Waiter<Op, Out>[];
  /**
   * One statement of a key in flight at a time: the requests that arrive meanwhile make the next
   * batch. Two or four in flight were measured slower (smaller batches, more statements per
   * request; docs/PERFORMANCE.md).
   */
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
 * spends one statement per batch instead. The same statement also does the batch's work (the
 * `BatchStatement`: reading the GETs' leads, inserting the POSTs'), because on this machine a
 * round trip to PostgreSQL costs more CPU than the rest of a request (docs/PERFORMANCE.md).
 */
export class RateLimiter<Op, Out> {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #statement: BatchStatement<Op, Out>;
  readonly #queues = new Map<string, KeyQueue<Op, Out>>();

  constructor(db: Queryable, clock: Clock, statement: BatchStatement<Op, Out>) {
    this.#db = db;
    this.#clock = clock;
    this.#statement = statement;
  }

  /** Counts one request of the key and, in the same statement, runs its op if it is admitted. */
  admit(apiKeyId: string, limit: number, op?: Op): Promise<Admission<Out>> {
    return new Promise((resolve, reject) => {
      let q = this.#queues.get(apiKeyId);
      if (!q) {
        q = { limit, waiting: [], busy: false };
        this.#queues.set(apiKeyId, q);
      }
      q.limit = limit;
      q.waiting.push({ op, resolve, reject });
      if (!q.busy) void this.#flush(apiKeyId, q);
    });
  }

  // Each statement's count is atomic and each batch is decided by the count its own statement
  // returned, so the limit stays exact also with several processes counting the same key.
  async #flush(apiKeyId: string, q: KeyQueue<Op, Out>): Promise<void> {
    q.busy = true;
    while (q.waiting.length > 0) {
      // Let the event loop finish its current pass first: the requests whose bytes arrived in
      // the same pass join this batch instead of waiting for the next statement. Under load that
      // doubled the batches at 64 connections and raised GET throughput (docs/PERFORMANCE.md).
      await new Promise((resolve) => setImmediate(resolve));
      const batch = q.waiting.splice(0);
      try {
        await this.#run(apiKeyId, q.limit, batch);
      } catch (err) {
        // The statement is atomic, so nothing of the batch was counted or done. One request's
        // data must not fail the others: each runs alone, and only its own failure is its answer.
        if (batch.length === 1) batch[0]!.reject(err);
        else for (const w of batch) await this.#run(apiKeyId, q.limit, [w]).catch((e) => w.reject(e));
      }
    }
    this.#queues.delete(apiKeyId);
  }

  async #run(apiKeyId: string, limit: number, batch: Waiter<Op, Out>[]): Promise<void> {
    const now = this.#clock().getTime();
    const windowStart = Math.floor(now / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS * 1000;
    const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_SECONDS * 1000 - now) / 1000));
    const ops = batch.map((w) => w.op);
    const params = { apiKeyId, windowStart: new Date(windowStart), size: batch.length, limit };
    const { count, outputs } = ops.some((op) => op !== undefined)
      ? await this.#statement.run(this.#db, params, ops)
      : await countOnly.run(this.#db, params, []);
    const before = count - batch.length;
    batch.forEach((w, i) => {
      const used = before + i + 1;
      const decision = { allowed: used <= limit, limit, remaining: Math.max(0, limit - used), resetSeconds };
      w.resolve(decision.allowed && outputs[i] !== undefined ? { decision, output: outputs[i] as Out } : { decision });
    });
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

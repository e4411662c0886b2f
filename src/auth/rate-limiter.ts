import { connectionFault, retryOnLostConnection, type Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';

export const WINDOW_SECONDS = 3600;

export interface RateLimitDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Whole seconds until the current window ends (at least 1). */
  resetSeconds: number;
}

/** One key's part of a batch: how many of its requests the statement counts, and its hourly limit. */
export interface KeyCount {
  apiKeyId: string;
  size: number;
  limit: number;
}

/**
 * A request's op in a batch: `key` indexes the batch's keys, `ord` is its 1-based place among that
 * key's requests. A request admitted from a lease was not counted by the batch: `key` is -1 and
 * its op runs without a count to check (`isAdmitted` is true for it).
 */
export interface BatchOp<Op> {
  key: number;
  ord: number;
  op: Op;
}

/**
 * The upsert every batch statement starts with: `$1` window start, `$2` key ids, `$3` how many
 * requests of each. Its CTE `c` returns each key's count after the batch. Rows are locked in
 * key order (the keys arrive sorted), so two processes counting overlapping keys cannot deadlock.
 */
export const COUNT_CTE = `WITH c AS (
  INSERT INTO rate_limit_counters AS k (api_key_id, window_start, count)
  SELECT r.key, $1, r.size FROM unnest($2::uuid[], $3::int[]) AS r(key, size) ORDER BY r.key
  ON CONFLICT (api_key_id, window_start) DO UPDATE SET count = k.count + excluded.count
  RETURNING api_key_id, count)`;

export function countValues(windowStart: Date, keys: readonly KeyCount[]): unknown[] {
  return [windowStart, keys.map((k) => k.apiKeyId), keys.map((k) => k.size)];
}

/** Whether the op's request is within its key's quota, given its key's count after the batch. */
export function isAdmitted(keys: readonly KeyCount[], counts: readonly number[], op: { key: number; ord: number }): boolean {
  if (op.key === -1) return true; // admitted from a lease before the statement ran
  const k = keys[op.key]!;
  return counts[op.key]! - k.size + op.ord <= k.limit;
}

/**
 * What a batch runs besides counting, in the same statement: `ops[i]` belongs to one request
 * (requests without an op are only counted). A request is admitted when
 * `count - size + ord <= limit` for its key (`isAdmitted`), and a statement must not act for a
 * refused request. Returns each key's count after the batch and each op's output.
 */
export interface BatchStatement<Op, Out> {
  run(db: Queryable, windowStart: Date, keys: readonly KeyCount[], ops: readonly BatchOp<Op>[]): Promise<{ counts: number[]; outputs: ReadonlyArray<Out | undefined> }>;
}

/** A batch that only counts. */
async function countOnly(db: Queryable, windowStart: Date, keys: readonly KeyCount[]): Promise<number[]> {
  const { rows } = await db.query({ name: 'rate-limit-count', text: `${COUNT_CTE} SELECT api_key_id, count FROM c`, values: countValues(windowStart, keys) });
  return countsInOrder(keys, rows);
}

/** Each key's count from rows of (api_key_id, count), in the order of `keys`. */
export function countsInOrder(keys: readonly KeyCount[], rows: ReadonlyArray<{ api_key_id: string; count: number }>): number[] {
  const byKey = new Map(rows.map((r) => [r.api_key_id, r.count]));
  return keys.map((k) => {
    const n = byKey.get(k.apiKeyId);
    if (n === undefined) throw new Error('rate limit: a key of the batch was not counted');
    return n;
  });
}

export interface Admission<Out> {
  decision: RateLimitDecision;
  /** The result of the request's op; undefined without one or when it was refused. */
  output?: Out;
}

/**
 * Positions of a key's count that this process reserved ahead (a lease), handed out to later
 * requests without a write. `next`…`end` are still free; `lastCount` is the key's count the last
 * statement returned, to decide whether the key is far enough from its limit to lease again.
 */
interface Lease {
  window: number;
  next: number;
  end: number;
  lastCount: number;
}

/** Start (ms) of the fixed window that holds `ms`. */
const windowOf = (ms: number) => Math.floor(ms / 1000 / WINDOW_SECONDS) * WINDOW_SECONDS * 1000;

/**
 * How many positions a key's lease reserves: none below a limit of 1,000 an hour, so a key with a
 * small limit is counted exactly as before; else one per 500 of the limit, at most 32. The
 * positions a process holds when the window ends (or when it stops) are never used: at most
 * this many requests per process and key and hour are refused below the limit
 * (docs/PERFORMANCE.md, "Many workspaces"). Never more than the limit is admitted.
 */
export function leaseSize(limit: number): number {
  const n = Math.min(32, Math.floor(limit / 500));
  return n >= 2 ? n : 0;
}

interface Waiter<Op, Out> {
  apiKeyId: string;
  limit: number;
  op: Op | undefined;
  /**
   * The position a lease gave the request (0: none), taken once: a batch split after a failed
   * statement runs it again with the same position, so no position of a lease is spent twice.
   */
  leased?: number;
  resolve(a: Admission<Out>): void;
  reject(err: unknown): void;
}

/**
 * Fixed hourly windows counted in PostgreSQL, so the limit holds across processes and
 * restarts. Every request is counted by an atomic `count = count + n` upsert (or takes a
 * position such an upsert reserved ahead for its key: a lease), and PostgreSQL's answer
 * decides: with the count before the batch known exactly, the first `limit - before` requests
 * of a key are admitted, the rest refused, so concurrent requests admit exactly `limit`.
 *
 * The requests in flight in this process — of every key and workspace — that arrive while the
 * previous statement runs are done together by the next one (group counting): it adds each
 * key's count to its counter row and does the admitted requests' work (the `BatchStatement`:
 * reading the GETs' leads, inserting the POSTs'), because on this machine a round trip to
 * PostgreSQL costs more CPU than the rest of a request (docs/PERFORMANCE.md). With many
 * workspaces, each with its own key, a batch per key would hold one request; a batch per
 * process holds as many as a single busy key's did.
 */
export class RateLimiter<Op, Out> {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #statement: BatchStatement<Op, Out>;
  #waiting: Waiter<Op, Out>[] = [];
  /**
   * Statements in flight. While `#maxInFlight` run, the requests that arrive make the next batch.
   * Two: a batch of new leads keeps one PostgreSQL backend busy for the whole statement (its
   * inserts, their triggers, the commit), so with one in flight PostgreSQL used one of the two
   * cores while the requests behind it waited; reads alone were measured no faster with two
   * (docs/PERFORMANCE.md, "Many workspaces").
   */
  #inFlight = 0;
  readonly #maxInFlight: number;
  /** A batch is being gathered: it starts once the event loop's current pass has run. */
  #gathering = false;
  readonly #leasable: (op: Op | undefined) => boolean;
  readonly #leases = new Map<string, Lease>();
  /** Keys whose lease a statement in flight is reserving: one lease at a time per key. */
  readonly #leasing = new Set<string>();

  /**
   * `leasable`: the requests that may be admitted from a lease (the public API leases all of
   * them: a leased request's op runs without a count, docs/API.md "Rate limit"). Without it
   * every request is counted by a statement.
   */
  constructor(db: Queryable, clock: Clock, statement: BatchStatement<Op, Out>, leasable: (op: Op | undefined) => boolean = () => false, maxInFlight = 2) {
    this.#db = db;
    this.#clock = clock;
    this.#statement = statement;
    this.#leasable = leasable;
    this.#maxInFlight = maxInFlight;
  }

  /** Counts one request of the key and, in the same statement, runs its op if it is admitted. */
  admit(apiKeyId: string, limit: number, op?: Op): Promise<Admission<Out>> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ apiKeyId, limit, op, resolve, reject });
      this.#pump();
    });
  }

  // Each statement's counts are atomic and each request is decided by the count its own
  // statement returned, so the limit stays exact with several statements in flight, as with
  // several processes counting a key.
  #pump(): void {
    if (this.#gathering || this.#inFlight >= this.#maxInFlight || this.#waiting.length === 0) return;
    // Let the event loop finish its current pass first: the requests whose bytes arrived in the
    // same pass join this batch instead of the next one. Under load that doubled the batches at
    // 64 connections and raised GET throughput (docs/PERFORMANCE.md).
    this.#gathering = true;
    setImmediate(() => {
      this.#gathering = false;
      if (this.#inFlight >= this.#maxInFlight || this.#waiting.length === 0) return;
      this.#inFlight += 1;
      void this.#settle(this.#waiting.splice(0)).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
      this.#pump();
    });
  }

  // The statement is atomic, so a failed one counted and did nothing. One request's data must
  // not fail the others: the batch is split in halves until the failing request runs alone, and
  // only its own failure is its answer (a few statements more, instead of one per request).
  // A lost connection is no request's fault: the whole batch is tried again on another connection
  // (retryOnLostConnection). That is safe: reads are reads, a lead whose insert did commit
  // although its answer was lost is a duplicate (409 with its id, which the spec tells clients to
  // treat as success), and a count that did commit only counts the requests twice. When no
  // connection can be had at all (refused, no answer), or the tries run out, every request of the
  // batch gets the error at once: split, it would only fail again, once per request.
  async #settle(batch: Waiter<Op, Out>[]): Promise<void> {
    try {
      await retryOnLostConnection(() => this.#run(batch));
    } catch (err) {
      if (batch.length === 1 || connectionFault(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.#settle(batch.slice(0, half));
      await this.#settle(batch.slice(half));
    }
  }

  async #run(batch: Waiter<Op, Out>[]): Promise<void> {
    const now = this.#clock().getTime();
    const windowStart = windowOf(now);
    const resetSeconds = Math.max(1, Math.ceil((windowStart + WINDOW_SECONDS * 1000 - now) / 1000));
    const decide = (limit: number, position: number): RateLimitDecision =>
      ({ allowed: position <= limit, limit, remaining: Math.max(0, limit - position), resetSeconds });
    // Requests a lease covers take its next position here; the rest are counted by the statement.
    const local = batch.map((w) => (w.leased ??= this.#fromLease(w, windowStart)));
    // Keys sorted by id: every statement locks counter rows in the same order.
    const ids = [...new Set(batch.filter((_, i) => local[i] === 0).map((w) => w.apiKeyId))].sort();
    const index = new Map(ids.map((id, i) => [id, i]));
    const keys: KeyCount[] = ids.map((apiKeyId) => ({ apiKeyId, size: 0, limit: 0 }));
    const leasers = new Set<number>(); // keys with a leasable request that no lease covered
    const places = batch.map((w, i) => {
      if (local[i] !== 0) return null;
      const key = index.get(w.apiKeyId)!;
      const k = keys[key]!;
      k.limit = w.limit; // the latest cached limit of the key
      if (this.#leasable(w.op)) leasers.add(key);
      return { key, ord: ++k.size };
    });
    // Such a key reserves a lease after its requests, in the same count, when the last count it
    // saw leaves ample room below its limit.
    const extra = keys.map((k, key) => {
      const n = leaseSize(k.limit);
      const seen = this.#leases.get(k.apiKeyId);
      const room = leasers.has(key) && n > 0 && seen?.window === windowStart && k.limit - seen.lastCount >= 16 * n;
      return room && !this.#leasing.has(k.apiKeyId) ? n : 0;
    });
    keys.forEach((k, i) => {
      k.size += extra[i]!;
      if (extra[i]! > 0) this.#leasing.add(k.apiKeyId);
    });
    try {
      await this.#count(batch, windowStart, keys, extra, places, local, decide);
    } finally {
      keys.forEach((k, i) => extra[i]! > 0 && this.#leasing.delete(k.apiKeyId));
    }
  }

  /** The next free position of the key's lease for a leasable request, else 0. */
  #fromLease(w: Waiter<Op, Out>, windowStart: number): number {
    if (!this.#leasable(w.op)) return 0;
    const lease = this.#leases.get(w.apiKeyId);
    if (!lease || lease.window !== windowStart || lease.next > lease.end) return 0;
    return lease.next++;
  }

  async #count(
    batch: Waiter<Op, Out>[], windowStart: number, keys: KeyCount[], extra: number[],
    places: Array<{ key: number; ord: number } | null>, local: number[], decide: (limit: number, position: number) => RateLimitDecision,
  ): Promise<void> {
    const ops: BatchOp<Op>[] = [];
    const opOf: number[] = [];
    batch.forEach((w, i) => {
      if (w.op === undefined) return;
      opOf[i] = ops.length;
      // A leased request's op runs unconditionally: its admission is already decided.
      ops.push({ ...(places[i] ?? { key: -1, ord: 0 }), op: w.op });
    });
    const { counts, outputs } = ops.length > 0
      ? await this.#statement.run(this.#db, new Date(windowStart), keys, ops)
      : keys.length > 0 ? { counts: await countOnly(this.#db, new Date(windowStart), keys), outputs: [] } : { counts: [], outputs: [] };
    keys.forEach((k, i) => {
      const c = counts[i]!;
      const held = this.#leases.get(k.apiKeyId);
      if (extra[i]! > 0) this.#leases.set(k.apiKeyId, { window: windowStart, next: c - extra[i]! + 1, end: c, lastCount: c });
      // A key counted while it holds a lease (a request of the batch came after the lease ran
      // out, or the key could not lease) keeps the positions it still holds: one lease at a
      // time per key is what bounds the positions that can go unused.
      else if (held?.window === windowStart) held.lastCount = c;
      else this.#leases.set(k.apiKeyId, { window: windowStart, next: 1, end: 0, lastCount: c });
    });
    batch.forEach((w, i) => {
      const place = places[i];
      const position = place ? counts[place.key]! - keys[place.key]!.size + place.ord : local[i]!;
      const decision = decide(w.limit, position);
      const output = opOf[i] === undefined ? undefined : outputs[opOf[i]!];
      w.resolve(decision.allowed && output !== undefined ? { decision, output } : { decision });
    });
  }

  /** Drops counters of windows that ended; called from the maintenance loop. */
  async prune(): Promise<void> {
    const cutoff = new Date(this.#clock().getTime() - 2 * WINDOW_SECONDS * 1000);
    await this.#db.query('DELETE FROM rate_limit_counters WHERE window_start < $1', [cutoff]);
    const current = windowOf(this.#clock().getTime());
    for (const [key, lease] of this.#leases) if (lease.window !== current) this.#leases.delete(key);
  }
}

/** IETF draft-ietf-httpapi-ratelimit-headers fields for a decision. */
export function rateLimitHeaders(d: RateLimitDecision): Record<string, string> {
  return {
    'ratelimit-policy': `"hourly";q=${d.limit};w=${WINDOW_SECONDS}`,
    ratelimit: `"hourly";r=${d.remaining};t=${d.resetSeconds}`,
  };
}

import crypto from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';

// The per-address and per-workspace hourly limits of browser intake (the hosted form and
// publishable keys; docs/INTAKE.md), counted in intake_rate_counters (migrations/049). The address is kept only as
// a keyed hash: the counters never hold a visitor's IP, and the hash cannot be reversed by
// trying every address without the installation's key.

const HOUR_MS = 3_600_000;

export interface IntakeLimitConfig {
  /** Submissions per visitor address per hour, per workspace. */
  perAddress: number;
  /** Submissions per workspace per hour, whatever the address; absent: each admit() gives the workspace's own. */
  perWorkspace?: number;
}

export type IntakeDecision = { ok: true } | { ok: false; retryAfterSeconds: number };

export class IntakeLimits {
  readonly #db: Queryable;
  readonly #clock: Clock;
  readonly #addressKey: Buffer;
  readonly #limits: IntakeLimitConfig;
  readonly #scope: string;

  /** `scope` keeps one intake's counters apart from another's (`publishable`, `form`). */
  constructor(opts: { db: Queryable; clock: Clock; addressKey: Buffer; limits: IntakeLimitConfig; scope: string }) {
    this.#db = opts.db;
    this.#clock = opts.clock;
    this.#addressKey = opts.addressKey;
    this.#limits = opts.limits;
    this.#scope = opts.scope;
  }

  /** The keyed hash of an address (base64url, 128 bits: plenty to tell visitors apart). */
  addressHash(address: string): string {
    return crypto.createHmac('sha256', this.#addressKey).update(address).digest().subarray(0, 16).toString('base64url');
  }

  /**
   * Counts one submission and says whether it is within both limits. The address counts every
   * attempt, refused ones too: a flood stays refused until its hour is over. The workspace counts
   * only what the address's limit lets through, so one address over its limit cannot spend the
   * workspace's hour for every other visitor. No address: the workspace only. `perWorkspace`: a
   * workspace's own limit (the form's setting).
   */
  async admit(
    workspaceId: string,
    address: string | null,
    perWorkspace = this.#limits.perWorkspace ?? Number.POSITIVE_INFINITY,
  ): Promise<IntakeDecision> {
    const now = this.#clock().getTime();
    const windowStart = new Date(Math.floor(now / HOUR_MS) * HOUR_MS);
    const workspaceScope = `${this.#scope}:ws:${workspaceId}`;
    const addressScope = address ? `${this.#scope}:addr:${workspaceId}:${this.addressHash(address)}` : null;
    // One statement: the address's row is counted (and locked) first, and the workspace's only when
    // the address's new count is within its limit; concurrent requests queue on the rows' locks,
    // so neither count can be passed by a race. Always address row, then workspace row: two
    // statements never wait on each other's locks in opposite order.
    const { rows } = await this.#db.query(
      `WITH addr AS (
         INSERT INTO intake_rate_counters AS c (scope, window_start, count)
         SELECT $2, $3, 1 WHERE $2::text IS NOT NULL
         ON CONFLICT (scope, window_start) DO UPDATE SET count = c.count + 1
         RETURNING count
       ), ws AS (
         INSERT INTO intake_rate_counters AS c (scope, window_start, count)
         SELECT $1, $3, 1 WHERE NOT EXISTS (SELECT FROM addr WHERE addr.count > $4)
         ON CONFLICT (scope, window_start) DO UPDATE SET count = c.count + 1
         RETURNING count
       )
       SELECT (SELECT count FROM ws) AS workspace`,
      [workspaceScope, addressScope, windowStart, this.#limits.perAddress],
    );
    // No workspace count: the address was over its limit, and the workspace was not counted.
    const counted = rows[0].workspace as number | null;
    if (counted !== null && counted <= perWorkspace) return { ok: true };
    return { ok: false, retryAfterSeconds: Math.max(1, Math.ceil((windowStart.getTime() + HOUR_MS - now) / 1000)) };
  }
}

/** Drops counters of hours that ended more than an hour ago (the maintenance pass). */
export async function pruneIntakeCounters(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM intake_rate_counters WHERE window_start < date_trunc('hour', $1::timestamptz) - interval '1 hour'`,
    [now],
  );
  return rowCount ?? 0;
}

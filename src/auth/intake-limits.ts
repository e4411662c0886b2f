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
   * Counts one submission for the workspace and the address (no address: the workspace only) and
   * says whether both are within their limits. Every attempt counts, refused ones too: a flood
   * stays refused until its hour is over. `perWorkspace`: a workspace's own limit (the form's setting).
   */
  async admit(
    workspaceId: string,
    address: string | null,
    perWorkspace = this.#limits.perWorkspace ?? Number.POSITIVE_INFINITY,
  ): Promise<IntakeDecision> {
    const now = this.#clock().getTime();
    const windowStart = new Date(Math.floor(now / HOUR_MS) * HOUR_MS);
    const workspaceScope = `${this.#scope}:ws:${workspaceId}`;
    const scopes = [workspaceScope];
    if (address) scopes.push(`${this.#scope}:addr:${workspaceId}:${this.addressHash(address)}`);
    // Rows in scope order: two statements never wait on each other's locks in opposite order.
    scopes.sort();
    const { rows } = await this.#db.query(
      `INSERT INTO intake_rate_counters (scope, window_start, count)
       SELECT s, $2, 1 FROM unnest($1::text[]) AS s
       ON CONFLICT (scope, window_start) DO UPDATE SET count = intake_rate_counters.count + 1
       RETURNING scope, count`,
      [scopes, windowStart],
    );
    const over = rows.some((r: { scope: string; count: number }) =>
      r.scope === workspaceScope ? r.count > perWorkspace : r.count > this.#limits.perAddress,
    );
    if (!over) return { ok: true };
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

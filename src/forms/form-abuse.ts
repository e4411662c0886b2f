import crypto from 'node:crypto';
import type { Queryable } from '../db/pool.ts';

// The hosted form's defences against bots and floods (docs/INTAKE.md, "The hosted form"):
// - a honeypot field people never see (a bot that fills it is thanked and nothing is stored);
// - a minimum fill time: the page carries the time it was rendered, signed (HMAC keyed from the
//   installation's secret), and a POST sooner than MIN_FILL_MS after it is sent back to the form;
// - hourly limits per address and per workspace in intake_rate_counters; the address is kept only
//   as a keyed hash, never in clear, so the table holds no personal data.

export const HONEYPOT_FIELD = 'website';
export const MIN_FILL_MS = 3_000;
/** Older than this, a page's token is refused as stale (the form is shown again with a fresh one). */
export const MAX_FILL_MS = 24 * 60 * 60 * 1000;
export const ADDRESS_HOURLY_LIMIT = 20;

export class FormAbuseGuard {
  readonly #key: Buffer;

  /** `key`: derived from the installation's secret for this one purpose. */
  constructor(key: Buffer) {
    this.#key = key;
  }

  #mac(what: string): string {
    return crypto.createHmac('sha256', this.#key).update(what).digest('base64url');
  }

  /** `<ms>.<mac>`: the time the page was rendered, bound to the workspace. */
  fillToken(workspaceId: string, now: Date): string {
    const ms = String(now.getTime());
    return `${ms}.${this.#mac(`fill:${workspaceId}:${ms}`)}`;
  }

  /** 'ok', 'too_fast' (also a token from the future), or 'invalid' (missing, forged, stale). */
  checkFillToken(workspaceId: string, token: string | undefined, now: Date): 'ok' | 'too_fast' | 'invalid' {
    const m = /^(\d{1,15})\.([A-Za-z0-9_-]{43})$/.exec(token ?? '');
    if (!m) return 'invalid';
    const expected = Buffer.from(this.#mac(`fill:${workspaceId}:${m[1]}`));
    const given = Buffer.from(m[2]!);
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return 'invalid';
    const elapsed = now.getTime() - Number(m[1]);
    if (elapsed < MIN_FILL_MS) return 'too_fast';
    if (elapsed > MAX_FILL_MS) return 'invalid';
    return 'ok';
  }

  /** The counter scope of an address: a keyed hash, so the address itself is never stored. */
  addressScope(ip: string): string {
    return `form-ip:${this.#mac(`ip:${ip}`).slice(0, 32)}`;
  }
}

export interface IntakeLimit {
  scope: string;
  limit: number;
}

/**
 * Counts one submission in each scope's current hour and answers whether every scope is within
 * its limit, with the seconds until the hour ends. Scopes are counted in sorted order, so two
 * statements never wait on each other's rows in opposite orders.
 */
export async function countIntake(
  db: Queryable,
  limits: IntakeLimit[],
  now: Date,
): Promise<{ allowed: boolean; retryAfterSeconds: number }> {
  const sorted = [...limits].sort((a, b) => (a.scope < b.scope ? -1 : a.scope > b.scope ? 1 : 0));
  const { rows } = await db.query(
    `INSERT INTO intake_rate_counters AS c (scope, window_start, count)
     SELECT s, date_trunc('hour', $2::timestamptz), 1 FROM unnest($1::text[]) WITH ORDINALITY AS t(s, i) ORDER BY i
     ON CONFLICT (scope, window_start) DO UPDATE SET count = c.count + 1
     RETURNING scope, count`,
    [sorted.map((l) => l.scope), now],
  );
  const counts = new Map(rows.map((r) => [r.scope as string, r.count as number]));
  const allowed = sorted.every((l) => (counts.get(l.scope) ?? 0) <= l.limit);
  const hourEnd = Math.floor(now.getTime() / 3_600_000 + 1) * 3_600_000;
  return { allowed, retryAfterSeconds: Math.max(1, Math.ceil((hourEnd - now.getTime()) / 1000)) };
}

/** Drops counters of hours that ended more than an hour ago (the maintenance pass). */
export async function pruneIntakeCounters(db: Queryable, now: Date): Promise<number> {
  const { rowCount } = await db.query(
    `DELETE FROM intake_rate_counters WHERE window_start < date_trunc('hour', $1::timestamptz) - interval '1 hour'`,
    [now],
  );
  return rowCount ?? 0;
}

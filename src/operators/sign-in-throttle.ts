import type { Queryable } from '../db/pool.ts';

// Sign-in throttling per account and per client IP: failed attempts in a sliding window, stored in
// PostgreSQL so every process of the service counts the same attempts (docs/DASHBOARD.md).

export interface ThrottlePolicy {
  windowMs: number;
  maxPerAccount: number;
  maxPerIp: number;
}

const subjects = (email: string, ip: string) => [`email:${email}`, `ip:${ip}`];

/** Whether another attempt for this account or from this IP must wait; in seconds until it may. */
export async function throttled(db: Queryable, p: ThrottlePolicy, email: string, ip: string, now: Date): Promise<number | null> {
  const { rows } = await db.query(
    `SELECT subject, count(*)::int AS n, min(at) AS oldest FROM sign_in_failures
      WHERE subject = ANY($1::text[]) AND at > $2::timestamptz - make_interval(secs => $3 / 1000.0)
      GROUP BY subject`,
    [subjects(email, ip), now, p.windowMs],
  );
  for (const r of rows) {
    const limit = (r.subject as string).startsWith('email:') ? p.maxPerAccount : p.maxPerIp;
    if (r.n >= limit) return Math.max(1, Math.ceil((new Date(r.oldest).getTime() + p.windowMs - now.getTime()) / 1000));
  }
  return null;
}

export async function recordFailure(db: Queryable, p: ThrottlePolicy, email: string, ip: string, now: Date): Promise<void> {
  // Old rows of these subjects go as new ones come: the table stays the size of recent failures.
  await db.query(
    `WITH gone AS (DELETE FROM sign_in_failures WHERE subject = ANY($1::text[]) AND at <= $2::timestamptz - make_interval(secs => $3 / 1000.0))
     INSERT INTO sign_in_failures (subject, at) SELECT unnest($1::text[]), $2`,
    [subjects(email, ip), now, p.windowMs],
  );
}

/** A successful sign-in forgives the account's failures (not the IP's). */
export async function clearAccountFailures(db: Queryable, email: string): Promise<void> {
  await db.query('DELETE FROM sign_in_failures WHERE subject = $1', [`email:${email}`]);
}

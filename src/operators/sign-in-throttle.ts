import net from 'node:net';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';

// Sign-in throttling (docs/DASHBOARD.md), stored in PostgreSQL so every process counts the same
// attempts. Two subjects per attempt: the account *from this client address*, and the address
// alone. Not the account alone: then anyone anywhere could lock its operator out by failing on
// purpose, whereas now the owner signing in from their own address still gets in.
//
// An attempt is reserved before its password is checked, under a lock per subject: counting and
// recording as two steps would let concurrent attempts all see the same count and all be
// evaluated. A reservation is a failure row until the password proves right; then it is taken back.

export interface ThrottlePolicy {
  windowMs: number;
  /** Attempts per account from one address. */
  maxPerAccount: number;
  /** Attempts per address, whatever the account. */
  maxPerIp: number;
}

/**
 * The address as throttled: an IPv6 client gets a /64 at least (one subscriber's prefix), so it
 * cannot rotate through its own block; an IPv4-mapped address counts as the IPv4 one.
 */
export function addressSubject(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1]!;
  if (net.isIPv6(ip)) return `${expandIPv6(ip).slice(0, 4).join(':')}::/64`;
  return ip;
}

function expandIPv6(ip: string): string[] {
  const [head = '', tail] = ip.split('%')[0]!.split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill('0'), ...right];
  return groups.map((g) => (g.includes('.') ? g : g.toLowerCase().replace(/^0+(?=.)/, '')));
}

const subjectsOf = (email: string, ip: string) => {
  const address = addressSubject(ip);
  return { pair: `account:${email}|${address}`, ip: `ip:${address}` };
};

export type Reservation = { wait: number } | { wait: null; release: (db: Queryable) => Promise<void> };

/**
 * Reserves one attempt for `email` from `ip`: `wait` (seconds) when either subject is at its
 * limit, else `release`, which a successful sign-in calls to take the attempt back (and forgive
 * the account's failures from this address). Without `release` the attempt counts as a failure.
 */
export function reserveAttempt(
  pool: Pool,
  p: ThrottlePolicy,
  email: string,
  ip: string,
  now: Date,
): Promise<Reservation> {
  const s = subjectsOf(email, ip);
  return reserve(
    pool,
    p.windowMs,
    [
      [s.pair, p.maxPerAccount],
      [s.ip, p.maxPerIp],
    ],
    now,
    s.pair,
  );
}

/**
 * Reserves one attempt from `ip` alone, counted with that address's sign-ins against `maxPerIp`:
 * an invitation's new account (docs/SECURITY.md), which has no account to pair the address with
 * yet. `release` takes back this attempt only.
 */
export function reserveAddressAttempt(
  pool: Pool,
  p: Pick<ThrottlePolicy, 'windowMs' | 'maxPerIp'>,
  ip: string,
  now: Date,
): Promise<Reservation> {
  return reserve(pool, p.windowMs, [[`ip:${addressSubject(ip)}`, p.maxPerIp]], now, null);
}

async function reserve(
  pool: Pool,
  windowMs: number,
  limits: Array<[subject: string, limit: number]>,
  now: Date,
  forgive: string | null,
): Promise<Reservation> {
  const subjects = limits.map(([subject]) => subject);
  const limitOf = new Map(limits);
  return withTransaction(pool, async (tx) => {
    // In a fixed order, so two attempts never hold one subject each while waiting for the other.
    await tx.query(
      `SELECT pg_advisory_xact_lock(hashtextextended('sign-in:' || subject, 0))
         FROM (SELECT unnest($1::text[]) AS subject ORDER BY 1) s`,
      [subjects],
    );
    // Old rows of these subjects go as new ones come: the table stays the size of recent failures.
    const { rows } = await tx.query(
      `WITH gone AS (DELETE FROM sign_in_failures
                      WHERE subject = ANY($1::text[]) AND at <= $2::timestamptz - make_interval(secs => $3 / 1000.0))
       SELECT subject, count(*)::int AS n, min(at) AS oldest FROM sign_in_failures
        WHERE subject = ANY($1::text[]) AND at > $2::timestamptz - make_interval(secs => $3 / 1000.0)
        GROUP BY subject`,
      [subjects, now, windowMs],
    );
    for (const r of rows) {
      if (r.n >= limitOf.get(r.subject)!) {
        return { wait: Math.max(1, Math.ceil((new Date(r.oldest).getTime() + windowMs - now.getTime()) / 1000)) };
      }
    }
    const inserted = await tx.query(
      'INSERT INTO sign_in_failures (subject, at) SELECT unnest($1::text[]), $2 RETURNING id',
      [subjects, now],
    );
    const ids = inserted.rows.map((r) => r.id as string);
    return {
      wait: null,
      release: async (db: Queryable) => {
        await db.query('DELETE FROM sign_in_failures WHERE id = ANY($1::bigint[]) OR subject = $2', [ids, forgive]);
      },
    };
  });
}

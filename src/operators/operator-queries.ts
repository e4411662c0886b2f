import type { Queryable } from '../db/pool.ts';
import type { Role } from './roles.ts';

// SQL of operators, memberships and sessions (migration 011).

export interface OperatorRow {
  id: string;
  email: string;
  name: string;
  passwordHash: string;
}

export interface Membership {
  workspaceId: string;
  slug: string;
  name: string;
  channel: 'voice' | 'whatsapp';
  role: Role;
}

const operatorOf = (r: Record<string, any>): OperatorRow => ({
  id: r.id,
  email: r.email,
  name: r.name,
  passwordHash: r.password_hash,
});

export async function insertOperator(
  db: Queryable,
  o: { email: string; name: string; passwordHash: string },
): Promise<OperatorRow | null> {
  const { rows } = await db.query(
    `INSERT INTO operators (email, name, password_hash) VALUES ($1, $2, $3) ON CONFLICT (email) DO NOTHING RETURNING *`,
    [o.email, o.name, o.passwordHash],
  );
  return rows[0] ? operatorOf(rows[0]) : null;
}

export async function findOperatorByEmail(db: Queryable, email: string): Promise<OperatorRow | null> {
  const { rows } = await db.query('SELECT * FROM operators WHERE email = $1', [email]);
  return rows[0] ? operatorOf(rows[0]) : null;
}

export async function listOperators(
  db: Queryable,
): Promise<Array<{ email: string; name: string; memberships: string[] }>> {
  const { rows } = await db.query(
    `SELECT o.email, o.name,
            coalesce(array_agg(w.slug || ':' || m.role
            ORDER BY w.slug) FILTER (WHERE w.id IS NOT NULL), '{}') AS memberships
       FROM operators o
       LEFT JOIN memberships m ON m.operator_id = o.id
       LEFT JOIN workspaces w ON w.id = m.workspace_id AND w.deleted_at IS NULL
      GROUP BY o.id ORDER BY o.email`,
  );
  return rows.map((r) => ({ email: r.email, name: r.name, memberships: r.memberships }));
}

export async function deleteOperator(db: Queryable, email: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM operators WHERE email = $1', [email]);
  return (rowCount ?? 0) > 0;
}

export async function setPasswordHash(db: Queryable, email: string, passwordHash: string): Promise<string | null> {
  const { rows } = await db.query('UPDATE operators SET password_hash = $2 WHERE email = $1 RETURNING id', [
    email,
    passwordHash,
  ]);
  return rows[0]?.id ?? null;
}

export async function upsertMembership(
  db: Queryable,
  operatorId: string,
  workspaceId: string,
  role: Role,
): Promise<void> {
  await db.query(
    `INSERT INTO memberships (operator_id, workspace_id, role) VALUES ($1, $2, $3)
       ON CONFLICT (operator_id, workspace_id) DO UPDATE SET role = EXCLUDED.role`,
    [operatorId, workspaceId, role],
  );
}

export async function membershipsOf(db: Queryable, operatorId: string): Promise<Membership[]> {
  const { rows } = await db.query(
    `SELECT w.id, w.slug, w.name, w.channel, m.role FROM memberships m JOIN workspaces w ON w.id = m.workspace_id
      WHERE m.operator_id = $1 AND w.deleted_at IS NULL ORDER BY w.slug`,
    [operatorId],
  );
  return rows.map((r) => ({ workspaceId: r.id, slug: r.slug, name: r.name, channel: r.channel, role: r.role }));
}

/** Stores a new session; the operator's expired ones go (sessions nobody uses again are never read). */
export async function insertSession(
  db: Queryable,
  s: { tokenHash: Buffer; operatorId: string; csrfToken: string; at: Date },
  limits: SessionLimits,
): Promise<void> {
  await db.query(
    `WITH gone AS (DELETE FROM operator_sessions WHERE operator_id = $2
                     AND (last_seen_at <= $4::timestamptz - make_interval(secs => $5 / 1000.0)
                          OR created_at <= $4::timestamptz - make_interval(secs => $6 / 1000.0)))
     INSERT INTO operator_sessions (token_hash, operator_id,
     csrf_token, created_at, last_seen_at) VALUES ($1, $2, $3, $4, $4)`,
    [s.tokenHash, s.operatorId, s.csrfToken, s.at, limits.idleMs, limits.maxAgeMs],
  );
}

export interface SessionLimits {
  /** A session unused this long ends. */
  idleMs: number;
  /** Any session ends this long after sign-in. */
  maxAgeMs: number;
}

/**
 * The session and its operator if it was used within the idle limit and is younger than the
 * absolute one. `touch`: mark it used (at most once a minute, so reading pages does not write a
 * row per request); a live stream's re-check does not, or an open tab would never go idle. An
 * expired session is deleted.
 */
export async function findSession(db: Queryable, tokenHash: Buffer, now: Date, limits: SessionLimits, touch: boolean) {
  const { rows } = await db.query(
    `WITH s AS (SELECT *, last_seen_at > $2::timestamptz - make_interval(secs => $3 / 1000.0)
                      AND created_at > $2::timestamptz - make_interval(secs => $4 / 1000.0) AS alive
                  FROM operator_sessions WHERE token_hash = $1),
          expired AS (DELETE FROM operator_sessions WHERE token_hash = $1 AND NOT (SELECT alive FROM s)),
          touched AS (UPDATE operator_sessions SET last_seen_at = $2
                       WHERE $5::boolean AND token_hash = $1 AND (SELECT alive FROM s)
                         AND last_seen_at < $2::timestamptz - interval '1 minute')
     SELECT s.csrf_token, s.alive, o.id, o.email, o.name FROM s JOIN operators o ON o.id = s.operator_id`,
    [tokenHash, now, limits.idleMs, limits.maxAgeMs, touch],
  );
  const r = rows[0];
  if (!r?.alive) return null;
  return {
    csrfToken: r.csrf_token as string,
    operator: { id: r.id as string, email: r.email as string, name: r.name as string },
  };
}

/** Replaces the operator's hash if it is still `previous` (a reset meanwhile wins). */
export async function replacePasswordHash(db: Queryable, operatorId: string, previous: string, next: string) {
  await db.query('UPDATE operators SET password_hash = $3 WHERE id = $1 AND password_hash = $2', [
    operatorId,
    previous,
    next,
  ]);
}

export async function deleteSession(db: Queryable, tokenHash: Buffer): Promise<void> {
  await db.query('DELETE FROM operator_sessions WHERE token_hash = $1', [tokenHash]);
}

export async function deleteSessionsOf(db: Queryable, operatorId: string): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM operator_sessions WHERE operator_id = $1', [operatorId]);
  return rowCount ?? 0;
}

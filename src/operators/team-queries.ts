import type { Queryable } from '../db/pool.ts';
import type { Role } from './roles.ts';

// SQL of a workspace's team: its members (memberships, migration 011) and pending invitations
// (workspace_invites, migration 015).

export interface Member {
  id: string;
  email: string;
  name: string;
  role: Role;
  since: Date;
}

export interface PendingInvite {
  id: string;
  email: string;
  role: Role;
  createdAt: Date;
  expiresAt: Date;
}

export interface InviteRow extends PendingInvite {
  workspaceId: string;
  slug: string;
  workspaceName: string;
}

const inviteOf = (r: Record<string, any>): PendingInvite => ({
  id: r.id,
  email: r.email,
  role: r.role,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
});

export async function listMembers(db: Queryable, workspaceId: string): Promise<Member[]> {
  const { rows } = await db.query(
    `SELECT o.id, o.email, o.name, m.role, m.created_at FROM memberships m JOIN operators o ON o.id = m.operator_id
      WHERE m.workspace_id = $1 ORDER BY array_position(ARRAY['owner','admin','agent','viewer'], m.role), o.email`,
    [workspaceId],
  );
  return rows.map((r) => ({ id: r.id, email: r.email, name: r.name, role: r.role, since: r.created_at }));
}

export async function listPendingInvites(db: Queryable, workspaceId: string, now: Date): Promise<PendingInvite[]> {
  const { rows } = await db.query(
    'SELECT * FROM workspace_invites WHERE workspace_id = $1 AND expires_at > $2 ORDER BY created_at',
    [workspaceId, now],
  );
  return rows.map(inviteOf);
}

export async function isMember(db: Queryable, workspaceId: string, email: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT 1 FROM memberships m JOIN operators o ON o.id = m.operator_id WHERE m.workspace_id = $1 AND o.email = $2',
    [workspaceId, email],
  );
  return rows.length > 0;
}

/** Stores an invitation (and drops the workspace's expired ones, so the table does not grow). */
export async function insertInvite(
  db: Queryable,
  i: {
    tokenHash: Buffer;
    workspaceId: string;
    email: string;
    role: Role;
    invitedBy: string;
    now: Date;
    expiresAt: Date;
  },
): Promise<PendingInvite> {
  await db.query('DELETE FROM workspace_invites WHERE workspace_id = $1 AND expires_at <= $2', [i.workspaceId, i.now]);
  const { rows } = await db.query(
    `INSERT INTO workspace_invites (token_hash, workspace_id, email, role, invited_by, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [i.tokenHash, i.workspaceId, i.email, i.role, i.invitedBy, i.now, i.expiresAt],
  );
  return inviteOf(rows[0]);
}

export async function deleteInvite(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM workspace_invites WHERE workspace_id = $1 AND id = $2', [
    workspaceId,
    id,
  ]);
  return (rowCount ?? 0) > 0;
}

/** A live (unexpired) invitation by its token's hash; `lock` holds it until the transaction ends. */
export async function findInvite(db: Queryable, tokenHash: Buffer, now: Date, lock = false): Promise<InviteRow | null> {
  const { rows } = await db.query(
    `SELECT i.*, w.slug, w.name AS workspace_name
       FROM workspace_invites i JOIN workspaces w ON w.id = i.workspace_id AND w.deleted_at IS NULL
      WHERE i.token_hash = $1 AND i.expires_at > $2 ${lock ? 'FOR UPDATE OF i' : ''}`,
    [tokenHash, now],
  );
  const r = rows[0];
  return r ? { ...inviteOf(r), workspaceId: r.workspace_id, slug: r.slug, workspaceName: r.workspace_name } : null;
}

export async function consumeInvite(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM workspace_invites WHERE id = $1', [id]);
}

/**
 * Locks every membership of the workspace (in a fixed order, so two owners' changes queue instead
 * of deadlocking) and returns their roles: the last-owner rule is then decided on rows no other
 * transaction can change until this one ends.
 */
export async function lockRoles(db: Queryable, workspaceId: string): Promise<Map<string, Role>> {
  const { rows } = await db.query(
    'SELECT operator_id, role FROM memberships WHERE workspace_id = $1 ORDER BY operator_id FOR UPDATE',
    [workspaceId],
  );
  return new Map(rows.map((r) => [r.operator_id as string, r.role as Role]));
}

export async function setRole(db: Queryable, workspaceId: string, operatorId: string, role: Role): Promise<void> {
  await db.query('UPDATE memberships SET role = $3 WHERE workspace_id = $1 AND operator_id = $2', [
    workspaceId,
    operatorId,
    role,
  ]);
}

export async function deleteMembership(db: Queryable, workspaceId: string, operatorId: string): Promise<void> {
  await db.query('DELETE FROM memberships WHERE workspace_id = $1 AND operator_id = $2', [workspaceId, operatorId]);
}

/** Adds the membership; an existing one keeps its role (an invitation never demotes anyone). */
export async function addMembershipKeepingRole(
  db: Queryable,
  operatorId: string,
  workspaceId: string,
  role: Role,
): Promise<void> {
  await db.query(
    'INSERT INTO memberships (operator_id, workspace_id, role) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING',
    [operatorId, workspaceId, role],
  );
}

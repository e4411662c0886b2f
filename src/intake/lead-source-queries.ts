import type { Queryable } from '../db/pool.ts';
import { workspaceFromRow, type WorkspaceRow } from '../workspaces/workspace-queries.ts';

// lead_sources (migrations/049): a workspace's connected sources of leads. The secret stays
// sealed here; LeadSourceService opens it (src/workspaces/secret-box.ts).

export type LeadSourceKind = 'meta' | 'google' | 'webhook';

export interface LeadSourceRow {
  id: string;
  workspaceId: string;
  kind: LeadSourceKind;
  name: string;
  token: string;
  secretCiphertext: Buffer | null;
  config: Record<string, unknown>;
  createdAt: Date;
  revokedAt: Date | null;
  lastLeadAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

function fromRow(r: Record<string, any>): LeadSourceRow {
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    kind: r.kind,
    name: r.name,
    token: r.token,
    secretCiphertext: r.secret_ciphertext,
    config: r.config ?? {},
    createdAt: r.created_at,
    revokedAt: r.revoked_at,
    lastLeadAt: r.last_lead_at,
    lastError: r.last_error,
    lastErrorAt: r.last_error_at,
  };
}

export async function insertLeadSource(
  db: Queryable,
  s: {
    id: string;
    workspaceId: string;
    kind: LeadSourceKind;
    name: string;
    token: string;
    secretCiphertext: Buffer | null;
    config: Record<string, unknown>;
  },
): Promise<LeadSourceRow> {
  const { rows } = await db.query(
    `INSERT INTO lead_sources (id, workspace_id, kind, name, token, secret_ciphertext, config)
     VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING *`,
    [s.id, s.workspaceId, s.kind, s.name, s.token, s.secretCiphertext, JSON.stringify(s.config)],
  );
  return fromRow(rows[0]);
}

/** A source that takes leads: not revoked, its workspace not deleted. */
export async function findActiveSourceByToken(db: Queryable, token: string): Promise<LeadSourceRow | null> {
  const { rows } = await db.query({
    name: 'find-lead-source-by-token',
    text: `SELECT s.* FROM lead_sources s JOIN workspaces w ON w.id = s.workspace_id
            WHERE s.token = $1 AND s.revoked_at IS NULL AND w.deleted_at IS NULL`,
    values: [token],
  });
  return rows[0] ? fromRow(rows[0]) : null;
}

export async function findSource(db: Queryable, workspaceId: string, id: string): Promise<LeadSourceRow | null> {
  const { rows } = await db.query('SELECT * FROM lead_sources WHERE workspace_id = $1 AND id = $2', [workspaceId, id]);
  return rows[0] ? fromRow(rows[0]) : null;
}

/** The workspace's sources, revoked ones last. */
export async function listSources(db: Queryable, workspaceId: string): Promise<LeadSourceRow[]> {
  const { rows } = await db.query(
    `SELECT * FROM lead_sources WHERE workspace_id = $1
      ORDER BY revoked_at IS NOT NULL, created_at, id`,
    [workspaceId],
  );
  return rows.map(fromRow);
}

export async function updateSource(
  db: Queryable,
  workspaceId: string,
  id: string,
  change: { name?: string; config?: Record<string, unknown>; secretCiphertext?: Buffer },
): Promise<LeadSourceRow | null> {
  const { rows } = await db.query(
    `UPDATE lead_sources SET name = COALESCE($3, name), config = COALESCE($4::jsonb, config),
            secret_ciphertext = COALESCE($5, secret_ciphertext)
      WHERE workspace_id = $1 AND id = $2 AND revoked_at IS NULL RETURNING *`,
    [
      workspaceId,
      id,
      change.name ?? null,
      change.config ? JSON.stringify(change.config) : null,
      change.secretCiphertext ?? null,
    ],
  );
  return rows[0] ? fromRow(rows[0]) : null;
}

/** Revokes a source (its URL answers 404 from now on); false when it does not exist. Twice keeps the first time. */
export async function revokeSource(db: Queryable, workspaceId: string, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE lead_sources SET revoked_at = COALESCE(revoked_at, now()) WHERE workspace_id = $1 AND id = $2',
    [workspaceId, id],
  );
  return rowCount === 1;
}

export async function recordSourceLead(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE lead_sources SET last_lead_at = GREATEST(last_lead_at, $2) WHERE id = $1', [id, at]);
}

export async function recordSourceError(db: Queryable, id: string, error: string, at: Date): Promise<void> {
  await db.query('UPDATE lead_sources SET last_error = $2, last_error_at = $3 WHERE id = $1', [
    id,
    error.slice(0, 500),
    at,
  ]);
}

/** The lead a source already delivered under its own id (the idempotency of a retried delivery). */
export async function findLeadBySourceLeadId(
  db: Queryable,
  sourceId: string,
  sourceLeadId: string,
): Promise<string | null> {
  const { rows } = await db.query('SELECT id FROM leads WHERE source_id = $1 AND source_lead_id = $2', [
    sourceId,
    sourceLeadId,
  ]);
  return rows[0]?.id ?? null;
}

/** The source's workspace, not deleted (the Caller a source submits with needs the whole row). */
export async function findLiveWorkspaceById(db: Queryable, id: string): Promise<WorkspaceRow | null> {
  const { rows } = await db.query({
    name: 'intake-find-workspace',
    text: 'SELECT * FROM workspaces WHERE id = $1 AND deleted_at IS NULL',
    values: [id],
  });
  return rows[0] ? workspaceFromRow(rows[0]) : null;
}

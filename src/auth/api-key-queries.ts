import type { Queryable } from '../db/pool.ts';
import { workspaceFromRow, type WorkspaceRow } from '../workspaces/workspace-queries.ts';

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  keyHash: Buffer;
  hourlyLimit: number;
  revoked: boolean;
  workspace: WorkspaceRow;
}

export interface ApiKeyListing {
  id: string;
  name: string;
  prefix: string;
  hourlyLimit: number;
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export async function insertApiKey(
  db: Queryable,
  k: { workspaceId: string; name: string; prefix: string; hash: Buffer; hourlyLimit: number },
): Promise<{ id: string }> {
  const { rows } = await db.query(
    `INSERT INTO api_keys (workspace_id, name, prefix, key_hash, hourly_limit)
     VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [k.workspaceId, k.name, k.prefix, k.hash, k.hourlyLimit],
  );
  return { id: rows[0].id };
}

export async function findApiKeyByHash(db: Queryable, hash: Buffer): Promise<ApiKeyRecord | null> {
  const { rows } = await db.query({
    name: 'find-api-key-by-hash',
    text: `SELECT k.id AS key_id, k.key_hash, k.hourly_limit, k.revoked_at IS NOT NULL AS revoked, w.*
             FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
            WHERE k.key_hash = $1`,
    values: [hash],
  });
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.key_id,
    workspaceId: r.id,
    keyHash: r.key_hash,
    hourlyLimit: r.hourly_limit,
    revoked: r.revoked,
    workspace: workspaceFromRow(r),
  };
}

export async function touchApiKeys(db: Queryable, ids: string[], at: Date): Promise<void> {
  await db.query(
    'UPDATE api_keys SET last_used_at = $2 WHERE id = ANY($1::uuid[]) AND (last_used_at IS NULL OR last_used_at < $2)',
    [ids, at],
  );
}

/** Revokes a key; false when no such key exists. Revoking twice keeps the first time. */
export async function revokeApiKey(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1',
    [id],
  );
  return rowCount === 1;
}

export async function listApiKeys(db: Queryable, workspaceId: string): Promise<ApiKeyListing[]> {
  const { rows } = await db.query(
    `SELECT id, name, prefix, hourly_limit, created_at, last_used_at, revoked_at
       FROM api_keys WHERE workspace_id = $1 ORDER BY created_at, id`,
    [workspaceId],
  );
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    hourlyLimit: r.hourly_limit,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  }));
}

import type { Queryable } from '../db/pool.ts';
import type { ApiKeyKind } from './api-key.ts';
import { workspaceFromRow, type WorkspaceRow } from './workspace-queries.ts';

export interface ApiKeyRecord {
  id: string;
  workspaceId: string;
  keyHash: Buffer;
  hourlyLimit: number;
  revoked: boolean;
  /** false for a sandbox key (`li_test_…`): its leads are sandbox leads (docs/SANDBOX.md). */
  livemode: boolean;
  /** `secret` (server-side API), `publishable` (browsers, create only), `form` (the hosted form's own). */
  kind: ApiKeyKind;
  /** A publishable key's browser origins (`https://example.com`); empty for the other kinds. */
  allowedOrigins: string[];
  workspace: WorkspaceRow;
}

export interface ApiKeyListing {
  id: string;
  name: string;
  prefix: string;
  hourlyLimit: number;
  livemode: boolean;
  kind: ApiKeyKind;
  /** The browser origins of a publishable key; empty for a secret key. */
  allowedOrigins: string[];
  createdAt: Date;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

/** A secret key as the API keys page lists it (its answer's shape, unchanged). */
export type SecretKeyListing = Omit<ApiKeyListing, 'kind' | 'allowedOrigins'>;

export async function insertApiKey(
  db: Queryable,
  k: {
    workspaceId: string;
    name: string;
    prefix: string;
    hash: Buffer;
    hourlyLimit: number;
    livemode?: boolean;
    kind?: ApiKeyKind;
    allowedOrigins?: string[];
  },
): Promise<{ id: string }> {
  const { rows } = await db.query(
    `INSERT INTO api_keys (workspace_id, name, prefix, key_hash, hourly_limit, livemode, kind, allowed_origins)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
    [
      k.workspaceId,
      k.name,
      k.prefix,
      k.hash,
      k.hourlyLimit,
      k.livemode ?? true,
      k.kind ?? 'secret',
      k.allowedOrigins ?? [],
    ],
  );
  return { id: rows[0].id };
}

/**
 * The workspace's keys not revoked, counted with its row locked until the transaction ends (a cap's
 * check). The hosted form's own keys are the service's, not the operators': they do not count.
 */
export async function lockAndCountActiveKeys(tx: Queryable, workspaceId: string): Promise<number> {
  await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', [workspaceId]);
  const { rows } = await tx.query(
    "SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NULL AND kind <> 'form'",
    [workspaceId],
  );
  return rows[0].n;
}

export async function findApiKeyByHash(db: Queryable, hash: Buffer): Promise<ApiKeyRecord | null> {
  const { rows } = await db.query({
    name: 'find-api-key-by-hash',
    text: `SELECT k.id AS key_id, k.key_hash, k.hourly_limit,
             k.revoked_at IS NOT NULL AS revoked, k.livemode AS key_livemode,
             k.kind AS key_kind, k.allowed_origins AS key_allowed_origins, w.*
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
    livemode: r.key_livemode,
    kind: r.key_kind,
    allowedOrigins: r.key_allowed_origins,
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
  const { rowCount } = await db.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now()) WHERE id = $1', [
    id,
  ]);
  return rowCount === 1;
}

/**
 * The workspace's keys of the kinds asked for, with their kind and origins (`key list` shows the
 * secret and publishable ones; the publishable keys' listing, PublishableKeys.list, its own).
 */
export async function listKeysOfKinds(
  db: Queryable,
  workspaceId: string,
  kinds: ApiKeyKind[],
): Promise<ApiKeyListing[]> {
  const { rows } = await db.query(
    `SELECT id, name, prefix, hourly_limit, livemode, kind, allowed_origins, created_at, last_used_at, revoked_at
       FROM api_keys WHERE workspace_id = $1 AND kind = ANY($2::text[]) ORDER BY created_at, id`,
    [workspaceId, kinds],
  );
  return rows.map((r) => ({ ...listingOf(r), kind: r.kind, allowedOrigins: r.allowed_origins }));
}

/**
 * The workspace's secret keys (the API keys page): the publishable ones are listed with the form,
 * the hosted form's own never. The answer's shape is the API keys page's, unchanged.
 */
export async function listApiKeys(db: Queryable, workspaceId: string): Promise<SecretKeyListing[]> {
  const { rows } = await db.query(
    `SELECT id, name, prefix, hourly_limit, livemode, created_at, last_used_at, revoked_at
       FROM api_keys WHERE workspace_id = $1 AND kind = 'secret' ORDER BY created_at, id`,
    [workspaceId],
  );
  return rows.map(listingOf);
}

function listingOf(r: Record<string, any>): SecretKeyListing {
  return {
    id: r.id,
    name: r.name,
    prefix: r.prefix,
    hourlyLimit: r.hourly_limit,
    livemode: r.livemode,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    revokedAt: r.revoked_at,
  };
}

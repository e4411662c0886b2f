import type { Queryable } from '../db/pool.ts';

export interface WebhookEndpointRow {
  id: string;
  workspaceId: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  secretCiphertext: Buffer;
  previousSecretCiphertext: Buffer | null;
  previousSecretExpiresAt: Date | null;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

const toRow = (r: Record<string, any>): WebhookEndpointRow => ({
  id: r.id,
  workspaceId: r.workspace_id,
  url: r.url,
  eventTypes: r.event_types,
  enabled: r.enabled,
  secretCiphertext: r.secret_ciphertext,
  previousSecretCiphertext: r.previous_secret_ciphertext,
  previousSecretExpiresAt: r.previous_secret_expires_at,
  failingSince: r.failing_since,
  disabledAt: r.disabled_at,
  disabledReason: r.disabled_reason,
  createdAt: r.created_at,
});

export async function insertEndpoint(
  db: Queryable,
  e: { id: string; workspaceId: string; url: string; eventTypes: string[]; secretCiphertext: Buffer },
): Promise<WebhookEndpointRow> {
  const { rows } = await db.query(
    'INSERT INTO webhook_endpoints (id, workspace_id, url, event_types, secret_ciphertext) ' +
      'VALUES ($1, $2, $3, $4, $5) RETURNING *',
    [e.id, e.workspaceId, e.url, e.eventTypes, e.secretCiphertext],
  );
  return toRow(rows[0]);
}

/** The workspace's endpoints, counted with its row locked until the transaction ends (a cap's check). */
export async function lockAndCountEndpoints(tx: Queryable, workspaceId: string): Promise<number> {
  await tx.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', [workspaceId]);
  const { rows } = await tx.query('SELECT count(*)::int AS n FROM webhook_endpoints WHERE workspace_id = $1', [
    workspaceId,
  ]);
  return rows[0].n;
}

export async function listEndpoints(db: Queryable, workspaceId: string): Promise<WebhookEndpointRow[]> {
  const { rows } = await db.query('SELECT * FROM webhook_endpoints WHERE workspace_id = $1 ORDER BY created_at, id', [
    workspaceId,
  ]);
  return rows.map(toRow);
}

export async function findEndpoint(db: Queryable, id: string): Promise<WebhookEndpointRow | null> {
  const { rows } = await db.query('SELECT * FROM webhook_endpoints WHERE id = $1', [id]);
  return rows[0] ? toRow(rows[0]) : null;
}

/** Deletes the endpoint with its delivery log. */
export async function deleteEndpoint(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query('DELETE FROM webhook_endpoints WHERE id = $1', [id]);
  return (rowCount ?? 0) > 0;
}

export async function rotateSecret(db: Queryable, id: string, next: Buffer, previousExpiresAt: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE webhook_endpoints SET previous_secret_ciphertext = secret_ciphertext,
      previous_secret_expires_at = $3, secret_ciphertext = $2
      WHERE id = $1`,
    [id, next, previousExpiresAt],
  );
  return (rowCount ?? 0) > 0;
}

/** A success ends a failing streak (and re-enabling starts a fresh one). */
export async function markEndpointSucceeded(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE webhook_endpoints SET failing_since = NULL WHERE id = $1 AND failing_since IS NOT NULL', [id]);
}

/**
 * Records a failed attempt; disables the endpoint when it has failed every attempt since
 * `disableBefore` or earlier. Returns whether this call disabled it.
 */
export async function markEndpointFailed(db: Queryable, id: string, now: Date, disableBefore: Date): Promise<boolean> {
  const { rows } = await db.query(
    `UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, $2),
            enabled = CASE WHEN COALESCE(failing_since, $2) <= $3 THEN false ELSE enabled END,
            disabled_at = CASE WHEN enabled AND COALESCE(failing_since, $2) <= $3 THEN $2 ELSE disabled_at END,
            disabled_reason = CASE WHEN enabled AND COALESCE(failing_since, $2) <= $3
                                   THEN 'every delivery attempt failed for 5 days' ELSE disabled_reason END
      WHERE id = $1
      RETURNING (disabled_at = $2) AS disabled_now`,
    [id, now, disableBefore],
  );
  return rows[0]?.disabled_now === true;
}

export async function enableEndpoint(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    'UPDATE webhook_endpoints SET enabled = true, disabled_at = NULL, disabled_reason = NULL, failing_since = NULL ' +
      'WHERE id = $1',
    [id],
  );
  return (rowCount ?? 0) > 0;
}

import type { Queryable } from '../db/pool.ts';

/**
 * A workspace that works in the sandbox only: no live key that is not revoked, and no live lead
 * (the demo workspaces, a workspace being tried out). Its leads reach simulated providers whatever
 * the Providers page holds (docs/SANDBOX.md), so the page says so instead of "not set".
 */
export async function isSandboxOnly(db: Queryable, workspaceId: string): Promise<boolean> {
  const { rows } = await db.query(
    `SELECT NOT EXISTS (SELECT 1 FROM api_keys WHERE workspace_id = $1 AND livemode AND revoked_at IS NULL)
        AND NOT EXISTS (SELECT 1 FROM leads WHERE workspace_id = $1 AND livemode) AS sandbox_only`,
    [workspaceId],
  );
  return rows[0].sandbox_only === true;
}

import type { Queryable } from '../db/pool.ts';

// Shared by the inbound webhook receivers (Cal.com, Vapi, Twilio, Meta): one receipt per
// provider delivery, so a repeated delivery is recognised and acted on once.

export interface WebhookReceipt {
  provider: string;
  workspaceId: string;
  dedupeKey: string;
  leadId: string | null;
  type: string;
}

/**
 * Records a delivery; false when the same event was already received. Run it in the
 * transaction that applies the delivery: a concurrent copy then waits on the primary key and
 * sees the conflict once the first commits, or proceeds if the first rolled back.
 */
export async function insertWebhookReceipt(db: Queryable, r: WebhookReceipt): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO webhook_receipts (provider, workspace_id, dedupe_key, lead_id, type)
     VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT (provider, workspace_id, dedupe_key) DO NOTHING`,
    [r.provider, r.workspaceId, r.dedupeKey, r.leadId, r.type],
  );
  return rowCount === 1;
}

import type { Queryable } from '../../db/pool.ts';
import type { LeadStatus } from '../../leads/lead-state.ts';
import { AppError } from '../../shared/errors.ts';

// Who owns a lead and who has read it (docs/DASHBOARD.md, "The operator's day"). Take over claims
// the lead under its row lock, in the transaction of the status change: of two operators pressing
// it at once the first wins and the second is told who (409 `lead_taken`). Read markers are per
// operator: opening the lead page records the newest inbound message time it showed.

/** "a moment ago", "5 minutes ago", "3 hours ago", "2 days ago". */
export function ago(seconds: number): string {
  if (seconds < 120) return 'a moment ago';
  if (seconds < 3600) return `${Math.floor(seconds / 60)} minutes ago`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)} hours ago`;
  return `${Math.floor(seconds / 86_400)} days ago`;
}

/**
 * Locks the workspace's lead and checks nobody else owns it; returns its status and whether the
 * operator owns it already. Throws lead_not_found, or lead_taken naming the owner.
 */
export async function lockForClaim(
  tx: Queryable,
  workspaceId: string,
  leadId: string,
  operatorId: string,
): Promise<{ status: LeadStatus; mine: boolean }> {
  const { rows } = await tx.query(
    `SELECT l.status, l.owner_operator_id AS owner FROM leads l WHERE l.id = $1 AND l.workspace_id = $2 FOR UPDATE`,
    [leadId, workspaceId],
  );
  const lead = rows[0];
  if (!lead) throw new AppError('lead_not_found');
  if (lead.owner === null || lead.owner === operatorId) return { status: lead.status, mine: lead.owner === operatorId };
  const { rows: who } = await tx.query(
    `SELECT o.name, (SELECT extract(epoch FROM now() - max(e.at)) FROM lead_events e
                      WHERE e.lead_id = $1 AND e.type = 'operator.took_over') AS seconds
       FROM operators o WHERE o.id = $2`,
    [leadId, lead.owner],
  );
  const name: string = who[0]?.name ?? 'a teammate';
  const seconds = who[0]?.seconds === null || who[0]?.seconds === undefined ? null : Number(who[0].seconds);
  throw new AppError('lead_taken', { message: `Taken over by ${name}${seconds === null ? '' : ` ${ago(seconds)}`}.` });
}

/**
 * Records the owner; in the claim's transaction, after the status change (the trigger clears the
 * owner of a lead handed back to the agent).
 */
export async function setOwner(tx: Queryable, leadId: string, operatorId: string): Promise<void> {
  await tx.query('UPDATE leads SET owner_operator_id = $2 WHERE id = $1', [leadId, operatorId]);
}

/** The operator has seen the lead's messages up to its newest inbound one (no write when nothing changed). */
export async function markRead(db: Queryable, workspaceId: string, leadId: string, operatorId: string): Promise<void> {
  await db.query(
    `INSERT INTO lead_reads (lead_id, operator_id, read_through)
     SELECT l.id, $3, l.last_inbound_at FROM leads l
      WHERE l.id = $1 AND l.workspace_id = $2 AND l.last_inbound_at IS NOT NULL
     ON CONFLICT (lead_id, operator_id) DO UPDATE SET read_through = EXCLUDED.read_through
      WHERE lead_reads.read_through < EXCLUDED.read_through`,
    [leadId, workspaceId, operatorId],
  );
}

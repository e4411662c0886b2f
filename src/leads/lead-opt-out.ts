import type { Queryable } from '../db/pool.ts';
import { recordLeadEvent, transitionLead, type Actor } from './lead-state.ts';

// The one way a lead is opted out, whoever noticed: the inbound keyword check (actor `system`) or
// the agent's optOut tool (actor `agent`). Nothing else writes `opted_out_at`; a reason text
// (markUnqualified's, an operator's note) never does. Once set, nothing more is sent to the lead
// on WhatsApp (src/whatsapp/turn-rules.ts) and it stays set: only the lead can write again.

export const OPT_OUT_NOTES = 'Opted out: the lead asked us to stop contacting them.';

export interface OptOutRequest {
  leadId: string;
  actor: Extract<Actor, 'system' | 'agent'>;
  /** Timeline data: the message that said it, or the agent's words. */
  data: Record<string, unknown>;
}

/**
 * Records the opt-out and closes the lead as unqualified. A lead that is booked or with a person
 * keeps its status (the opt-out is on its timeline). Run it in a transaction: the two writes
 * belong together.
 */
export async function recordOptOut(db: Queryable, r: OptOutRequest): Promise<{ status: 'unqualified' | 'kept' }> {
  await db.query({
    name: 'lead-opt-out',
    text: 'UPDATE leads SET opted_out_at = COALESCE(opted_out_at, now()) WHERE id = $1',
    values: [r.leadId],
  });
  const event = { type: 'lead.opted_out', data: r.data };
  const set = { qualificationNotes: OPT_OUT_NOTES };
  const moved = await transitionLead(db, { leadId: r.leadId, to: 'unqualified', actor: r.actor, event, set });
  if (moved.ok) return { status: 'unqualified' };
  const status = moved.reason === 'refused' ? { status: moved.status } : {};
  await recordLeadEvent(db, r.leadId, 'lead.opted_out', { ...r.data, ...status, actor: r.actor });
  return { status: 'kept' };
}

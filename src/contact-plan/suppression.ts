import type { Queryable } from '../db/pool.ts';
import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';

// The workspace's do-not-contact list (`suppressed_numbers`, migration 045): numbers nobody in the
// workspace calls or messages again. Fed by opt-outs (a trigger), the operator's button on the lead
// page and the admin API. Checked in ONE place, `isSuppressed`, which the provider gate
// (suppression-gate.ts) asks before every WhatsApp send and every call, whoever asked for them.

/** The refusal code of a send or call to a number on the list: permanent, never retried. */
export const DO_NOT_CONTACT = 'do_not_contact';

/** The lead's qualification notes once the gate refused to contact it. */
export const DO_NOT_CONTACT_NOTES = "The number is on the workspace's do-not-contact list.";

/** What a refused message row says (whatsapp_messages.error_message). */
export const DO_NOT_CONTACT_MESSAGE = 'not sent: the number is on the do-not-contact list';

/** Whether `phoneE164` is on the do-not-contact list of `workspaceId`. */
export async function isSuppressed(db: Queryable, workspaceId: string, phoneE164: string): Promise<boolean> {
  const { rows } = await db.query({
    name: 'suppression-check',
    text: 'SELECT 1 FROM suppressed_numbers WHERE workspace_id = $1 AND phone_e164 = $2',
    values: [workspaceId, phoneE164],
  });
  return rows.length > 0;
}

/**
 * A lead the gate refused to contact ends visibly: `unqualified` with the note, or — a lead that
 * is booked or with a person keeps its status — the refusal on its timeline. Either way the
 * timeline entry is `contact.suppressed` {channel}. Run it in a transaction with the caller's
 * other writes (the refused message row).
 */
export async function closeSuppressedLead(
  db: Queryable,
  leadId: string,
  channel: 'voice' | 'whatsapp',
): Promise<{ status: 'unqualified' | 'kept' }> {
  const data = { channel, reason: DO_NOT_CONTACT };
  const event = { type: 'contact.suppressed', data };
  const set = { qualificationNotes: DO_NOT_CONTACT_NOTES };
  const moved = await transitionLead(db, { leadId, to: 'unqualified', actor: 'system', event, set });
  if (moved.ok) return { status: 'unqualified' };
  if (moved.reason === 'not_found') return { status: 'kept' };
  await recordLeadEvent(db, leadId, 'contact.suppressed', { ...data, status: moved.status, actor: 'system' });
  return { status: 'kept' };
}

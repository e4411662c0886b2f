import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';
import type { Queryable } from '../db/pool.ts';
import * as m from './message-queries.ts';

// Delivery statuses of our outbound messages (provider callbacks), applied the same way whether
// they arrive after the send was recorded (the usual case) or before it: a provider may call back
// before our commit, and such a status waits in whatsapp_early_statuses until the send is recorded.

export interface DeliveryStatus {
  status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'undelivered';
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
}

/** Delivery errors that mean the 24-hour window was closed (Twilio, Meta). */
const WINDOW_ERROR_CODES = new Set(['63016', '131047']);

// Later statuses never move a message back (callbacks arrive out of order and repeat).
const RANK: Record<string, number> = { pending: 0, accepted: 1, queued: 1, sent: 2, delivered: 3, read: 4, failed: 5, undelivered: 5, cancelled: 6 };

/**
 * Serialises the send's recording and the provider's callbacks about the same message (both take
 * it first in their transaction): a callback then either sees the recorded send or is held and
 * found by the recording, never neither.
 */
export async function lockProviderMessage(tx: Queryable, provider: m.Provider, providerMessageId: string): Promise<void> {
  await tx.query({ name: 'delivery-lock-message', text: 'SELECT pg_advisory_xact_lock(741322006, hashtext($1))', values: [`${provider}:${providerMessageId}`] });
}

/** Applies a status to its message (locked by the caller); false when it says nothing new. */
export async function applyDeliveryStatus(tx: Queryable, msg: m.OutboundForStatus, providerMessageId: string, s: DeliveryStatus): Promise<boolean> {
  if ((RANK[s.status] ?? 0) <= (RANK[msg.status] ?? 0)) return false;
  await m.updateOutboundStatus(tx, { id: msg.id, status: s.status, providerMessageId, errorCode: s.errorCode ?? null, errorMessage: s.errorMessage ?? null });
  if (s.status === 'failed' || s.status === 'undelivered') await deliveryFailed(tx, msg, s);
  return true;
}

/** Keeps a status whose message we cannot find yet; drops such statuses older than a day. */
export async function holdEarlyStatus(tx: Queryable, provider: m.Provider, providerMessageId: string, s: DeliveryStatus): Promise<void> {
  await tx.query({
    name: 'delivery-hold-early-status',
    text: `WITH pruned AS (DELETE FROM whatsapp_early_statuses WHERE received_at < now() - interval '1 day')
           INSERT INTO whatsapp_early_statuses (provider, provider_message_id, status, error_code, error_message) VALUES ($1, $2, $3, $4, $5)`,
    values: [provider, providerMessageId, s.status, s.errorCode ?? null, s.errorMessage ?? null],
  });
}

/** Applies (and removes) the statuses that arrived before this send was recorded. Run in the recording transaction. */
export async function applyEarlyStatuses(tx: Queryable, provider: m.Provider, providerMessageId: string): Promise<void> {
  const { rows } = await tx.query({
    name: 'delivery-take-early-statuses',
    text: `DELETE FROM whatsapp_early_statuses WHERE provider = $1 AND provider_message_id = $2
           RETURNING id, status, error_code, error_message`,
    values: [provider, providerMessageId],
  });
  if (rows.length === 0) return;
  rows.sort((a, b) => a.id - b.id);
  for (const r of rows) {
    const msg = await m.lockOutbound(tx, provider, providerMessageId, null);
    if (!msg) return;
    await applyDeliveryStatus(tx, msg, providerMessageId, { status: r.status, errorCode: r.error_code ?? undefined, errorMessage: r.error_message ?? undefined });
  }
}

// The lead never got our message: a person has to pick the conversation up.
async function deliveryFailed(tx: Queryable, msg: m.OutboundForStatus, s: DeliveryStatus): Promise<void> {
  const windowClosed = s.errorCode !== undefined && WINDOW_ERROR_CODES.has(s.errorCode);
  const data = {
    reason: windowClosed ? 'The 24-hour WhatsApp window was closed; the message was not delivered.' : 'A WhatsApp message could not be delivered.',
    outcome: windowClosed ? 'window_closed' : 'undelivered',
    messageId: msg.id,
    errorCode: s.errorCode ?? null,
  };
  // Only a conversation still in the agent's hands is escalated (a booked lead stays booked).
  const active = msg.leadStatus === 'new' || msg.leadStatus === 'in_conversation';
  const latest = active && (await m.isLatestOutbound(tx, msg.leadId, msg.id));
  const moved = latest ? await transitionLead(tx, { leadId: msg.leadId, to: 'needs_human', actor: 'system', event: { type: 'conversation.escalated', data } }) : null;
  if (!moved?.ok) await recordLeadEvent(tx, msg.leadId, 'message.failed', { ...data, actor: 'system' });
}

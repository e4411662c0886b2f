import type { ChatMessage } from '../agent/chat-model.ts';
import type { Queryable } from '../db/pool.ts';
import { lockLeadRow } from './conversation-queries.ts';

// WhatsApp messages of both directions (migrations/005_whatsapp_conversations.sql).

export type Provider = 'twilio' | 'meta';

/** Stores an inbound message; null when the provider already delivered this message id. */
export async function insertInbound(
  db: Queryable,
  m: { leadId: string; provider: Provider; providerMessageId: string; text: string; receivedAt: Date },
): Promise<number | null> {
  const { rows } = await db.query({
    name: 'message-insert-inbound',
    text: `INSERT INTO whatsapp_messages (lead_id, direction, provider, kind, body, provider_message_id, status, created_at, status_at)
           VALUES ($1, 'inbound', $2, 'text', $3, $4, 'received', $5, $5)
           ON CONFLICT (provider, provider_message_id) WHERE provider_message_id IS NOT NULL DO NOTHING
           RETURNING id`,
    values: [m.leadId, m.provider, m.text, m.providerMessageId, m.receivedAt],
  });
  return rows[0]?.id ?? null;
}

export interface HistoryRow {
  turnId: number;
  kind: 'first_contact' | 'reply' | 'operator';
  state: string;
  transcript: ChatMessage[];
  /** The lead's messages this turn answered, oldest first. */
  inbound: string[];
  /** What the turn sent (or is about to send); null when it wrote nothing. */
  outbound: string | null;
}

/**
 * The conversation up to and including `untilTurnId`, turn by turn, for the model's context:
 * each turn's inbound messages, its tool rounds, then its message. Messages that were never sent
 * (failed, cancelled) are left out: the lead did not see them.
 */
export async function conversationHistory(db: Queryable, leadId: string, untilTurnId: number): Promise<HistoryRow[]> {
  const { rows } = await db.query({
    name: 'message-history',
    text: `SELECT t.id, t.kind, t.state, t.transcript,
                  COALESCE((SELECT array_agg(m.body ORDER BY m.id) FROM whatsapp_messages m
                             WHERE m.turn_id = t.id AND m.direction = 'inbound'), '{}') AS inbound,
                  (SELECT m.body FROM whatsapp_messages m
                    WHERE m.turn_id = t.id AND m.direction = 'outbound' AND m.status NOT IN ('failed', 'undelivered', 'cancelled')) AS outbound
             FROM agent_turns t
            WHERE t.lead_id = $1 AND t.id <= $2
            ORDER BY t.id`,
    values: [leadId, untilTurnId],
  });
  return rows.map((r) => ({ turnId: r.id, kind: r.kind, state: r.state, transcript: r.transcript, inbound: r.inbound, outbound: r.outbound }));
}

export interface OutboundForStatus {
  id: number;
  leadId: string;
  leadStatus: string;
  turnId: number | null;
  status: string;
  providerMessageId: string | null;
}

/**
 * An outbound message by the provider's id, else by our idempotency key (a status callback can
 * carry it: Twilio's StatusCallback URL does), locked for the update that follows. Lock order
 * (docs/WHATSAPP.md): the message is found without a lock, its lead's row is locked, then the
 * message's (a message never changes lead, so the first read names the right one).
 */
export async function lockOutbound(db: Queryable, provider: Provider, providerMessageId: string, key: string | null): Promise<OutboundForStatus | null> {
  const found = await db.query({
    name: 'message-find-outbound',
    text: `SELECT id, lead_id FROM whatsapp_messages
            WHERE direction = 'outbound' AND ((provider = $1 AND provider_message_id = $2) OR idempotency_key = $3)
            ORDER BY (provider_message_id = $2) DESC NULLS LAST
            LIMIT 1`,
    values: [provider, providerMessageId, key],
  });
  if (!found.rows[0]) return null;
  await lockLeadRow(db, found.rows[0].lead_id);
  const { rows } = await db.query({
    name: 'message-lock-outbound',
    text: `SELECT m.id, m.lead_id, l.status AS lead_status, m.turn_id, m.status, m.provider_message_id
             FROM whatsapp_messages m JOIN leads l ON l.id = m.lead_id
            WHERE m.id = $1
              FOR UPDATE OF m`,
    values: [found.rows[0].id],
  });
  const r = rows[0];
  return r ? { id: r.id, leadId: r.lead_id, leadStatus: r.lead_status, turnId: r.turn_id, status: r.status, providerMessageId: r.provider_message_id } : null;
}

export async function updateOutboundStatus(
  db: Queryable,
  m: { id: number; status: string; providerMessageId: string; errorCode: string | null; errorMessage: string | null },
): Promise<void> {
  await db.query({
    name: 'message-update-status',
    text: `UPDATE whatsapp_messages SET status = $2, provider_message_id = COALESCE(provider_message_id, $3),
                  error_code = COALESCE($4, error_code), error_message = COALESCE($5, error_message), status_at = now()
            WHERE id = $1`,
    values: [m.id, m.status, m.providerMessageId, m.errorCode, m.errorMessage],
  });
}

/** Whether this message is the lead's latest outbound one (an older one failing changes less). */
export async function isLatestOutbound(db: Queryable, leadId: string, messageId: number): Promise<boolean> {
  const { rows } = await db.query({
    name: 'message-is-latest-outbound',
    text: `SELECT NOT EXISTS (SELECT 1 FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound' AND id > $2) AS latest`,
    values: [leadId, messageId],
  });
  return rows[0].latest;
}

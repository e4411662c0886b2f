import type { ChatMessage } from '../agent/chat-model.ts';
import type { Queryable } from '../db/pool.ts';

// WhatsApp messages of both directions (migrations/005_whatsapp_conversations.sql).

export type Provider = 'twilio' | 'meta';

/** Stores an inbound message; null when the provider already delivered this message id. */
export async function insertInbound(
  db: Queryable,
  m: { leadId: string; provider: Provider; providerMessageId: string; text: string; receivedAt: Date },
): Promise<number | null> {
  const { rows } = await db.query({
    name: 'message-insert-inbound',
    text: `INSERT INTO whatsapp_messages (lead_id, direction, provider,
           kind, body, provider_message_id, status, created_at, status_at)
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
  /** What the turn sent (or is about to send), its parts joined; null when it wrote nothing. */
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
                  (SELECT string_agg(m.body, E'\n\n' ORDER BY m.id) FROM whatsapp_messages m
                    WHERE m.turn_id = t.id AND m.direction = 'outbound'
                    AND m.status NOT IN ('failed', 'undelivered', 'cancelled')) AS outbound
             FROM agent_turns t
            WHERE t.lead_id = $1 AND t.id <= $2
            ORDER BY t.id`,
    values: [leadId, untilTurnId],
  });
  return rows.map((r) => ({
    turnId: r.id,
    kind: r.kind,
    state: r.state,
    transcript: r.transcript,
    inbound: r.inbound,
    outbound: r.outbound,
  }));
}

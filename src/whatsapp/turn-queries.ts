import type { ChatMessage } from '../agent/chat-model.ts';
import type { Queryable } from '../db/pool.ts';
import type { OutboundContent } from './messaging-provider.ts';
import { capTranscript } from './transcript-caps.ts';
import type { PlanOnSent } from '../contact-plan/whatsapp-ladder.ts';

// Agent turns and their checkpoints (migrations/005_whatsapp_conversations.sql). Every change of
// state names the state it expects, so a turn that somehow ran twice cannot finish twice. An
// outbound message's idempotency key is random (whatsapp_outbound_key, migrations/032) and stored
// with it, so a retried send reuses it and nobody can guess another message's key.

/**
 * `operator`: a message an operator wrote in the dashboard, sent through the same path (src/admin/operator-reply.ts).
 */
export type TurnKind = 'first_contact' | 'reply' | 'operator' | 'follow_up' | 'nudge';
export type TurnState = 'generating' | 'ready' | 'sent' | 'silent' | 'failed' | 'cancelled';

export interface AgentTurn {
  id: number;
  leadId: string;
  kind: TurnKind;
  state: TurnState;
  transcript: ChatMessage[];
  createdAt: Date;
}

export interface OutboundMessage {
  id: number;
  idempotencyKey: string;
  content: OutboundContent;
  body: string;
  status: string;
  providerMessageId: string | null;
}

function turnFromRow(r: Record<string, any>): AgentTurn {
  return {
    id: r.id,
    leadId: r.lead_id,
    kind: r.kind,
    state: r.state,
    transcript: r.transcript,
    createdAt: r.created_at,
  };
}

/** The lead's unfinished turn (at most one exists: a partial unique index). */
export async function findOpenTurn(db: Queryable, leadId: string): Promise<AgentTurn | null> {
  const { rows } = await db.query({
    name: 'turn-find-open',
    text: `SELECT * FROM agent_turns WHERE lead_id = $1 AND state IN ('generating', 'ready')`,
    values: [leadId],
  });
  return rows[0] ? turnFromRow(rows[0]) : null;
}

/** One first contact to store: the lead and its template message. */
export interface FirstContact {
  leadId: string;
  provider: 'twilio' | 'meta';
  body: string;
  variables: string[];
  /** What its send means for the lead's contact plan (src/contact-plan/whatsapp-ladder.ts). */
  planOnSent?: PlanOnSent | null;
}

/**
 * The first contact: the turn and its template message, stored together and ready to send (no
 * model is involved). Returns both, so the send needs no second read.
 */
export async function createFirstContactTurn(
  db: Queryable,
  t: FirstContact,
): Promise<{ turn: AgentTurn; message: OutboundMessage }> {
  return (await createFirstContactTurns(db, [t]))[0]!;
}

/** The first contacts of several leads (each lead at most once) in one statement; results in the order given. */
export async function createFirstContactTurns(
  db: Queryable,
  contacts: FirstContact[],
): Promise<{ turn: AgentTurn; message: OutboundMessage }[]> {
  const { rows } = await db.query({
    name: 'turn-create-first-contacts',
    text: `WITH input AS (
             SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[],
             $4::jsonb[], $5::jsonb[]) WITH ORDINALITY AS i(lead_id, provider, body, variables, plan, ord)
           ), turn AS (
             INSERT INTO agent_turns (lead_id, kind, state, plan_on_sent)
             SELECT lead_id, 'first_contact', 'ready', NULLIF(plan, 'null') FROM input ORDER BY ord RETURNING *
           ), message AS (
             INSERT INTO whatsapp_messages (lead_id, direction, turn_id,
             provider, kind, body, template_variables, idempotency_key, status)
             SELECT turn.lead_id, 'outbound', turn.id, input.provider, 'template', input.body, input.variables,
                    whatsapp_outbound_key(), 'pending'
               FROM turn JOIN input ON input.lead_id = turn.lead_id
             RETURNING id, turn_id, idempotency_key, kind, body, template_variables, status, provider_message_id
           )
           SELECT turn.*, to_jsonb(message) AS message, input.ord FROM turn
             JOIN message ON message.turn_id = turn.id
             JOIN input ON input.lead_id = turn.lead_id
            ORDER BY input.ord`,
    values: [
      contacts.map((c) => c.leadId),
      contacts.map((c) => c.provider),
      contacts.map((c) => c.body),
      contacts.map((c) => JSON.stringify(c.variables)),
      contacts.map((c) => JSON.stringify(c.planOnSent ?? null)),
    ],
  });
  return rows.map((r) => ({ turn: turnFromRow(r), message: outboundFromRow(r.message) }));
}

/**
 * Starts a reply turn that answers every inbound message nobody answered yet, claiming them in the
 * same statement (commit order, not id order, decides what a turn sees: a message committed later
 * is left for the next turn). Null, and nothing written, when there is nothing to answer. Run it
 * in a transaction that has locked the lead's row first (docs/WHATSAPP.md, "Lock order").
 */
export async function startReplyTurn(
  db: Queryable,
  leadId: string,
  planOnSent: PlanOnSent | null = null,
): Promise<AgentTurn | null> {
  const { rows } = await db.query({
    name: 'turn-start-reply',
    text: `WITH unanswered AS (
             SELECT id FROM whatsapp_messages
              WHERE lead_id = $1 AND direction = 'inbound' AND turn_id IS NULL
              FOR UPDATE SKIP LOCKED
           ), turn AS (
             INSERT INTO agent_turns (lead_id, kind, state, plan_on_sent)
             SELECT $1, 'reply', 'generating', $2::jsonb WHERE EXISTS (SELECT 1 FROM unanswered)
             RETURNING *
           ), claimed AS (
             UPDATE whatsapp_messages m SET turn_id = turn.id FROM turn, unanswered WHERE m.id = unanswered.id
           )
           SELECT * FROM turn`,
    values: [leadId, planOnSent ? JSON.stringify(planOnSent) : null],
  });
  return rows[0] ? turnFromRow(rows[0]) : null;
}

/**
 * Checkpoint of the model loop: the transcript so far, and how many model calls it cost. Tool
 * arguments and answers are stored within their bounds (transcript-caps.ts): what is stored is
 * replayed in every later request of the lead.
 */
export async function saveTranscript(
  db: Queryable,
  turnId: number,
  transcript: ChatMessage[],
  modelCalls: number,
): Promise<void> {
  await db.query({
    name: 'turn-save-transcript',
    text: `UPDATE agent_turns SET transcript = $2, model_calls = model_calls + $3,
      updated_at = now() WHERE id = $1 AND state = 'generating'`,
    values: [turnId, JSON.stringify(capTranscript(transcript)), modelCalls],
  });
}

/**
 * The model's answer is stored as the turn's outbound messages, one per part, in order (their ids
 * follow the parts' order); the turn is ready to send.
 */
export async function storeReply(
  db: Queryable,
  t: { turnId: number; leadId: string; provider: 'twilio' | 'meta'; parts: string[] },
): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'turn-store-reply',
    text: `WITH turn AS (
             UPDATE agent_turns SET state = 'ready', model_calls = model_calls + 1, updated_at = now()
              WHERE id = $1 AND state = 'generating' RETURNING id
           )
           INSERT INTO whatsapp_messages (lead_id, direction, turn_id, provider, kind, body, idempotency_key, status)
           SELECT $2, 'outbound', turn.id, $3, 'text', p.body, whatsapp_outbound_key(), 'pending'
             FROM turn, unnest($4::text[]) WITH ORDINALITY AS p(body, ord)
            ORDER BY p.ord`,
    values: [t.turnId, t.leadId, t.provider, t.parts],
  });
  return (rowCount ?? 0) > 0;
}

/**
 * The model's refused answer and the server's correction appended to the turn's transcript (the
 * turn stays `generating`: the next model call reads them).
 */
export async function appendToTranscript(db: Queryable, turnId: number, messages: ChatMessage[], modelCalls: number) {
  await db.query({
    name: 'turn-append-transcript',
    text: `UPDATE agent_turns SET transcript = transcript || $2::jsonb, model_calls = model_calls + $3,
                  updated_at = now()
            WHERE id = $1 AND state = 'generating'`,
    values: [turnId, JSON.stringify(messages), modelCalls],
  });
}

/** Whether the lead has a booking (a message may say so only then). */
export async function leadHasBooking(db: Queryable, leadId: string): Promise<boolean> {
  const { rows } = await db.query({
    name: 'turn-lead-booked',
    text: 'SELECT booking_uid IS NOT NULL AS booked FROM leads WHERE id = $1',
    values: [leadId],
  });
  return rows[0]?.booked === true;
}

/** Ends a turn (and its message, when it was never accepted) in a final state. */
export async function finishTurn(
  db: Queryable,
  t: { turnId: number; from: TurnState[]; to: TurnState; outcome?: string; modelCalls?: number },
): Promise<boolean> {
  const { rows } = await db.query({
    name: 'turn-finish',
    text: `WITH turn AS (
             UPDATE agent_turns SET state = $3, outcome = $4, model_calls = model_calls + $5, updated_at = now()
              WHERE id = $1 AND state = ANY($2::text[]) RETURNING id
           ), message AS (
             UPDATE whatsapp_messages m SET status = CASE WHEN $3 = 'failed' THEN 'failed' ELSE 'cancelled' END,
                    error_code = COALESCE(m.error_code, $4), status_at = now()
               FROM turn WHERE m.turn_id = turn.id
               AND m.direction = 'outbound' AND m.status = 'pending' AND $3 <> 'sent'
           )
           SELECT id FROM turn`,
    values: [t.turnId, t.from, t.to, t.outcome ?? null, t.modelCalls ?? 0],
  });
  return rows.length === 1;
}

/**
 * The turn's next outbound message to send: its first pending one, in the order stored; when none
 * is pending, its last (a status callback got there before the send was recorded).
 */
export async function findOutbound(db: Queryable, turnId: number): Promise<OutboundMessage | null> {
  const { rows } = await db.query({
    name: 'turn-find-outbound',
    text: `SELECT id, idempotency_key, kind, body, template_variables, template_ref, status, provider_message_id
             FROM whatsapp_messages WHERE turn_id = $1 AND direction = 'outbound'
            ORDER BY status = 'pending' DESC, CASE WHEN status = 'pending' THEN id ELSE -id END
            LIMIT 1`,
    values: [turnId],
  });
  return rows[0] ? outboundFromRow(rows[0]) : null;
}

function outboundFromRow(r: Record<string, any>): OutboundMessage {
  const content: OutboundContent =
    r.kind === 'template'
      ? { kind: 'template', variables: r.template_variables ?? [], ...(r.template_ref ? { ref: r.template_ref } : {}) }
      : { kind: 'text', text: r.body };
  return {
    id: Number(r.id),
    idempotencyKey: r.idempotency_key,
    content,
    body: r.body,
    status: r.status,
    providerMessageId: r.provider_message_id,
  };
}

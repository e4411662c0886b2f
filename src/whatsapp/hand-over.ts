import type { ChatFailure } from '../agent/chat-model.ts';
import { GUARD_PROBLEMS, type GuardProblem } from '../agent/outbound-guard.ts';
import type { Queryable } from '../db/pool.ts';
import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';
import { lockLeadRow } from '../leads/lead-lock.ts';
import type { TurnSubject } from './conversation-queries.ts';
import { finishTurn, type AgentTurn } from './turn-queries.ts';

// A turn that ends without an answer for the lead hands the lead to a person: the lead goes
// `needs_human` with the reason on its timeline (the status change fires `lead.status_changed`
// and the dashboard's needs-human alert), and, while the 24-hour window is open, the lead gets the
// workspace's holding message. The holding message is stored as the turn's own outbound message,
// so it goes out through the checkpointed send path: recorded, retried, delivery statuses kept.
// docs/WHATSAPP.md, "When the agent cannot answer".

/** What the lead hears when the agent hands over and the workspace has not written its own. */
export const DEFAULT_HOLDING_MESSAGE = 'Thanks — a colleague will reply shortly.';

/** The reason on the timeline of a lead whose answer the kill switch stopped. */
export const AGENT_OFF = 'The agent is switched off for this workspace; a person answers the lead.';

/**
 * Outcomes of a hand-over whose turn may still send the holding message (src/whatsapp/turn-rules.ts),
 * the outbound guard's refusals among them (src/whatsapp/reply-guard.ts).
 */
export const HAND_OVER_OUTCOMES: ReadonlySet<string> = new Set([
  'model_failed',
  'model_answer_unusable',
  'model_wait_too_long',
  'insufficient_quota',
  'context_overflow',
  'too_many_tool_rounds',
  'agent_off',
  ...GUARD_PROBLEMS.map(refusedOutcome),
]);

/** The outcome of a hand-over after the outbound guard refused the agent's answer twice. */
export function refusedOutcome(problem: GuardProblem): string {
  return `message_refused_${problem}`;
}

/**
 * A turn to run again: `afterMs`, not before then (a server's Retry-After, the gate's cool-down);
 * `keepAttempt`, the attempt was not spent (src/whatsapp/turn-worker.ts reschedules the job).
 */
export type RetryResult = { kind: 'retry'; reason: string; afterMs?: number; keepAttempt?: boolean };

/** A turn's model failure: hand the lead over now, or try the turn again. */
export type FailurePlan = { kind: 'hand_over'; outcome: string; reason: string } | RetryResult;

/**
 * What a failed model call leads to. `lastAttempt`: the job has no retry left. `maxWaitMs`: the
 * longest wait a server may ask for before the lead goes to a person instead of waiting in silence.
 */
export function planForFailure(f: ChatFailure, lastAttempt: boolean, maxWaitMs: number): FailurePlan {
  switch (f.kind) {
    case 'insufficient_quota':
      return handOverFor('insufficient_quota', 'The chat model account has no quota left (insufficient_quota).');
    case 'context_overflow':
      return handOverFor('context_overflow', 'The conversation is longer than the chat model accepts.');
    case 'fatal':
      return handOverFor('model_answer_unusable', `The chat model could not be used: ${f.message}`);
    case 'retryable': {
      // Not tried at all (the workspace's calls were all in use): no attempt was spent.
      if (f.deferred) return { kind: 'retry', reason: f.message, afterMs: f.retryAfterMs ?? 0, keepAttempt: true };
      const asked = f.retryAfterMs;
      if (asked !== undefined && asked > maxWaitMs) {
        const wait = `The chat model asked to wait ${Math.round(asked / 1000)} s before the next request`;
        return handOverFor('model_wait_too_long', `${wait}; a person answers the lead meanwhile.`);
      }
      if (lastAttempt) return handOverFor('model_failed', `The chat model kept failing; the last time: ${f.message}`);
      return { kind: 'retry', reason: f.message, ...(asked !== undefined ? { afterMs: asked } : {}) };
    }
  }
}

const handOverFor = (outcome: string, reason: string): FailurePlan => ({ kind: 'hand_over', outcome, reason });

export interface HandOverInput {
  s: TurnSubject;
  turn: AgentTurn;
  outcome: string;
  reason: string;
  /** The holding message and the provider it goes out on; null when it must not be sent (window closed). */
  holding: { text: string; provider: 'twilio' | 'meta' } | null;
}

/**
 * In the caller's transaction: the lead to `needs_human` (or the escalation on its timeline when
 * it is already elsewhere), and the turn either given the holding message (ready to send) or
 * ended `failed`. True when the holding message was stored.
 */
export async function handOver(tx: Queryable, h: HandOverInput): Promise<boolean> {
  const { s, turn } = h;
  await lockLeadRow(tx, s.lead.id); // before the turn's message (lock order)
  const data = { reason: h.reason, outcome: h.outcome, turnId: turn.id };
  const event = { type: 'conversation.escalated', data: { ...data, holdingMessage: h.holding !== null } };
  const moved = await transitionLead(tx, { leadId: s.lead.id, to: 'needs_human', actor: 'system', event });
  if (!moved.ok) {
    await recordLeadEvent(tx, s.lead.id, 'conversation.escalated', { ...data, status: s.lead.status, actor: 'system' });
  }
  // Only the turn that moved the lead speaks for it: a lead someone else already has hears nothing.
  if (moved.ok && h.holding && (await storeHoldingMessage(tx, turn.id, s.lead.id, h.outcome, h.holding))) return true;
  await finishTurn(tx, { turnId: turn.id, from: ['generating', 'ready'], to: 'failed', outcome: h.outcome });
  return false;
}

/**
 * In the caller's transaction: a lead whose turn cannot go on until an operator acts (the
 * provider refused the workspace's settings, the send or the turn kept failing until the job's
 * last attempt) goes to `needs_human` with `conversation.escalated` (`outcome`, `reason`). A lead
 * that is not `new` or `in_conversation` keeps its status (a booked lead stays booked) and gets
 * the event only. The turn is left as it is: the job is dead-lettered, and `leadintake jobs retry`
 * resumes it once the cause is fixed (turn-rules.ts, waitingForRetry). Also for a message the
 * agent will not answer (`messageId`, src/whatsapp/inbound-service.ts). False: no such lead.
 */
export async function handOverUntilRetried(
  tx: Queryable,
  leadId: string,
  h: { outcome: string; reason: string; turnId?: number; messageId?: number },
): Promise<boolean> {
  const { rows } = await tx.query({
    name: 'hand-over-lock-status',
    text: 'SELECT status FROM leads WHERE id = $1 FOR UPDATE',
    values: [leadId],
  });
  const status: string | undefined = rows[0]?.status;
  if (!status) return false;
  const data = {
    reason: h.reason,
    outcome: h.outcome,
    ...(h.turnId !== undefined ? { turnId: h.turnId } : {}),
    ...(h.messageId !== undefined ? { messageId: h.messageId } : {}),
  };
  const event = { type: 'conversation.escalated', data };
  const moved =
    (status === 'new' || status === 'in_conversation') &&
    (await transitionLead(tx, { leadId, to: 'needs_human', actor: 'system', event })).ok;
  if (!moved) await recordLeadEvent(tx, leadId, event.type, { ...data, status, actor: 'system' });
  return true;
}

/** Whether `turn` is the one that handed the lead over just now: its holding message may go out. */
export function isHandOverTurn(s: TurnSubject, turn: AgentTurn): boolean {
  const t = s.lead.lastTransition;
  const outcome = t?.outcome ?? '';
  return (
    turn.kind === 'reply' &&
    s.lead.status === 'needs_human' &&
    t !== null &&
    t.actor === 'system' &&
    t.at >= turn.createdAt &&
    HAND_OVER_OUTCOMES.has(outcome)
  );
}

/** The workspace's holding message (the Agent page), or the default. */
export function holdingMessageOf(agent: { holdingMessage?: string | undefined }): string {
  return agent.holdingMessage ?? DEFAULT_HOLDING_MESSAGE;
}

async function storeHoldingMessage(
  tx: Queryable,
  turnId: number,
  leadId: string,
  outcome: string,
  m: { text: string; provider: string },
): Promise<boolean> {
  const { rowCount } = await tx.query({
    name: 'hand-over-store-holding',
    text: `WITH turn AS (
             UPDATE agent_turns SET state = 'ready', outcome = $5, updated_at = now()
              WHERE id = $1 AND state = 'generating' RETURNING id
           )
           INSERT INTO whatsapp_messages (lead_id, direction, turn_id, provider, kind, body, idempotency_key, status)
           SELECT $2, 'outbound', id, $3, 'text', $4, whatsapp_outbound_key(), 'pending' FROM turn`,
    values: [turnId, leadId, m.provider, m.text, outcome],
  });
  return rowCount === 1;
}

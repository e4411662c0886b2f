import type { ChatMessage } from '../agent/chat-model.ts';
import { changed, checkOutbound, correctionFor } from '../agent/outbound-guard.ts';
import type { GuardChanges, GuardProblem } from '../agent/outbound-guard.ts';
import type { AgentConfig } from '../workspaces/agent-config.ts';
import type { PoolClient } from '../db/pool.ts';
import { recordLeadEvent } from '../leads/lead-state.ts';
import { lockLeadRow } from '../leads/lead-lock.ts';
import { inTransaction } from '../leads/lead-lock.ts';
import { refusedOutcome } from './hand-over.ts';
import { MESSAGE_LIMITS } from './outbound-text.ts';
import * as q from './turn-queries.ts';

// The outbound guard applied to a WhatsApp reply turn (docs/WHATSAPP.md, "What is sent"): the
// model's answer is checked (src/agent/outbound-guard.ts) and stored as one or more messages, or
// refused. A refused answer is put back to the model once with the reason, checkpointed in the
// turn's transcript like a tool round; refused again, the lead goes to a person. What the guard
// changed or refused is on the lead's timeline (`agent.message_checked`): counts, link hosts and
// the reason, never the text.

/** The timeline entry of the guard. */
export const MESSAGE_CHECKED = 'agent.message_checked';
/** Starts the server's correction in a turn's transcript: how many re-asks a turn had. */
export const CHECK_PREFIX = 'Server check (not from the lead):';
/** The model is asked again this many times before the lead is handed to a person. */
const MAX_REASKS = 1;
/** What of a refused answer goes back to the model with the correction. */
const ECHO_LIMIT = 1000;

export type ReplyDecision =
  | { kind: 'stored' }
  | { kind: 'reask' }
  | { kind: 'hand_over'; outcome: string; reason: string };

const REASONS: Record<GuardProblem, string> = {
  cut: "was cut off by the model's length limit",
  degenerate: 'was not a readable message (oversized, or one character repeated)',
  empty: 'was empty once markup and placeholders were removed',
  too_long: 'was too long even split into several messages',
  booking_claim: 'claimed a booking the lead does not have',
};

/** Re-asks so far in this turn's transcript. */
export function reasks(transcript: ChatMessage[]): number {
  return transcript.filter((m) => m.role === 'system' && m.content.startsWith(CHECK_PREFIX)).length;
}

/**
 * What the model said along with its tool calls in this turn since the last server check: words
 * for the lead too ("a colleague will call you"), sent with its final answer.
 */
export function spokenWithTools(transcript: ChatMessage[]): string[] {
  const last = transcript.findLastIndex((m) => m.role === 'system' && m.content.startsWith(CHECK_PREFIX));
  return transcript
    .slice(last + 1)
    .flatMap((m) => (m.role === 'assistant' && m.tool_calls?.length && m.content?.trim() ? [m.content.trim()] : []));
}

export interface CheckReplyInput {
  leadId: string;
  turn: q.AgentTurn;
  provider: 'twilio' | 'meta';
  agent: AgentConfig;
  text: string;
  finishReason?: string | undefined;
}

/** Checks the model's answer and stores it as the turn's messages, or refuses it. */
export async function checkReply(db: PoolClient, r: CheckReplyInput): Promise<ReplyDecision> {
  const limit = MESSAGE_LIMITS[r.provider];
  const verdict = checkOutbound({
    text: r.text,
    finishReason: r.finishReason,
    hasBooking: await q.leadHasBooking(db, r.leadId),
    allowedDomains: r.agent.allowedLinkDomains ?? [],
    limit,
  });
  if (verdict.kind === 'send') {
    const { parts, changes } = verdict;
    await inTransaction(db, async (tx) => {
      await lockLeadRow(tx, r.leadId); // before the turn's messages (lock order)
      if (!(await q.storeReply(tx, { turnId: r.turn.id, leadId: r.leadId, provider: r.provider, parts }))) return;
      if (changed(changes) || parts.length > 1) {
        await recordLeadEvent(tx, r.leadId, MESSAGE_CHECKED, eventData(r.turn, 'sent', changes, null, parts.length));
      }
    });
    return { kind: 'stored' };
  }
  const { problem, changes } = verdict;
  if (reasks(r.turn.transcript) >= MAX_REASKS) {
    await recordLeadEvent(db, r.leadId, MESSAGE_CHECKED, eventData(r.turn, 'handed_over', changes, problem, 0));
    const reason = `The agent's answer ${REASONS[problem]}, also when asked again; nothing was sent.`;
    return { kind: 'hand_over', outcome: refusedOutcome(problem), reason };
  }
  const echo = r.text.length > ECHO_LIMIT ? `${r.text.slice(0, ECHO_LIMIT)}…` : r.text;
  await inTransaction(db, async (tx) => {
    await q.appendToTranscript(
      tx,
      r.turn.id,
      [
        { role: 'assistant', content: echo },
        { role: 'system', content: `${CHECK_PREFIX} ${correctionFor(problem, limit)}` },
      ],
      1,
    );
    await recordLeadEvent(tx, r.leadId, MESSAGE_CHECKED, eventData(r.turn, 'asked_again', changes, problem, 0));
  });
  return { kind: 'reask' };
}

function eventData(turn: q.AgentTurn, action: string, c: GuardChanges, problem: GuardProblem | null, parts: number) {
  const { html, markdown, placeholders, links } = c;
  const removed = changed(c) ? { removed: { html, markdown, placeholders, links } } : {};
  return {
    turnId: turn.id,
    action,
    actor: 'system',
    ...(problem ? { problem, reason: `The agent's answer ${REASONS[problem]}.` } : {}),
    ...(parts > 1 ? { parts } : {}),
    ...removed,
  };
}

import type { ChatMessage, ChatToolCall } from '../agent/chat-model.ts';
import type { HistoryRow } from './message-queries.ts';

// The conversation as the model reads it: for each earlier turn the lead's messages, the tool
// rounds the agent ran and what it wrote, then the current turn's messages from the lead. Earlier
// tool results stay in (the slots listed yesterday are what "the first one" refers to today).

/** Introduces an operator's message in the model's context. */
export const OPERATOR_NOTE =
  'A person from the team took this conversation over and has handled what it was handed over for. ' +
  'They wrote to the lead (this message is theirs, not yours); continue the conversation from here and do not hand it over again for the same reason:';

/** Every turn before `currentTurnId` in full, then the lead's messages the current turn answers. */
export function historyMessages(rows: HistoryRow[], currentTurnId: number): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const row of rows) {
    for (const text of row.inbound) out.push({ role: 'user', content: text });
    if (row.turnId === currentTurnId) break;
    out.push(...completeRounds(row.transcript));
    if (row.kind === 'operator') {
      // A person handled the conversation here (docs/DASHBOARD.md, "Resume AI"): the model must
      // know that it did not write this, and that what it handed over has been dealt with, or it
      // hands the lead over again for the same reason.
      if (row.outbound !== null) out.push({ role: 'system', content: `${OPERATOR_NOTE}\n\n${row.outbound}` });
      continue;
    }
    if (row.outbound !== null) out.push({ role: 'assistant', content: row.outbound });
  }
  return out;
}

/**
 * The transcript without a final round whose tool results are missing (a turn that ended while
 * its tools ran): chat-completions servers reject tool calls that have no answer.
 */
export function completeRounds(transcript: ChatMessage[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  let i = 0;
  while (i < transcript.length) {
    const m = transcript[i]!;
    if (m.role !== 'assistant' || !m.tool_calls?.length) {
      i++;
      continue;
    }
    const results = transcript.slice(i + 1, i + 1 + m.tool_calls.length);
    const answered = m.tool_calls.every((c) => results.some((r) => r.role === 'tool' && r.tool_call_id === c.id));
    if (!answered) break;
    out.push(m, ...results);
    i += 1 + m.tool_calls.length;
  }
  return out;
}

/** The tool calls of the last round that have no result yet (a crash interrupted them). */
export function unansweredToolCalls(transcript: ChatMessage[]): ChatToolCall[] {
  for (let i = transcript.length - 1; i >= 0; i--) {
    const m = transcript[i]!;
    if (m.role === 'assistant' && m.tool_calls?.length) {
      const done = new Set(transcript.slice(i + 1).flatMap((r) => (r.role === 'tool' ? [r.tool_call_id] : [])));
      return m.tool_calls.filter((c) => !done.has(c.id));
    }
  }
  return [];
}

/** How many tool rounds the transcript holds. */
export function toolRounds(transcript: ChatMessage[]): number {
  return transcript.filter((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0).length;
}

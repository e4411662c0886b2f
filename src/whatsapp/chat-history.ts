import type { ChatMessage, ChatToolCall } from '../agent/chat-model.ts';
import type { HistoryRow } from './message-queries.ts';
import { capMessage, capText, HISTORY_LIMITS } from './transcript-caps.ts';

// The conversation as the model reads it: for each earlier turn the lead's messages, the tool
// rounds the agent ran and what it wrote, then the current turn's messages from the lead. Earlier
// tool results stay in, trimmed (the slots listed yesterday are what "the first one" refers to
// today). The whole stays within a budget however long the conversation: the most recent turns
// verbatim, the older ones left out whole, with one line saying so; what matters of them is in
// the prompt's lead data (answers, notes).

/** Characters of earlier turns in one request (some 6k tokens): recent turns verbatim, older ones left out. */
export const HISTORY_BUDGET_CHARS = 24_000;
/** Characters of one message of the lead (a provider allows 4,096 at most). */
const LEAD_MESSAGE_MAX = 4096;

/** Introduces an operator's message in the model's context. */
export const OPERATOR_NOTE =
  'A person from the team took this conversation over and has handled what it was handed over for. ' +
  'They wrote to the lead (this message is theirs, not yours); continue the conversation from here ' +
  'and do not hand it over again for the same reason:';

/**
 * The turns before `currentTurnId` that fit in `budget` characters (newest first, whole turns
 * only), then the lead's messages the current turn answers (always, each within its bound).
 */
export function historyMessages(
  rows: HistoryRow[],
  currentTurnId: number,
  budget = HISTORY_BUDGET_CHARS,
): ChatMessage[] {
  const earlier: ChatMessage[][] = [];
  const current: ChatMessage[] = [];
  for (const row of rows) {
    const inbound = row.inbound.map((t): ChatMessage => ({ role: 'user', content: capText(t, LEAD_MESSAGE_MAX) }));
    if (row.turnId === currentTurnId) {
      current.push(...inbound);
      break;
    }
    earlier.push([...inbound, ...turnMessages(row)]);
  }
  let used = 0;
  let kept = earlier.length;
  while (kept > 0) {
    const size = chars(earlier[kept - 1]!);
    if (used + size > budget) break;
    used += size;
    kept--;
  }
  const dropped = kept;
  const note: ChatMessage[] = dropped === 0 ? [] : [{ role: 'system', content: leftOutNote(dropped) }];
  return [...note, ...earlier.slice(dropped).flat(), ...current];
}

/** One earlier turn as the model reads it: its tool rounds, trimmed, then its message. */
function turnMessages(row: HistoryRow): ChatMessage[] {
  const out = completeRounds(row.transcript).map((m) => capMessage(m, HISTORY_LIMITS));
  if (row.kind === 'operator') {
    // A person handled the conversation here (docs/DASHBOARD.md, "Resume AI"): the model must
    // know that it did not write this, and that what it handed over has been dealt with, or it
    // hands the lead over again for the same reason.
    if (row.outbound !== null) out.push({ role: 'system', content: `${OPERATOR_NOTE}\n\n${row.outbound}` });
    return out;
  }
  if (row.outbound !== null) out.push({ role: 'assistant', content: row.outbound });
  return out;
}

/** The one line that stands for the turns left out. */
export function leftOutNote(turns: number): string {
  return (
    `The ${turns} oldest turn(s) of this conversation are left out to keep this request short. What the lead ` +
    'answered and your notes are in the lead data above; ask again only if something you need is missing.'
  );
}

function chars(messages: ChatMessage[]): number {
  return messages.reduce((n, m) => n + JSON.stringify(m).length, 0);
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

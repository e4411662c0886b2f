import type { ChatMessage, ChatToolCall } from '../agent/chat-model.ts';
import { capText, STORED_LIMITS, wereOmitted } from './transcript-caps.ts';

// One round of tool calls, bounded. A model may ask for many calls in one message (20 listSlots,
// each a Cal.com query): identical calls (same tool, same arguments) run once and every call id
// gets that answer; of the different calls only the first MAX_TOOL_CALLS_PER_ROUND run, the others
// are answered with a refusal the model can act on. Every call id is answered either way, as
// chat-completions servers require. Decided from the round as stored, so a turn resumed after a
// crash makes the same decisions and runs only what has no answer yet.

/** Different tool calls run in one round; the rest are refused. */
export const MAX_TOOL_CALLS_PER_ROUND = 5;

/** Answers every call of the transcript's last round that has no answer yet, in order. */
export async function answerToolRound(
  transcript: ChatMessage[],
  run: (call: ChatToolCall) => Promise<string>,
  checkpoint: () => Promise<void>,
): Promise<void> {
  const at = transcript.findLastIndex((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0);
  if (at < 0) return;
  const calls = (transcript[at] as Extract<ChatMessage, { role: 'assistant' }>).tool_calls!;
  const answers = new Map<string, string>();
  for (const m of transcript.slice(at + 1)) if (m.role === 'tool') answers.set(m.tool_call_id, m.content);
  const keys = calls.map(callKey);
  const distinct = [...new Set(keys)];
  let unsaved = false;
  for (const [i, call] of calls.entries()) {
    if (answers.has(call.id)) continue;
    const key = keys[i]!;
    const twin = calls.find((c, j) => keys[j] === key && answers.has(c.id));
    let content: string;
    if (twin) content = answers.get(twin.id)!;
    else if (distinct.indexOf(key) >= MAX_TOOL_CALLS_PER_ROUND) content = refusal(call);
    else if (wereOmitted(call.function.arguments)) content = oversized(call);
    else content = capText(await run(call), STORED_LIMITS.result);
    answers.set(call.id, content);
    transcript.push({ role: 'tool', tool_call_id: call.id, content });
    unsaved = true;
    // Checkpointed after each call that ran: a retry must not run it again.
    if (!twin && distinct.indexOf(key) < MAX_TOOL_CALLS_PER_ROUND) {
      await checkpoint();
      unsaved = false;
    }
  }
  if (unsaved) await checkpoint();
}

function refusal(call: ChatToolCall): string {
  return (
    `Not run: at most ${MAX_TOOL_CALLS_PER_ROUND} different tool calls are run per round. ` +
    `Call ${capText(String(call.function.name), 64)} again in your next message if you still need it.`
  );
}

function oversized(call: ChatToolCall): string {
  const name = capText(String(call.function.name), 64);
  return `Not run: the arguments of this ${name} call were too long. Nothing was done; call it again with short ones.`;
}

/** Tool and arguments, the arguments' keys sorted when they are JSON, so key order does not matter. */
function callKey(call: ChatToolCall): string {
  const args = call.function.arguments;
  let canonical = typeof args === 'string' ? args : JSON.stringify(args);
  try {
    canonical = JSON.stringify(sorted(JSON.parse(canonical)));
  } catch {
    // Not JSON: compared as sent (the tool answers that it is invalid).
  }
  return `${call.function.name}\u0000${canonical}`;
}

function sorted(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sorted);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.keys(value)
      .sort()
      .map((k) => [k, sorted((value as Record<string, unknown>)[k])]),
  );
}

import { createHash } from 'node:crypto';
import type { ChatMessage, ChatToolCall } from '../agent/chat-model.ts';

// Size bounds on what a turn checkpoints and replays: a tool call's arguments, a tool's answer and
// the text that came with tool calls. One answer of the model (megabytes of arguments, say) would
// otherwise be stored in agent_turns.transcript and sent back in every later request of the lead,
// until the model refuses the request as too long, for ever. Arguments over their bound are not
// cut (cut JSON would be replayed as broken JSON) but replaced by a small JSON object saying so,
// and such a call is answered without running (reply-generator.ts).

export interface TranscriptLimits {
  /** Characters of one tool call's arguments (JSON text). */
  arguments: number;
  /** Characters of one tool answer. */
  result: number;
  /** Characters of the text that came with tool calls. */
  text: number;
}

/** What a turn stores and sends back within the turn. */
export const STORED_LIMITS: TranscriptLimits = { arguments: 4096, result: 4096, text: 4096 };

/** Earlier turns in the model's context (chat-history.ts): what yesterday's tools said matters less. */
export const HISTORY_LIMITS: TranscriptLimits = { arguments: 1024, result: 1500, text: 1500 };

const OMITTED = '_omitted';

/** The arguments of a call over the bound, as stored: valid JSON that says what happened. */
export function omittedArguments(length: number, max: number): string {
  return JSON.stringify({ [OMITTED]: `arguments of ${length} characters, over the limit of ${max}` });
}

/** Whether stored arguments are the placeholder of arguments over the bound (the call is not run). */
export function wereOmitted(args: string): boolean {
  return args.length < 200 && args.startsWith(`{"${OMITTED}":`);
}

export function capText(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

const ID_MAX = 128;

/** A call id over its bound, replaced the same way in the call and in its answer, so they still match. */
function capId(id: string): string {
  if (typeof id === 'string' && id.length <= ID_MAX) return id;
  return `call_${createHash('sha256').update(String(id)).digest('hex').slice(0, 32)}`;
}

function capCall(c: ChatToolCall, limits: TranscriptLimits): ChatToolCall {
  const raw: unknown = c.function.arguments;
  const args = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? '');
  const name = capText(String(c.function.name), 64);
  const id = capId(c.id);
  if (args.length <= limits.arguments && name === c.function.name && id === c.id) return c;
  return {
    ...c,
    id,
    function: {
      name,
      arguments: args.length <= limits.arguments ? args : omittedArguments(args.length, limits.arguments),
    },
  };
}

export function capMessage(m: ChatMessage, limits: TranscriptLimits): ChatMessage {
  if (m.role === 'tool') {
    const id = capId(m.tool_call_id);
    if (m.content.length <= limits.result && id === m.tool_call_id) return m;
    return { ...m, tool_call_id: id, content: capText(m.content, limits.result) };
  }
  if (m.role !== 'assistant') return m;
  if (!m.tool_calls?.length) {
    if (m.content === null || m.content.length <= limits.text) return m;
    return { ...m, content: capText(m.content, limits.text) };
  }
  return {
    ...m,
    content: m.content === null ? null : capText(m.content, limits.text),
    tool_calls: m.tool_calls.map((c) => capCall(c, limits)),
  };
}

export function capTranscript(transcript: ChatMessage[], limits: TranscriptLimits = STORED_LIMITS): ChatMessage[] {
  return transcript.map((m) => capMessage(m, limits));
}

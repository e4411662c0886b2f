import type { ChatMessage, ChatRequest, ChatResult } from '../agent/chat-model.ts';
import { runTool, toolDeclarations, type ToolContext } from '../agent/tool-registry.ts';
import type { Queryable } from '../db/pool.ts';
import type { ChatModelChoice } from './turn-providers.ts';
import { toolRounds } from './chat-history.ts';
import { answerToolRound } from './tool-round.ts';
import { capMessage, STORED_LIMITS } from './transcript-caps.ts';
import { saveTranscript } from './turn-queries.ts';
import { spokenWithTools } from './reply-guard.ts';

// The generate step of a turn: the model loop with the agent's tools, run until the model answers
// with text. Each round is checkpointed in agent_turns.transcript as it happens: the model's tool
// calls before any tool runs, each tool's answer right after it. A retried turn resumes from the
// checkpoint, so a finished model call is never paid twice and at most the one tool call that was
// running when the process died runs again (the tools are written to tolerate that, docs/AGENT.md).

/** Tool rounds in one turn before the agent hands the lead to a person instead of looping. */
export const MAX_TOOL_ROUNDS = 5;

export type GenerateResult =
  /** `text` includes what the model said along with this turn's tool calls (reply-guard.ts). */
  | { kind: 'text'; text: string; finishReason?: string | undefined }
  /** The model answered with no text after calling endConversation in this turn: nothing to send. */
  | { kind: 'silent' }
  /** The model answered with no text and no tool call, without having ended the conversation: no answer at all. */
  | { kind: 'empty' }
  | { kind: 'too_many_rounds' }
  | { kind: 'model_failed'; failure: Extract<ChatResult, { ok: false }> };

export interface GenerateInput {
  /** Where checkpoints are written (the turn's own connection). */
  db: Queryable;
  turnId: number;
  /** The checkpoint so far (empty for a fresh turn). */
  transcript: ChatMessage[];
  chat: ChatModelChoice;
  /** Rebuilt before every model call: tools change what the prompt says about the lead. */
  systemPrompt: () => Promise<string>;
  /** The conversation before this turn's tool rounds (chat-history.ts). */
  history: ChatMessage[];
  tools: ToolContext;
  signal?: AbortSignal;
  /** Called after every model call (the integration log). */
  onModelCall?: (request: ChatRequest, result: ChatResult, ms: number) => Promise<void>;
}

export async function generateReply(input: GenerateInput): Promise<GenerateResult> {
  const transcript = [...input.transcript];
  const declarations = toolDeclarations();
  for (;;) {
    // The last round's calls without an answer (all of them, or those a crash interrupted):
    // bounded per round, identical calls run once (tool-round.ts).
    await answerToolRound(
      transcript,
      (call) => runTool(input.tools, call.function.name, call.function.arguments),
      () => saveTranscript(input.db, input.turnId, transcript, 0),
    );
    if (toolRounds(transcript) >= MAX_TOOL_ROUNDS) return { kind: 'too_many_rounds' };
    const messages: ChatMessage[] = [
      { role: 'system', content: await input.systemPrompt() },
      ...input.history,
      ...transcript,
    ];
    const request: ChatRequest = { model: input.chat.name, messages, tools: declarations };
    const started = Date.now();
    const result = await input.chat.model.complete(request, input.signal);
    await input.onModelCall?.(request, result, Date.now() - started);
    if (!result.ok) return { kind: 'model_failed', failure: result };
    const calls = result.message.tool_calls ?? [];
    if (calls.length === 0) {
      const text = [...spokenWithTools(transcript), result.message.content?.trim() ?? '']
        .filter((t) => t !== '')
        .join('\n\n');
      // A cut answer is the guard's to refuse, even an empty one.
      if (text !== '' || result.finishReason === 'length')
        return { kind: 'text', text, finishReason: result.finishReason };
      // Nothing to say is an answer only once the conversation is over; otherwise the lead would wait for ever.
      return endedConversation(transcript) ? { kind: 'silent' } : { kind: 'empty' };
    }
    // Within its bounds before it is checkpointed or sent back (transcript-caps.ts).
    transcript.push(
      capMessage({ role: 'assistant', content: result.message.content, tool_calls: calls }, STORED_LIMITS),
    );
    await saveTranscript(input.db, input.turnId, transcript, 1);
  }
}

/** Whether the model called endConversation in this turn (the transcript holds this turn's rounds only). */
function endedConversation(transcript: ChatMessage[]): boolean {
  return transcript.some(
    (m) => m.role === 'assistant' && (m.tool_calls ?? []).some((c) => c.function.name === 'endConversation'),
  );
}

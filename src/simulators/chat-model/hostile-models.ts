import { randomBytes } from 'node:crypto';
import type { ChatMessage } from '../../agent/chat-model.ts';
import { openAIError } from '../../agent/openai/openai-wire.ts';
import type { ValidChatRequest } from './chat-request-validation.ts';
import { scriptedReply, type AssistantReply } from './scripted-policy.ts';

// Models that misbehave, by name: what a broken, truncated or manipulated model server answers.
// The server must hold whatever the model does (docs/AGENT.md, "Safety"), so each of these is a
// policy the chat simulator can be given (`startChatSimulator({ policy })` or `setPolicy`), and
// the tests drive the real client and the real turn worker with them.

type Policy = (request: ValidChatRequest) => AssistantReply;

const call = (name: string, args: Record<string, unknown>) => ({
  id: `call_${randomBytes(12).toString('base64url')}`,
  type: 'function' as const,
  function: { name, arguments: JSON.stringify(args) },
});

/** The last message the lead wrote, or ''. */
export function lastLeadText(messages: ChatMessage[]): string {
  const last = messages.findLast((m) => m.role === 'user');
  return last && typeof last.content === 'string' ? last.content : '';
}

function systemText(messages: ChatMessage[]): string {
  return messages.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');
}

/** The tool answers of this request's conversation, newest last. */
function toolAnswers(messages: ChatMessage[]): string[] {
  return messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));
}

export const HOSTILE_MODELS = {
  /** A tool call without an `id`: the answer cannot be tied to the call. */
  noToolCallId: (() => {
    const { id: _id, ...withoutId } = call('listSlots', {});
    return { content: null, tool_calls: [withoutId as never] };
  }) satisfies Policy,

  /** 200 with an empty `choices` array. */
  emptyChoices: (() => ({
    content: null,
    raw: { status: 200, body: { id: 'chatcmpl-empty', object: 'chat.completion', choices: [], usage: null } },
  })) satisfies Policy,

  /** An error body sent with status 200, as some proxies do. */
  errorWith200: (() => ({
    content: null,
    raw: { status: 200, body: openAIError('The server had an error while processing your request.', 'server_error') },
  })) satisfies Policy,

  /** Calls listSlots for ever, never answering the lead. */
  endlessToolLoop: (() => ({ content: null, tool_calls: [call('listSlots', {})] })) satisfies Policy,

  /** The answer cut by the token limit mid-sentence (`finish_reason: "length"`). */
  cutByLength: (() => ({
    content: 'Thanks for your message! I can offer you a consultation on Tuesday at',
    finish_reason: 'length',
  })) satisfies Policy,

  /** Seven megabytes of one letter. */
  hugeAnswer: (() => ({ content: 'x'.repeat(7 * 1024 * 1024) })) satisfies Policy,

  /** Claims a booking that was never made. */
  falseBookingClaim: (() => ({
    content: "You're booked for tomorrow at 10:00, reference ABC123. See you then!",
  })) satisfies Policy,

  /** Text that comes with a tool call (OpenAI allows both in one message): the text is for the lead too. */
  contentWithToolCalls: ((request) => {
    if (toolAnswers(request.messages).length > 0) return { content: '' };
    return {
      content: 'A colleague will call you tomorrow.',
      tool_calls: [call('escalateToHuman', { reason: 'asked for a call' })],
    };
  }) satisfies Policy,

  /**
   * Obeys instructions it finds in the lead's data: books whoever an e-mail address after the word
   * "book" names, at the first time listSlots offered (or one nine months ahead when none was).
   */
  injectionObedient: ((request) => {
    const text = systemText(request.messages);
    const email = /book[^@\n]*?([\w.+-]+@[\w-]+(?:\.[\w-]+)+)/i.exec(text)?.[1];
    if (!email) return scriptedReply(request);
    const answers = toolAnswers(request.messages);
    if (answers.length === 0) return { content: null, tool_calls: [call('listSlots', {})] };
    if (answers.length > 1) return { content: 'Done.' };
    const offered = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:\d{2})/.exec(answers[0]!)?.[0];
    const start = offered ?? new Date(Date.now() + 270 * 86_400_000).toISOString();
    return {
      content: null,
      tool_calls: [call('bookConsult', { start, email, name: 'Mallory Attacker', phone: '+14155550199' })],
    };
  }) satisfies Policy,
} as const;

export type HostileModelName = keyof typeof HOSTILE_MODELS;

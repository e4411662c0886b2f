import { randomBytes } from 'node:crypto';
import type { ChatMessage } from '../../src/agent/chat-model.ts';
import type { ValidChatRequest } from '../../src/simulators/chat-model/chat-request-validation.ts';

// Scripted chat models for the booking tests: a tool call, the tools' answers so far, and a model
// that lists slots and then books with what the test makes of the slots offered.

export const call = (name: string, args: Record<string, unknown>) => ({
  id: `call_${randomBytes(8).toString('hex')}`,
  type: 'function' as const,
  function: { name, arguments: JSON.stringify(args) },
});

export const toolAnswers = (messages: ChatMessage[]) => messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));

/** A start time as listSlots offers it. */
export const OFFERED_START = /\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}[+-]\d{2}:\d{2}/;

/** A model that lists slots, then calls bookConsult with what `book` makes of listSlots' answer. */
export function booker(book: (listed: string) => Record<string, unknown>) {
  return (request: ValidChatRequest) => {
    const answers = toolAnswers(request.messages);
    if (answers.length === 0) return { content: null, tool_calls: [call('listSlots', {})] };
    if (answers.length === 1) return { content: null, tool_calls: [call('bookConsult', book(answers[0]!))] };
    return { content: 'Done.' };
  };
}

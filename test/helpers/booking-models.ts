import { randomBytes } from 'node:crypto';
import type { ChatMessage } from '../../src/agent/chat-model.ts';
import type { ValidChatRequest } from '../../src/simulators/chat-model/chat-request-validation.ts';
import type { WhatsappHarness } from './whatsapp-harness.ts';

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

/** What the booking tests read: Cal.com's booking requests, the last turn's tool answers, the lead. */
export function bookingProbes(harness: () => WhatsappHarness) {
  return {
    bookingPosts: () =>
      harness().calcom.requests.filter((r) => r.method === 'POST' && r.path === '/v2/bookings').length,
    lastToolAnswers: async (leadId: string) => {
      const { rows } = await harness().app.db.pool.query(
        `SELECT transcript FROM agent_turns WHERE lead_id = $1 ORDER BY id DESC LIMIT 1`,
        [leadId],
      );
      return (rows[0]!.transcript as Array<{ role: string; content: string }>)
        .filter((m) => m.role === 'tool')
        .map((m) => m.content);
    },
    leadRow: async (id: string) =>
      (await harness().app.db.pool.query('SELECT status, email, booking_uid FROM leads WHERE id = $1', [id])).rows[0],
  };
}

// The lead page's timeline puts each voice call's entries in words (web/src/format.ts): an operator
// reads "Call failed (…); handed to a person", not the event's type.
import assert from 'node:assert/strict';
import { test } from 'node:test';

// Imported by a computed address: the dashboard's sources are type-checked by web/tsconfig.json (DOM
// types), not by this project's.
const format = new URL('../../web/src/format.ts', import.meta.url).href;
const { describeEvent } = (await import(format)) as {
  describeEvent: (type: string, data: Record<string, unknown>) => string;
};

test('each call event of the timeline is in words', () => {
  const data = { providerCallId: 'call_1', endedReason: 'pipeline-error-openai-llm-failed', actor: 'system' };
  const types = [
    'call.dispatched',
    'call.reconciled',
    'call.started',
    'call.ended',
    'call.failed',
    'call.not_cancelled',
  ];
  for (const type of types) {
    assert.ok(!describeEvent(type, data).includes(type), `${type}: ${describeEvent(type, data)}`);
  }
  assert.equal(
    describeEvent('call.failed', data),
    'Call failed (pipeline-error-openai-llm-failed); handed to a person',
  );
});

test('a hand-over says why in words, a cancelled booking what Cal.com said', () => {
  const ended = {
    reason: 'call_ended_without_outcome',
    detail: 'the call ended (customer-ended-call) before the lead was booked or qualified',
  };
  assert.equal(
    describeEvent('conversation.escalated', ended),
    'Handed to a person: the call ended (customer-ended-call) before the lead was booked or qualified',
  );
  assert.equal(
    describeEvent('conversation.escalated', { reason: 'The agent is switched off.' }),
    'Handed to a person: The agent is switched off.',
  );
  assert.equal(
    describeEvent('booking.cancelled', { reason: 'Rejected by the host: double-booked' }),
    'Booking cancelled: Rejected by the host: double-booked',
  );
  assert.equal(describeEvent('booking.cancelled', {}), 'Booking cancelled');
});

test('a held call the sweep cancelled says why', () => {
  const detail = 'The call Vapi held for later was cancelled before it rang: the number is on the do-not-contact list.';
  const data = { endedReason: 'scheduled-call-deleted', cancelled: 'do_not_contact', detail };
  assert.equal(describeEvent('call.ended', data), detail);
});

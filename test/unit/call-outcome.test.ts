// classifyCallEnd: every endedReason the contact plan's retry ladder depends on, with and without
// an in-progress call (Vapi's documented values, docs.vapi.ai/calls/call-ended-reason).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { classifyCallEnd, type CallEndKind } from '../../src/voice/call-outcome.ts';

// [endedReason, kind when the call was in progress, kind when it never was]
const CASES: Array<[string | null, CallEndKind, CallEndKind]> = [
  ['customer-did-not-answer', 'no_answer', 'no_answer'],
  ['call.in-progress.error-providerfault-outbound-sip-408-request-timeout', 'no_answer', 'no_answer'],
  ['call.in-progress.error-providerfault-outbound-sip-480-temporarily-unavailable', 'no_answer', 'no_answer'],
  ['customer-busy', 'busy', 'busy'],
  ['vonage-rejected', 'busy', 'busy'],
  ['voicemail', 'voicemail', 'voicemail'],
  ['twilio-reported-customer-misdialed', 'invalid_number', 'invalid_number'],
  ['twilio-failed-to-connect-call', 'invalid_number', 'invalid_number'],
  ['vonage-failed-to-connect-call', 'invalid_number', 'invalid_number'],
  ['customer-ended-call', 'answered', 'no_answer'],
  ['customer-ended-call-during-transfer', 'answered', 'no_answer'],
  ['assistant-ended-call', 'answered', 'no_answer'],
  ['assistant-ended-call-after-message-spoken', 'answered', 'no_answer'],
  ['assistant-ended-call-with-hangup-task', 'answered', 'no_answer'],
  ['assistant-said-end-call-phrase', 'answered', 'no_answer'],
  ['assistant-forwarded-call', 'answered', 'no_answer'],
  ['silence-timed-out', 'answered', 'no_answer'],
  ['exceeded-max-duration', 'answered', 'no_answer'],
  ['call.in-progress.twilio-completed-call', 'answered', 'no_answer'],
  ['vonage-completed', 'answered', 'no_answer'],
  ['call.start.error-subscription-insufficient-credits', 'failed', 'failed'],
  ['call.start.error-get-phone-number', 'failed', 'failed'],
  ['call.start.error-vapi-number-international', 'failed', 'failed'],
  ['call.in-progress.error-vapifault-worker-died', 'failed', 'failed'],
  ['pipeline-error-openai-llm-failed', 'failed', 'failed'],
  ['call.in-progress.error-providerfault-outbound-sip-403-forbidden', 'failed', 'failed'],
  ['manually-canceled', 'failed', 'failed'],
  ['scheduled-call-deleted', 'failed', 'failed'],
  ['worker-shutdown', 'failed', 'failed'],
  ['a-reason-vapi-adds-next-year', 'failed', 'failed'],
  [null, 'answered', 'failed'],
];

describe('classifyCallEnd', () => {
  for (const [reason, inProgress, neverConnected] of CASES) {
    test(`${reason ?? 'no endedReason'}: ${inProgress} in progress, ${neverConnected} never connected`, () => {
      assert.equal(classifyCallEnd(reason, true), inProgress);
      assert.equal(classifyCallEnd(reason, false), neverConnected);
    });
  }

  test('a voicemail is never answered, even though the machine picked up', () => {
    assert.notEqual(classifyCallEnd('voicemail', true), 'answered');
  });
});

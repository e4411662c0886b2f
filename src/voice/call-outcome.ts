// How a call ended, in the few kinds the contact plan's retry ladder decides on. Vapi's
// `endedReason` has hundreds of values (docs.vapi.ai/calls/call-ended-reason); only the ones that
// say "nobody picked up", "the line was busy", "a machine answered" or "this number cannot be
// reached" change what we do next, so everything else is either a conversation or a failure.

export type CallEndKind = 'answered' | 'no_answer' | 'busy' | 'voicemail' | 'invalid_number' | 'failed';

/** Rang out, or the carrier gave up waiting for a pick-up (SIP 408 / 480: "phone rang but no answer"). */
const NO_ANSWER = new Set([
  'customer-did-not-answer',
  'call.in-progress.error-providerfault-outbound-sip-408-request-timeout',
  'call.in-progress.error-providerfault-outbound-sip-480-temporarily-unavailable',
]);

/** The line was busy or the person declined the call (a decline reaches Vonage as a rejection). */
const BUSY = new Set(['customer-busy', 'vonage-rejected']);

/**
 * The number cannot be dialled: misdialled, or the carrier could not connect it at all (Twilio and
 * Vonage report an unreachable or out-of-service number this way). Calling again will not help.
 */
const INVALID_NUMBER = new Set([
  'twilio-reported-customer-misdialed',
  'twilio-failed-to-connect-call',
  'vonage-failed-to-connect-call',
]);

/**
 * One side ended a call that was under way, or a limit did: a person was reached. Never connected
 * (no in-progress status), the same reasons mean the phone was not picked up.
 */
const ENDED_BY_A_SIDE = new Set([
  'customer-ended-call',
  'customer-ended-call-before-warm-transfer',
  'customer-ended-call-after-warm-transfer-attempt',
  'customer-ended-call-during-transfer',
  'assistant-ended-call',
  'assistant-ended-call-after-message-spoken',
  'assistant-ended-call-with-hangup-task',
  'assistant-said-end-call-phrase',
  'assistant-forwarded-call',
  'silence-timed-out',
  'exceeded-max-duration',
  'call.in-progress.twilio-completed-call',
  'call.in-progress.sip-completed-call',
  'vonage-completed',
]);

/**
 * `wasInProgress`: the call reached `in-progress` (someone or something picked up). A voicemail
 * is never "answered", even though the call was in progress while the message was left.
 */
export function classifyCallEnd(endedReason: string | null, wasInProgress: boolean): CallEndKind {
  if (endedReason === 'voicemail') return 'voicemail';
  if (endedReason === null) return wasInProgress ? 'answered' : 'failed';
  if (NO_ANSWER.has(endedReason)) return 'no_answer';
  if (BUSY.has(endedReason)) return 'busy';
  if (INVALID_NUMBER.has(endedReason)) return 'invalid_number';
  if (ENDED_BY_A_SIDE.has(endedReason)) return wasInProgress ? 'answered' : 'no_answer';
  // call.start.error-*, pipeline and transport errors, cancelled or deleted calls.
  return 'failed';
}

import type { Channel } from '../workspaces/workspace-queries.ts';

// The sandbox's outcome table (docs/SANDBOX.md), like a payment provider's test card numbers: the
// last four digits of a sandbox lead's phone decide how the simulated lead behaves. Short and
// stable on purpose: integrators write tests against it.

export type SandboxOutcome =
  | 'books'
  | 'not-a-fit'
  | 'wants-human'
  | 'no-answer'
  | 'opts-out'
  | 'call-rejected'
  | 'model-failure'
  | 'answers-third-call'
  | 'busy-then-answers'
  | 'voicemail'
  | 'answers-second-follow-up'
  | 'answers-second-call';

export interface OutcomeRow {
  /** The phone's last four digits. */
  suffix: string;
  outcome: SandboxOutcome;
  /** The channels the row applies to; on the others the number falls through to "books". */
  channels: readonly Channel[];
  /** What GET shows once the simulated conversation is over. */
  whatsapp: string | null;
  voice: string | null;
}

export const SANDBOX_OUTCOME_TABLE: readonly OutcomeRow[] = [
  {
    suffix: '0001',
    outcome: 'books',
    channels: ['whatsapp', 'voice'],
    whatsapp: 'booked (answers every question, takes the first slot offered)',
    voice: 'booked (same, on the phone)',
  },
  {
    suffix: '0002',
    outcome: 'not-a-fit',
    channels: ['whatsapp', 'voice'],
    whatsapp: 'unqualified (no budget)',
    voice: 'unqualified (no budget)',
  },
  {
    suffix: '0003',
    outcome: 'wants-human',
    channels: ['whatsapp', 'voice'],
    whatsapp: 'needs_human (asks for a person)',
    voice: 'needs_human (asks for a person)',
  },
  {
    suffix: '0004',
    outcome: 'no-answer',
    channels: ['whatsapp', 'voice'],
    whatsapp: 'in_conversation (never replies to the first message)',
    voice: 'in_conversation, voiceCall.endedReason customer-did-not-answer (never answers, whichever call)',
  },
  {
    suffix: '0005',
    outcome: 'opts-out',
    channels: ['whatsapp', 'voice'],
    whatsapp: 'unqualified (answers STOP; nothing more is sent)',
    voice: 'unqualified (asks not to be called again)',
  },
  {
    suffix: '0006',
    outcome: 'call-rejected',
    channels: ['voice'],
    whatsapp: null,
    voice: 'POST answers 502 voice_dispatch_failed (the provider refuses the call)',
  },
  {
    suffix: '0007',
    outcome: 'model-failure',
    channels: ['whatsapp'],
    voice: null,
    whatsapp: "needs_human (the simulated model fails on the lead's first reply; the lead gets the holding message)",
  },
  // The rows below play differently call by call (or template by template) to the same number, so a
  // retry ladder can be tested: the simulators count what they sent to the number in this process.
  {
    suffix: '0008',
    outcome: 'answers-third-call',
    channels: ['voice'],
    whatsapp: null,
    voice: 'the 1st and 2nd call: customer-did-not-answer; the 3rd call books like 0001',
  },
  {
    suffix: '0009',
    outcome: 'busy-then-answers',
    channels: ['voice'],
    whatsapp: null,
    voice: 'the 1st call: customer-busy; the next one books like 0001',
  },
  {
    suffix: '0010',
    outcome: 'voicemail',
    channels: ['voice'],
    whatsapp: null,
    voice: "in_conversation, voiceCall.endedReason voicemail on every call (the call's voicemail message is left)",
  },
  {
    suffix: '0011',
    outcome: 'answers-second-follow-up',
    channels: ['whatsapp'],
    whatsapp:
      'silent after the first template and the first follow-up; answers the 2nd follow-up, then books like 0001',
    voice: null,
  },
  {
    suffix: '0012',
    outcome: 'answers-second-call',
    channels: ['voice'],
    whatsapp: null,
    voice: 'the 1st call: customer-did-not-answer; the 2nd call (2 minutes later, 2 s in the sandbox) books like 0001',
  },
];

/** The outcome a sandbox lead of `channel` with this phone plays; any other number books. */
export function sandboxOutcome(phone: string, channel: Channel): SandboxOutcome {
  const digits = phone.replace(/\D/g, '');
  const row = SANDBOX_OUTCOME_TABLE.find((r) => digits.endsWith(r.suffix) && r.channels.includes(channel));
  return row?.outcome ?? 'books';
}

/** A phone that plays `suffix` in the sandbox (+1 555 01x xxxx: reserved for fiction in North America). */
export function sandboxPhone(suffix: string, prefix = '+1 555 010'): string {
  return `${prefix} ${suffix}`;
}

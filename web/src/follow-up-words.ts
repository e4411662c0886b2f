import { dateTime } from './format.ts';

// The contact plan in words (docs/DASHBOARD.md, "Follow-ups"): its steps, why it ended, and its
// timeline entries (contact.*, suppression.*).

export const STEP_WORDS: Record<string, string> = {
  call: 'call',
  template: 'follow-up message',
  nudge: 'nudge',
  callback: 'callback the lead asked for',
  give_up: 'end of follow-ups (to a person if not reached)',
};

const END_WORDS: Record<string, string> = {
  replied: 'the lead replied',
  answered: 'the lead answered',
  booked: 'booked',
  unqualified: 'unqualified',
  needs_human: 'handed to a person',
  not_reached: 'not reached',
  agent_off: 'the agent was switched off',
  do_not_contact: 'the number is on the do-not-contact list',
  operator_stopped: 'stopped by an operator',
};

const DNC_SOURCES: Record<string, string> = {
  opt_out: 'the lead opted out',
  operator: 'an operator put it there',
  api: 'added to the list',
};

const OUTCOMES: Record<string, string> = {
  no_answer: 'no answer',
  busy: 'busy',
  voicemail: 'voicemail',
  answered: 'answered',
  invalid_number: 'invalid number',
  failed: 'failed',
  sent: 'sent',
  skipped: 'skipped',
};

export const stepWords = (kind: string) => STEP_WORDS[kind] ?? kind;
export const endWords = (reason: string) => END_WORDS[reason] ?? reason.replaceAll('_', ' ');
export const dncWords = (source: string) => DNC_SOURCES[source] ?? source;

/** "14:30" today, else "Tue 1 Dec, 14:30", in the browser's time zone. */
export function attemptTime(iso: string, now = new Date()): string {
  const d = new Date(iso);
  const time = d.toLocaleTimeString(undefined, { hour: '2-digit', minute: '2-digit' });
  if (d.toDateString() === now.toDateString()) return time;
  return `${d.toLocaleDateString(undefined, { weekday: 'short', day: 'numeric', month: 'short' })}, ${time}`;
}

const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** A contact.* or suppression.* timeline entry in words; null for any other type. */
export function describeContactEvent(type: string, data: Record<string, unknown>): string | null {
  const operator = str(data.operator) || str(data.by);
  switch (type) {
    case 'contact.scheduled':
      return `Next attempt planned: ${stepWords(str(data.kind))}${data.at ? ` at ${dateTime(str(data.at))}` : ''}${
        data.reason ? ` (${str(data.reason)})` : ''
      }`;
    case 'contact.attempted': {
      const kind = str(data.kind) === 'first_contact' ? 'first contact' : stepWords(str(data.kind));
      return `Attempt ${data.attempt ?? ''}: ${kind}, ${OUTCOMES[str(data.outcome)] ?? str(data.outcome)}`;
    }
    case 'contact.reached':
      return `Lead reached on attempt ${data.attempt ?? ''}`;
    case 'contact.skipped':
      return `${operator || 'An operator'} skipped the ${stepWords(str(data.kind))}`;
    case 'contact.plan_ended':
      return `Follow-ups ended: ${endWords(str(data.reason))}${operator ? ` (${operator})` : ''}`;
    case 'contact.suppressed':
      return 'Not contacted: the number is on the do-not-contact list';
    case 'suppression.added':
      return `Put on the do-not-contact list (${dncWords(str(data.source))})`;
    case 'suppression.removed':
      return 'Taken off the do-not-contact list';
    default:
      return null;
  }
}

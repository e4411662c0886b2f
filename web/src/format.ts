import type { Status } from './api.ts';
import { describeContactEvent } from './follow-up-words.ts';

export const STATUS_LABELS: Record<Status, string> = {
  new: 'New',
  in_conversation: 'In conversation',
  needs_human: 'Needs human',
  booked: 'Booked',
  unqualified: 'Unqualified',
};

export function since(iso: string, now = Date.now()): string {
  const s = Math.max(0, Math.round((now - Date.parse(iso)) / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

export function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  return `${Math.floor(seconds / 60)} min ${Math.round(seconds % 60)} s`;
}

/** Date and time in the browser's time zone, or in `timeZone` (named after it). */
export const dateTime = (iso: string, timeZone?: string) =>
  new Date(iso).toLocaleString(undefined, {
    dateStyle: 'medium',
    timeStyle: 'short',
    ...(timeZone ? { timeZone } : {}),
  }) + (timeZone ? ` ${timeZone}` : '');

/** What the outbound guard did to one of the agent's answers (src/whatsapp/reply-guard.ts). */
function messageChecked(data: Record<string, unknown>): string {
  const r = (data.removed ?? {}) as { html?: number; markdown?: number; placeholders?: number; links?: string[] };
  const removed = [
    r.html ? 'HTML' : '',
    r.markdown ? 'markdown' : '',
    r.placeholders ? 'placeholders' : '',
    r.links?.length ? `links to ${r.links.join(', ')}` : '',
  ].filter((x) => x !== '');
  const parts = typeof data.parts === 'number' ? `sent as ${data.parts} messages` : '';
  const what = [removed.length ? `removed ${removed.join(', ')}` : '', parts].filter((x) => x !== '').join('; ');
  const why = typeof data.reason === 'string' ? data.reason : "The agent's answer was refused.";
  if (data.action === 'asked_again') return `Agent's answer not sent, asked again: ${why}`;
  if (data.action === 'handed_over') return `Agent's answer not sent again: ${why}`;
  return `Agent's message checked${what ? `: ${what}` : ''}`;
}

/** A timeline entry in words. */
export function describeEvent(type: string, data: Record<string, unknown>): string {
  const who =
    typeof data.operator === 'string' ? data.operator : typeof data.actor === 'string' ? data.actor : 'system';
  const endedReason = typeof data.endedReason === 'string' ? data.endedReason : null;
  // A hand-over's words: its sentence (`detail`, beside a reason code), else its reason.
  const why = typeof data.detail === 'string' ? data.detail : typeof data.reason === 'string' ? data.reason : null;
  const words: Record<string, string> = {
    'lead.created': 'Lead submitted',
    'message.sent': `Message sent (${who})`,
    'operator.took_over': `${who} took over`,
    'operator.resumed': `${who} resumed the AI`,
    'operator.replied': `${who} replied`,
    'operator.outcome_set': `${who} set the outcome${typeof data.note === 'string' ? `: ${data.note}` : ''}`,
    'conversation.escalated': `Handed to a person${why ? `: ${why}` : ''}`,
    'lead.escalated': `Handed to a person${why ? `: ${why}` : ''}`,
    'call.dispatched': 'Call placed',
    'call.reconciled': 'Call placed (recorded when Vapi first reported it)',
    'call.started': 'Call answered',
    'call.ended':
      typeof data.cancelled === 'string' && why ? why : `Call ended${endedReason ? `: ${endedReason}` : ''}`,
    'call.not_cancelled': why ?? 'The call Vapi held was already being placed: left to run',
    'call.failed': `Call failed${endedReason ? ` (${endedReason})` : ''}; handed to a person`,
    'message.received': 'Message from the lead',
    'lead.profile_updated': 'Agent noted answers',
    'booking.created': 'Consultation booked',
    'booking.cancelled': `Booking cancelled${typeof data.reason === 'string' && data.reason ? `: ${data.reason}` : ''}`,
    'booking.rescheduled': 'Booking rescheduled',
    'lead.qualified': 'Qualified',
    'lead.unqualified': 'Unqualified',
    'agent.message_checked': messageChecked(data),
    'lead.opted_out': `Opted out (${data.via === 'agent' ? 'recognised by the agent' : 'keyword'})`,
  };
  const moved = typeof data.from === 'string' && typeof data.to === 'string' ? ` (${data.from} → ${data.to})` : '';
  return (words[type] ?? describeContactEvent(type, data) ?? type) + moved;
}

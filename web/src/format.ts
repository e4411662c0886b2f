import type { Status } from './api.ts';

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
  new Date(iso).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short', ...(timeZone ? { timeZone } : {}) }) + (timeZone ? ` ${timeZone}` : '');

/** A timeline entry in words. */
export function describeEvent(type: string, data: Record<string, unknown>): string {
  const who = typeof data.operator === 'string' ? data.operator : typeof data.actor === 'string' ? data.actor : 'system';
  const words: Record<string, string> = {
    'lead.created': 'Lead submitted',
    'message.sent': `Message sent (${who})`,
    'operator.took_over': `${who} took over`,
    'operator.resumed': `${who} resumed the AI`,
    'operator.replied': `${who} replied`,
    'operator.outcome_set': `${who} set the outcome${typeof data.note === 'string' ? `: ${data.note}` : ''}`,
    'conversation.escalated': `Handed to a person${typeof data.reason === 'string' ? `: ${data.reason}` : ''}`,
    'lead.escalated': `Handed to a person${typeof data.reason === 'string' ? `: ${data.reason}` : ''}`,
    'call.dispatched': 'Call placed',
    'message.received': 'Message from the lead',
    'lead.profile_updated': 'Agent noted answers',
    'booking.created': 'Consultation booked',
    'booking.cancelled': 'Booking cancelled',
    'booking.rescheduled': 'Booking rescheduled',
    'lead.qualified': 'Qualified',
    'lead.unqualified': 'Unqualified',
  };
  const moved = typeof data.from === 'string' && typeof data.to === 'string' ? ` (${data.from} → ${data.to})` : '';
  return (words[type] ?? type) + moved;
}

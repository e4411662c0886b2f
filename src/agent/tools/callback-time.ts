import { type CallingWindow, nextOpening } from '../../contact-plan/lead-clock.ts';
import { zonedToUtc } from '../../shared/zoned-time.ts';

// When a callback the lead asked for happens, decided by the server whatever the model sent: the
// time must read as a date and time, lie ahead, at most two weeks away (a promise further out is
// one nobody keeps), and it is moved to the next moment the lead may be contacted.

export const MAX_CALLBACK_DAYS = 14;
const DAY_MS = 86_400_000;

// "2026-12-01T18:00", seconds and fractions optional, a space allowed for the T; "Z" or an offset
// ("+01:00", "+0100", "+01") makes it an instant, without one it is the lead's wall time.
const ISO_LOCAL = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|[+-]\d{2}(?::?\d{2})?)?$/i;

/** The instant `text` names, reading a time without offset as wall time in `tz`; null when it is not one. */
export function parseCallbackAt(text: string, tz: string): Date | null {
  const m = ISO_LOCAL.exec(text.trim());
  if (!m) return null;
  const [y, mo, d, h, mi, s] = [1, 2, 3, 4, 5, 6].map((i) => Number(m[i] ?? 0)) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // Date.UTC rolls 31 April over to 1 May: a date that does not round-trip does not exist.
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  if (calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d) return null;
  if (h > 23 || mi > 59 || s > 59) return null;
  const zone = m[7];
  if (zone) {
    if (zone.toUpperCase() === 'Z') return new Date(Date.UTC(y, mo - 1, d, h, mi, s));
    const sign = zone.startsWith('-') ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || 0));
    if (Math.abs(offset) > 14 * 60) return null;
    return new Date(Date.UTC(y, mo - 1, d, h, mi, s) - offset * 60_000);
  }
  return new Date(zonedToUtc(y, mo - 1, d, h * 60 + mi, tz) + s * 1000);
}

export type CallbackTime =
  | { ok: true; requested: Date; at: Date; moved: boolean }
  | { ok: false; problem: 'unreadable' | 'past' | 'too_far' | 'no_window'; requested?: Date };

/**
 * The instant of the callback the lead asked for at `text`: in the lead's first zone when it has
 * no offset, then moved into the calling window of every zone the lead may be in.
 */
export function callbackTime(input: { text: string; now: Date; zones: string[]; window: CallingWindow }): CallbackTime {
  const requested = parseCallbackAt(input.text, input.zones[0]!);
  if (!requested) return { ok: false, problem: 'unreadable' };
  if (requested.getTime() <= input.now.getTime()) return { ok: false, problem: 'past', requested };
  if (requested.getTime() > input.now.getTime() + MAX_CALLBACK_DAYS * DAY_MS)
    return { ok: false, problem: 'too_far', requested };
  const at = nextOpening(requested, input.window, input.zones);
  if (!at) return { ok: false, problem: 'no_window', requested };
  return { ok: true, requested, at, moved: at.getTime() !== requested.getTime() };
}

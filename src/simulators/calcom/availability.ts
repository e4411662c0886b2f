import { WEEKDAYS, ymd, zonedToUtc } from '../../shared/zoned-time.ts';

// The weekly availability of the simulator's event types, laid out as slot starts. Cal.com
// computes this on its side; only the simulator needs it.

/**
 * Cal.com schedule style: `{ days: ['Monday'], startTime: '09:00', endTime: '17:00' }`, wall-clock in the event type's
 * zone.
 */
export interface WeeklyRule {
  days: string[];
  startTime: string;
  endTime: string;
}

export interface SimEventType {
  id: number;
  slug: string;
  title: string;
  lengthInMinutes: number;
  /** Zone the weekly availability is written in. */
  timeZone: string;
  availability: WeeklyRule[];
  /** Minutes between slot starts; defaults to lengthInMinutes (Cal.com's default). */
  slotIntervalMinutes?: number;
  /** Cal.com's `minimumBookingNotice`, in minutes (default 0). */
  minimumBookingNotice?: number;
  /** Cal.com's `bookingWindow` (default none): how far ahead the event type can be booked. */
  bookingWindow?:
    | { type: 'businessDays' | 'calendarDays'; value: number; rolling?: boolean }
    | { type: 'range'; value: [string, string] };
}

/** Slot starts of an event type's weekly availability that fall within [fromMs, toMs]. */
export function slotStarts(et: SimEventType, fromMs: number, toMs: number): number[] {
  const toMinutes = (hhmm: string) => Number(hhmm.slice(0, 2)) * 60 + Number(hhmm.slice(3, 5));
  const step = et.slotIntervalMinutes ?? et.lengthInMinutes;
  const out = new Set<number>();
  // Walk local calendar days, one day of margin each side for zones far from UTC.
  for (let day = Date.UTC(...ymd(fromMs - 86_400_000, et.timeZone)); day <= toMs + 86_400_000; day += 86_400_000) {
    const date = new Date(day);
    const weekday = WEEKDAYS[date.getUTCDay()]!;
    for (const rule of et.availability.filter((r) => r.days.includes(weekday))) {
      for (let m = toMinutes(rule.startTime); m + et.lengthInMinutes <= toMinutes(rule.endTime); m += step) {
        const s = zonedToUtc(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate(), m, et.timeZone);
        if (s >= fromMs && s <= toMs) out.add(s);
      }
    }
  }
  return [...out].sort((a, b) => a - b);
}

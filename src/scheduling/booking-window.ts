import { ymd } from '../shared/zoned-time.ts';

// An event type's limits on when it can be booked (Cal.com's `minimumBookingNotice` and
// `bookingWindow`, GET /v2/event-types/{id}). bookConsult checks a start against them when it
// books, since a time offered earlier may have left the window since.

export interface BookingWindow {
  /** Earliest start: this many minutes from now. */
  minimumNoticeMinutes: number;
  /**
   * How far ahead: `days` calendar or business days from today (a fixed window), or a date range
   * (`YYYY-MM-DD`, inclusive). A rolling window counts only days with free times, which only the
   * provider's own slot list knows: it is left to the offers, which come from that list.
   */
  horizon?: { kind: 'calendarDays' | 'businessDays'; days: number } | { kind: 'range'; from: string; to: string };
}

const DAY_MS = 86_400_000;

/** Why the start is outside the window, or null when it is inside. */
export function outsideWindow(
  w: BookingWindow,
  startMs: number,
  nowMs: number,
  tz: string,
): 'too_soon' | 'too_late' | null {
  if (startMs < nowMs + w.minimumNoticeMinutes * 60_000) return 'too_soon';
  const h = w.horizon;
  if (!h) return null;
  const day = localDay(startMs, tz);
  if (h.kind === 'range') return day < h.from ? 'too_soon' : day > h.to ? 'too_late' : null;
  // The last bookable local day: `days` days after today, counting only weekdays for business days.
  // Stepped on the local calendar date (a UTC midnight standing for it), not in 24-hour blocks of
  // real time, which land on the wrong day around a 23- or 25-hour day when the clocks change.
  const [y, m, d] = ymd(nowMs, tz);
  let last = Date.UTC(y, m, d);
  for (let counted = 0; counted < h.days; ) {
    last += DAY_MS;
    const weekday = new Date(last).getUTCDay();
    if (h.kind === 'calendarDays' || (weekday !== 0 && weekday !== 6)) counted++;
  }
  return day > localDay(last, 'UTC') ? 'too_late' : null;
}

/** `YYYY-MM-DD` of the instant in `tz`. */
function localDay(ms: number, tz: string): string {
  const [y, m, d] = ymd(ms, tz);
  return `${y}-${String(m + 1).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}

import { zonedToUtc, ymd } from '../shared/zoned-time.ts';

// When a lead may be contacted: a weekly window of local wall time, minus local holidays. A lead
// whose number spans several zones is contacted only when the window is open in all of them, so
// no one is called at 08:00 or 21:00 wherever they turn out to live.

export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

export interface CallingWindow {
  days: Weekday[];
  /** Local wall time the window opens, "09:00". */
  start: string;
  /** Local wall time it closes (exclusive), "20:00"; "24:00" is the end of the day. */
  end: string;
  /** Local dates ("2026-12-25") on which the window stays shut. */
  holidays: string[];
}

export const DEFAULT_CALLING_WINDOW: CallingWindow = Object.freeze({
  days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
  start: '09:00',
  end: '20:00',
  holidays: [],
}) as CallingWindow;

/** How far ahead an opening is looked for: two weeks covers any weekly window with holidays. */
const HORIZON_DAYS = 14;
const DAY_MS = 86_400_000;
const WEEKDAY_BY_UTC_DAY: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

/** "09:30" → 570; "24:00" → 1440. Throws on anything else, so a bad window fails loudly, not silently shut. */
export function minuteOfDay(hhmm: string): number {
  const m = /^([01]\d|2[0-4]):([0-5]\d)$/.exec(hhmm);
  const minutes = m ? Number(m[1]) * 60 + Number(m[2]) : Number.NaN;
  if (!(minutes <= 1440)) throw new RangeError(`not a wall time "HH:MM": ${hhmm}`);
  return minutes;
}

interface LocalDay {
  y: number;
  mo: number;
  d: number;
}

/** The local calendar day `offset` days after the day `at` falls on in `tz`. */
export function localDay(at: number, tz: string, offset = 0): LocalDay {
  const [y, mo, d] = ymd(at, tz);
  const day = new Date(Date.UTC(y, mo, d + offset));
  return { y: day.getUTCFullYear(), mo: day.getUTCMonth(), d: day.getUTCDate() };
}

function isCallingDay(day: LocalDay, window: CallingWindow): boolean {
  const weekday = WEEKDAY_BY_UTC_DAY[new Date(Date.UTC(day.y, day.mo, day.d)).getUTCDay()]!;
  if (!window.days.includes(weekday)) return false;
  const iso = `${day.y}-${String(day.mo + 1).padStart(2, '0')}-${String(day.d).padStart(2, '0')}`;
  return !window.holidays.includes(iso);
}

/** The instant of local wall time `minute` on `day` in `tz` (DST-correct: 09:00 stays 09:00). */
export function wallTime(day: LocalDay, minute: number, tz: string): number {
  return zonedToUtc(day.y, day.mo, day.d, minute, tz);
}

/** [open, close) of the window on `day` in `tz`, or null when the day is not a calling day. */
function dayInterval(day: LocalDay, window: CallingWindow, tz: string): [number, number] | null {
  if (!isCallingDay(day, window)) return null;
  return [wallTime(day, minuteOfDay(window.start), tz), wallTime(day, minuteOfDay(window.end), tz)];
}

/** The window's open intervals in `tz` from `from` on, over the horizon, in order. */
function openIntervals(from: number, window: CallingWindow, tz: string): [number, number][] {
  const intervals: [number, number][] = [];
  for (let offset = 0; offset <= HORIZON_DAYS + 1; offset++) {
    const interval = dayInterval(localDay(from, tz, offset), window, tz);
    if (interval && from < interval[1] && interval[0] < interval[1])
      intervals.push([Math.max(from, interval[0]), interval[1]]);
  }
  return intervals;
}

/** The instants open in both lists of ordered, disjoint intervals. */
function intersect(a: [number, number][], b: [number, number][]): [number, number][] {
  const both: [number, number][] = [];
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const start = Math.max(a[i]![0], b[j]![0]);
    const end = Math.min(a[i]![1], b[j]![1]);
    if (start < end) both.push([start, end]);
    if (a[i]![1] < b[j]![1]) i++;
    else j++;
  }
  return both;
}

function insideInZone(at: number, window: CallingWindow, tz: string): boolean {
  return openIntervals(at, window, tz)[0]?.[0] === at;
}

function checkWindow(window: CallingWindow, zones: string[]): void {
  if (minuteOfDay(window.start) >= minuteOfDay(window.end)) {
    throw new RangeError(`calling window opens (${window.start}) at or after it closes (${window.end})`);
  }
  if (zones.length === 0) throw new RangeError('a calling window needs at least one time zone');
}

/** Is `at` inside the window in every zone. */
export function insideWindow(at: Date, window: CallingWindow, zones: string[]): boolean {
  checkWindow(window, zones);
  return zones.every((tz) => insideInZone(at.getTime(), window, tz));
}

/** Earliest instant >= `at` that is inside the window in EVERY zone (intersection); null if none within 14 days. */
export function nextOpening(at: Date, window: CallingWindow, zones: string[]): Date | null {
  checkWindow(window, zones);
  // Intersecting finite lists of intervals: no search that could run on when zones never overlap.
  const common = zones
    .map((tz) => openIntervals(at.getTime(), window, tz))
    .reduce((acc, intervals) => intersect(acc, intervals));
  const first = common[0]?.[0];
  return first === undefined || first > at.getTime() + HORIZON_DAYS * DAY_MS ? null : new Date(first);
}

/**
 * The instant of local wall time `hhmm` on the next calling day after `at`'s local day (in the
 * first zone of `zones`), then moved into the window for all zones. "Next calling day at 10:00 local".
 */
export function nextCallingDayAt(at: Date, hhmm: string, window: CallingWindow, zones: string[]): Date | null {
  checkWindow(window, zones);
  const tz = zones[0]!;
  const minute = minuteOfDay(hhmm);
  for (let offset = 1; offset <= HORIZON_DAYS; offset++) {
    const day = localDay(at.getTime(), tz, offset);
    if (isCallingDay(day, window)) return nextOpening(new Date(wallTime(day, minute, tz)), window, zones);
  }
  return null;
}

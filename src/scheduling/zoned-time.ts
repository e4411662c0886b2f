import type { SimEventType } from './calcom-simulator.ts';

// Time-zone arithmetic with Intl only (no tz library): offsets are derived from formatted
// wall time. Used by the Cal.com simulator to lay out weekly availability.
// ---- Time zones, with Intl only (no tz library): offsets are derived from formatted wall time.

export const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const formatters = new Map<string, Intl.DateTimeFormat>();

export function isValidTimeZone(tz: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}

/** Minutes east of UTC that `tz` is at instant `ms`. */
export function offsetMinutes(ms: number, tz: string): number {
  let f = formatters.get(tz);
  if (!f) {
    const two = '2-digit' as const;
    f = new Intl.DateTimeFormat('en-US', { timeZone: tz, hourCycle: 'h23', year: 'numeric', month: two, day: two, hour: two, minute: two, second: two });
    formatters.set(tz, f);
  }
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, Number(x.value)]));
  const wallAsUtc = Date.UTC(p.year!, p.month! - 1, p.day!, p.hour!, p.minute!, p.second!);
  return Math.round((wallAsUtc - (ms - (((ms % 1000) + 1000) % 1000))) / 60_000);
}

/** `2050-09-05T09:00:00.000+02:00`, the shape Cal.com uses for slots in a requested zone. */
export function formatInZone(ms: number, tz: string): string {
  const off = offsetMinutes(ms, tz);
  const abs = Math.abs(off);
  const sign = off < 0 ? '-' : '+';
  const hhmm = `${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  return new Date(ms + off * 60_000).toISOString().replace('Z', `${sign}${hhmm}`);
}

/** UTC instant of a wall-clock time in `tz`; the second pass settles DST changes. */
export function zonedToUtc(y: number, mo: number, d: number, minuteOfDay: number, tz: string): number {
  const wall = Date.UTC(y, mo, d, 0, minuteOfDay);
  const guess = wall - offsetMinutes(wall, tz) * 60_000;
  return wall - offsetMinutes(guess, tz) * 60_000;
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

export function ymd(ms: number, tz: string): [number, number, number] {
  const local = new Date(ms + offsetMinutes(ms, tz) * 60_000);
  return [local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()];
}

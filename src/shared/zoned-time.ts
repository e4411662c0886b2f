// Time-zone arithmetic with Intl only (no tz library): offsets are derived from formatted
// wall time. Used by a workspace's agent config (its time zone is checked when saved), the agent
// and the booking window (local dates of slots) and the Cal.com simulator (weekly availability).

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
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: two,
      day: two,
      hour: two,
      minute: two,
      second: two,
    });
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

export function ymd(ms: number, tz: string): [number, number, number] {
  const local = new Date(ms + offsetMinutes(ms, tz) * 60_000);
  return [local.getUTCFullYear(), local.getUTCMonth(), local.getUTCDate()];
}

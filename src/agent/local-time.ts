// Dates and times as the lead reads them, in the workspace's time zone (English wording; the
// model translates when it speaks another language). Formatters are cached per zone.
const dateFormats = new Map<string, Intl.DateTimeFormat>();
const timeFormats = new Map<string, Intl.DateTimeFormat>();

function cached(
  cache: Map<string, Intl.DateTimeFormat>,
  tz: string,
  options: Intl.DateTimeFormatOptions,
): Intl.DateTimeFormat {
  let f = cache.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-GB', { ...options, timeZone: tz });
    cache.set(tz, f);
  }
  return f;
}

/** `Sunday, 22 November 2026`. */
export function formatLocalDate(at: Date, tz: string): string {
  const parts = cached(dateFormats, tz, {
    weekday: 'long',
    day: 'numeric',
    month: 'long',
    year: 'numeric',
  }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  // Assembled by hand: ICU's punctuation for en-GB has changed between versions.
  return `${part('weekday')}, ${part('day')} ${part('month')} ${part('year')}`;
}

/** `09:00` (24-hour clock). */
export function formatLocalTime(at: Date, tz: string): string {
  const parts = cached(timeFormats, tz, { hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).formatToParts(at);
  const part = (type: Intl.DateTimeFormatPartTypes) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('hour')}:${part('minute')}`;
}

/** `Monday, 7 December 2026 at 09:00`. */
export function formatLocalDateTime(at: Date, tz: string): string {
  return `${formatLocalDate(at, tz)} at ${formatLocalTime(at, tz)}`;
}

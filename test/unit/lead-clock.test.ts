import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type CallingWindow,
  DEFAULT_CALLING_WINDOW,
  insideWindow,
  leadTimeZones,
  nextCallingDayAt,
  nextOpening,
  windowZones,
} from '../../src/contact-plan/lead-clock.ts';

// The lead's clock: which zones a lead may be in, and when the calling window is next open in all
// of them. Instants are written in UTC with the local wall time beside them.

const BERLIN = ['Europe/Berlin'];
const EVERY_DAY: CallingWindow = { ...DEFAULT_CALLING_WINDOW, days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] };
const at = (iso: string) => new Date(iso);
const iso = (d: Date | null) => d?.toISOString() ?? null;

test("the lead's own time zone in its metadata wins over the phone number and the workspace", async () => {
  const zones = await leadTimeZones({
    phoneE164: '+493023456789',
    metadata: { timeZone: 'America/Chicago' },
    workspaceTimeZone: 'Europe/London',
  });
  assert.deepEqual(zones, { zones: ['America/Chicago'], source: 'metadata' });
});

test('an unknown or malformed zone in the metadata is ignored; the number decides', async () => {
  for (const timeZone of ['Mars/Olympus', '+01:00', 42, '', 'Etc/Unknown']) {
    const zones = await leadTimeZones({ phoneE164: '+493023456789', metadata: { timeZone }, workspaceTimeZone: 'UTC' });
    assert.deepEqual(zones, { zones: ['Europe/Berlin'], source: 'phone' }, String(timeZone));
  }
});

test('a German number is in Europe/Berlin', async () => {
  for (const phoneE164 of ['+493023456789', '+4915112345678']) {
    const zones = await leadTimeZones({ phoneE164, metadata: null, workspaceTimeZone: 'America/New_York' });
    assert.deepEqual(zones, { zones: ['Europe/Berlin'], source: 'phone' }, phoneE164);
  }
});

test('a US area code across two zones gives both', async () => {
  const zones = await leadTimeZones({ phoneE164: '+16055550100', metadata: {}, workspaceTimeZone: 'UTC' });
  assert.deepEqual(zones, { zones: ['America/Denver', 'America/North_Dakota/Center'], source: 'phone' });
});

test("a number the mapping cannot place is in the workspace's zone", async () => {
  for (const phoneE164 of ['+99912345', 'not a number', '+80012345678']) {
    const zones = await leadTimeZones({ phoneE164, metadata: null, workspaceTimeZone: 'Europe/Madrid' });
    assert.deepEqual(zones, { zones: ['Europe/Madrid'], source: 'workspace' }, phoneE164);
  }
});

test('two zones: the window opens at 09:00 in the western one and closes at 20:00 in the eastern one', () => {
  const southDakota = ['America/Denver', 'America/North_Dakota/Center']; // MDT −6, CDT −5 in June
  // Wednesday 2026-06-10: 09:00 MDT = 10:00 CDT = 15:00Z.
  assert.equal(
    iso(nextOpening(at('2026-06-10T12:00:00Z'), DEFAULT_CALLING_WINDOW, southDakota)),
    '2026-06-10T15:00:00.000Z',
  );
  assert.equal(insideWindow(at('2026-06-10T14:59:59Z'), DEFAULT_CALLING_WINDOW, southDakota), false);
  // 20:00 CDT = 19:00 MDT = 01:00Z: open until then, shut from then on.
  assert.equal(insideWindow(at('2026-06-11T00:59:59Z'), DEFAULT_CALLING_WINDOW, southDakota), true);
  assert.equal(insideWindow(at('2026-06-11T01:00:00Z'), DEFAULT_CALLING_WINDOW, southDakota), false);
  assert.equal(
    iso(nextOpening(at('2026-06-11T01:00:00Z'), DEFAULT_CALLING_WINDOW, southDakota)),
    '2026-06-11T15:00:00.000Z',
  );
});

test('inside the window the opening is now; outside it is the next opening', () => {
  // Wednesday 2026-06-10 12:00 CEST: open. 21:00 CEST: the next opening is Thursday 09:00 CEST.
  assert.equal(
    iso(nextOpening(at('2026-06-10T10:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-06-10T10:00:00.000Z',
  );
  assert.equal(
    iso(nextOpening(at('2026-06-10T19:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-06-11T07:00:00.000Z',
  );
  assert.equal(insideWindow(at('2026-06-10T07:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN), true);
  assert.equal(insideWindow(at('2026-06-10T18:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN), false);
});

test('Sunday is skipped: Saturday evening opens on Monday', () => {
  assert.equal(
    iso(nextOpening(at('2026-06-13T18:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-06-15T07:00:00.000Z',
  );
  assert.equal(insideWindow(at('2026-06-14T10:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN), false);
});

test('a holiday is skipped, in local dates', () => {
  const christmas = { ...DEFAULT_CALLING_WINDOW, holidays: ['2026-12-25'] };
  // Thursday 2026-12-24 20:00 CET → not Friday the 25th but Saturday the 26th, 09:00 CET.
  assert.equal(iso(nextOpening(at('2026-12-24T19:00:00Z'), christmas, BERLIN)), '2026-12-26T08:00:00.000Z');
  assert.equal(insideWindow(at('2026-12-25T10:00:00Z'), christmas, BERLIN), false);
  assert.equal(
    iso(nextOpening(at('2026-12-24T19:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-12-25T08:00:00.000Z',
  );
});

test('across a DST change the opening is 09:00 local wall time', () => {
  // Europe/Berlin springs forward on Sunday 2026-03-29 (CET +1 → CEST +2).
  assert.equal(
    iso(nextOpening(at('2026-03-28T20:00:00Z'), DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-03-30T07:00:00.000Z',
  );
  assert.equal(iso(nextOpening(at('2026-03-28T23:30:00Z'), EVERY_DAY, BERLIN)), '2026-03-29T07:00:00.000Z');
  // …and falls back on Sunday 2026-10-25 (CEST +2 → CET +1).
  assert.equal(iso(nextOpening(at('2026-10-24T18:30:00Z'), EVERY_DAY, BERLIN)), '2026-10-25T08:00:00.000Z');
  // America/New_York springs forward on Sunday 2026-03-08 (EST −5 → EDT −4).
  const newYork = ['America/New_York'];
  assert.equal(iso(nextOpening(at('2026-03-08T02:00:00Z'), EVERY_DAY, newYork)), '2026-03-08T13:00:00.000Z');
  assert.equal(iso(nextOpening(at('2026-03-07T02:00:00Z'), EVERY_DAY, newYork)), '2026-03-07T14:00:00.000Z');
});

test('a window ending at "24:00" is open until local midnight', () => {
  const evenings: CallingWindow = { ...EVERY_DAY, start: '18:00', end: '24:00' };
  assert.equal(insideWindow(at('2026-06-10T21:59:59Z'), evenings, BERLIN), true); // 23:59:59 CEST
  assert.equal(insideWindow(at('2026-06-10T22:00:00Z'), evenings, BERLIN), false); // 00:00 CEST
  assert.equal(iso(nextOpening(at('2026-06-10T22:00:00Z'), evenings, BERLIN)), '2026-06-11T16:00:00.000Z');
});

test('zones whose windows never overlap have no opening (null), not a guess', () => {
  const office: CallingWindow = { ...EVERY_DAY, start: '09:00', end: '17:00' };
  assert.equal(nextOpening(at('2026-06-10T00:00:00Z'), office, ['Asia/Tokyo', 'America/New_York']), null);
  assert.equal(insideWindow(at('2026-06-10T00:00:00Z'), office, ['Asia/Tokyo', 'America/New_York']), false);
  // A 14-hour window does overlap: 12:00 JST is 23:00 EDT, so wait for 08:00 EDT (21:00 JST).
  const long: CallingWindow = { ...EVERY_DAY, start: '08:00', end: '22:00' };
  assert.equal(
    iso(nextOpening(at('2026-06-10T03:00:00Z'), long, ['Asia/Tokyo', 'America/New_York'])),
    '2026-06-10T12:00:00.000Z', // 08:00 EDT = 21:00 JST
  );
});

test('a US toll-free number maps to zones from Guam to Pago Pago: the honest answer is no common window', async () => {
  const { zones, source } = await leadTimeZones({
    phoneE164: '+18005550100',
    metadata: null,
    workspaceTimeZone: 'UTC',
  });
  assert.equal(source, 'phone');
  assert.ok(zones.includes('Pacific/Guam') && zones.includes('Pacific/Pago_Pago'), zones.join());
  assert.equal(nextOpening(at('2026-06-10T00:00:00Z'), DEFAULT_CALLING_WINDOW, zones), null);
  // Such a lead is called in the workspace's hours instead of never; a number of one zone keeps it.
  const input = { phoneE164: '+18005550100', metadata: null, workspaceTimeZone: 'America/Chicago' };
  assert.deepEqual(await windowZones(at('2026-06-10T00:00:00Z'), DEFAULT_CALLING_WINDOW, input), ['America/Chicago']);
  const berlin = { ...input, phoneE164: '+4930901820' };
  assert.deepEqual(await windowZones(at('2026-06-10T00:00:00Z'), DEFAULT_CALLING_WINDOW, berlin), BERLIN);
});

test('nothing open within 14 days is null', () => {
  const holidays = Array.from({ length: 20 }, (_, i) => `2026-06-${String(10 + i).padStart(2, '0')}`);
  assert.equal(nextOpening(at('2026-06-10T00:00:00Z'), { ...EVERY_DAY, holidays }, BERLIN), null);
  assert.equal(nextOpening(at('2026-06-10T00:00:00Z'), { ...EVERY_DAY, days: [] }, BERLIN), null);
  // Closed for exactly 14 days: the opening on day 15 is past the horizon.
  const fortnight = holidays.slice(0, 14);
  assert.equal(nextOpening(at('2026-06-10T00:00:00Z'), { ...EVERY_DAY, holidays: fortnight }, BERLIN), null);
  assert.equal(
    iso(nextOpening(at('2026-06-10T00:00:00Z'), { ...EVERY_DAY, holidays: fortnight.slice(0, 13) }, BERLIN)),
    '2026-06-23T07:00:00.000Z',
  );
});

test('the next calling day at 10:00 local', () => {
  // Friday 2026-06-12 17:00 CEST → Saturday 10:00 CEST; Saturday → Monday (Sunday is no calling day).
  assert.equal(
    iso(nextCallingDayAt(at('2026-06-12T15:00:00Z'), '10:00', DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-06-13T08:00:00.000Z',
  );
  assert.equal(
    iso(nextCallingDayAt(at('2026-06-13T08:00:00Z'), '10:00', DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-06-15T08:00:00.000Z',
  );
  // A time before the window opens is moved to the opening; with two zones, to the common opening.
  assert.equal(
    iso(nextCallingDayAt(at('2026-06-12T15:00:00Z'), '07:00', DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-06-13T07:00:00.000Z',
  );
  const southDakota = ['America/North_Dakota/Center', 'America/Denver'];
  assert.equal(
    iso(nextCallingDayAt(at('2026-06-10T16:00:00Z'), '09:00', DEFAULT_CALLING_WINDOW, southDakota)),
    '2026-06-11T15:00:00.000Z', // 09:00 CDT is 08:00 MDT: moved to 09:00 MDT
  );
  // Across the spring-forward weekend: Saturday 2026-03-28 → Monday 2026-03-30 10:00 CEST.
  assert.equal(
    iso(nextCallingDayAt(at('2026-03-28T10:00:00Z'), '10:00', DEFAULT_CALLING_WINDOW, BERLIN)),
    '2026-03-30T08:00:00.000Z',
  );
});

test('a malformed window or no zone is refused loudly', () => {
  const now = at('2026-06-10T10:00:00Z');
  assert.throws(
    () => nextOpening(now, { ...DEFAULT_CALLING_WINDOW, start: '20:00', end: '09:00' }, BERLIN),
    RangeError,
  );
  assert.throws(() => nextOpening(now, { ...DEFAULT_CALLING_WINDOW, start: '9:00' }, BERLIN), RangeError);
  assert.throws(() => insideWindow(now, { ...DEFAULT_CALLING_WINDOW, end: '24:30' }, BERLIN), RangeError);
  assert.throws(() => nextOpening(now, DEFAULT_CALLING_WINDOW, []), RangeError);
  assert.throws(() => nextCallingDayAt(now, '25:00', DEFAULT_CALLING_WINDOW, BERLIN), RangeError);
});

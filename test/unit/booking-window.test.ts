// The booking window of an event type (src/scheduling/booking-window.ts): the minimum notice and
// how far ahead, counted in local calendar days of the workspace's zone, across DST changes too.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { outsideWindow, type BookingWindow } from '../../src/scheduling/booking-window.ts';

const BERLIN = 'Europe/Berlin';
const twoDays: BookingWindow = { minimumNoticeMinutes: 0, horizon: { kind: 'calendarDays', days: 2 } };
const at = (iso: string) => Date.parse(iso);

describe('outsideWindow: calendar days ahead', () => {
  it('counts calendar days when the clocks go back (a 25-hour day)', () => {
    // Sat 24 Oct 2026 00:30 in Berlin (UTC+2); the clocks go back early on Sunday 25 October.
    const now = at('2026-10-23T22:30:00Z');
    // Mon 26 Oct 09:00 in Berlin (UTC+1): the last bookable day.
    assert.equal(outsideWindow(twoDays, at('2026-10-26T08:00:00Z'), now, BERLIN), null);
    assert.equal(outsideWindow(twoDays, at('2026-10-26T22:59:00Z'), now, BERLIN), null, 'Mon 23:59');
    assert.equal(outsideWindow(twoDays, at('2026-10-26T23:00:00Z'), now, BERLIN), 'too_late', 'Tue 00:00');
  });

  it('counts calendar days when the clocks go forward (a 23-hour day)', () => {
    // Fri 27 Mar 2026 23:30 in Berlin (UTC+1); the clocks go forward early on Sunday 29 March.
    const now = at('2026-03-27T22:30:00Z');
    // Sun 29 Mar 23:00 in Berlin (UTC+2) is the last bookable day; Mon 30 Mar 09:00 is beyond it.
    assert.equal(outsideWindow(twoDays, at('2026-03-29T21:00:00Z'), now, BERLIN), null);
    assert.equal(outsideWindow(twoDays, at('2026-03-30T07:00:00Z'), now, BERLIN), 'too_late');
  });

  it('counts only weekdays for business days, and refuses a start within the notice', () => {
    const w: BookingWindow = { minimumNoticeMinutes: 60, horizon: { kind: 'businessDays', days: 2 } };
    // Fri 23 Oct 2026 00:30 in Berlin: Monday and Tuesday are the two business days after it.
    const now = at('2026-10-22T22:30:00Z');
    assert.equal(outsideWindow(w, at('2026-10-22T23:00:00Z'), now, BERLIN), 'too_soon');
    assert.equal(outsideWindow(w, at('2026-10-27T08:00:00Z'), now, BERLIN), null, 'Tue 27 Oct 09:00');
    assert.equal(outsideWindow(w, at('2026-10-28T08:00:00Z'), now, BERLIN), 'too_late', 'Wed 28 Oct 09:00');
  });
});

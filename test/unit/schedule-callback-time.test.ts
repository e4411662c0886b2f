// When a callback the lead asked for happens (src/agent/tools/callback-time.ts): the text the model
// sends read as the lead's wall time or as an instant, the bounds (ahead, at most 14 days), and the
// move into the calling window of every zone the lead may be in.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { callbackTime, parseCallbackAt } from '../../src/agent/tools/callback-time.ts';
import { DEFAULT_CALLING_WINDOW } from '../../src/contact-plan/lead-clock.ts';

const BERLIN = 'Europe/Berlin';
/** Friday 4 December 2026, 10:00 in Berlin (UTC+1). */
const NOW = new Date('2026-12-04T09:00:00Z');
const decide = (text: string, zones = [BERLIN]) =>
  callbackTime({ text, now: NOW, zones, window: DEFAULT_CALLING_WINDOW });

describe('parseCallbackAt', () => {
  it("reads a time without offset as the lead's wall time, DST included", () => {
    assert.equal(parseCallbackAt('2026-12-05T18:00', BERLIN)?.toISOString(), '2026-12-05T17:00:00.000Z');
    assert.equal(parseCallbackAt('2026-07-05 18:00:30', BERLIN)?.toISOString(), '2026-07-05T16:00:30.000Z');
    assert.equal(parseCallbackAt('2026-12-05T18:00', 'America/New_York')?.toISOString(), '2026-12-05T23:00:00.000Z');
  });

  it('reads Z and offsets as instants, whatever the zone', () => {
    assert.equal(parseCallbackAt('2026-12-05T18:00Z', BERLIN)?.toISOString(), '2026-12-05T18:00:00.000Z');
    assert.equal(parseCallbackAt('2026-12-05T18:00:00.000+02:00', BERLIN)?.toISOString(), '2026-12-05T16:00:00.000Z');
    assert.equal(parseCallbackAt('2026-12-05T18:00-0530', BERLIN)?.toISOString(), '2026-12-05T23:30:00.000Z');
  });

  it('refuses words, dates without a time, impossible dates and times, and offsets beyond 14 hours', () => {
    for (const text of [
      'tomorrow after six',
      '2026-12-05',
      '2026-02-30T10:00',
      '2026-13-01T10:00',
      '2026-12-05T24:00',
      '2026-12-05T18:60',
      '2026-12-05T18:00+15:00',
      '2026-12-05T18:00 Europe/Berlin',
    ])
      assert.equal(parseCallbackAt(text, BERLIN), null, text);
  });
});

describe('callbackTime', () => {
  it('a time inside the window stands as asked', () => {
    assert.deepEqual(decide('2026-12-05T18:00'), {
      ok: true,
      requested: new Date('2026-12-05T17:00:00Z'),
      at: new Date('2026-12-05T17:00:00Z'),
      moved: false,
    });
  });

  it('a time after the window closes moves to the next opening (Sunday is shut: Monday 09:00)', () => {
    const t = decide('2026-12-05T21:30');
    assert.ok(t.ok);
    assert.equal(t.at.toISOString(), '2026-12-07T08:00:00.000Z');
    assert.equal(t.moved, true);
  });

  it('the window holds in every zone the lead may be in', () => {
    // 18:00 in Berlin is 12:00 in New York; 19:30 Berlin is 13:30 there: both open. 09:30 Berlin is
    // 03:30 in New York: moved.
    const t = decide('2026-12-05T09:30', [BERLIN, 'America/New_York']);
    assert.ok(t.ok);
    assert.equal(t.at.toISOString(), '2026-12-05T14:00:00.000Z', '09:00 in New York, 15:00 in Berlin');
  });

  it('refuses the past, now, more than 14 days ahead, and unreadable text', () => {
    assert.equal(problem('2026-12-04T09:59'), 'past');
    assert.equal(problem('2026-12-04T10:00'), 'past');
    assert.equal(problem('2026-12-18T10:01'), 'too_far');
    assert.equal(problem('2026-12-18T10:00'), null, 'exactly 14 days is allowed');
    assert.equal(problem('soon'), 'unreadable');
  });

  it('no opening within reach: refused', () => {
    const t = callbackTime({
      text: '2026-12-05T18:00',
      now: NOW,
      zones: [BERLIN],
      window: { ...DEFAULT_CALLING_WINDOW, days: ['sun'], holidays: ['2026-12-06', '2026-12-13', '2026-12-20'] },
    });
    assert.deepEqual(t.ok ? null : t.problem, 'no_window');
  });
});

function problem(text: string): string | null {
  const t = decide(text);
  return t.ok ? null : t.problem;
}

import assert from 'node:assert/strict';
import { test } from 'node:test';
import { nextVoiceStep, voicemailMessageFor, type VoiceHistory } from '../../src/contact-plan/voice-ladder.ts';
import { DEFAULT_CONTACT_PLAN } from '../../src/workspaces/contact-plan-config.ts';

// The voice retry ladder with the default settings, in Europe/Berlin (UTC+2 in September 2050).
const voice = DEFAULT_CONTACT_PLAN.voice;
const window = DEFAULT_CONTACT_PLAN.window;
const zones = ['Europe/Berlin'];
const MIN = 60_000;
// Monday 5 September 2050, 09:30 in Berlin.
const T0 = Date.parse('2050-09-05T07:30:00Z');

function next(history: Partial<VoiceHistory> & { attempts: number }, now: number, livemode = true) {
  return nextVoiceStep({
    voice,
    window,
    zones,
    history: { callTimes: [], lastOutcome: 'no_answer', ...history },
    now: new Date(now),
    livemode,
  });
}
const at = (s: ReturnType<typeof next>) => (s.kind === 'call' ? s.at.toISOString() : s.kind);

test('a ring-out is called again after 2 minutes, then 30, then on the next calling day at 10:00 local', () => {
  assert.equal(at(next({ attempts: 1, callTimes: [new Date(T0)] }, T0)), new Date(T0 + 2 * MIN).toISOString());
  assert.equal(
    at(next({ attempts: 2, callTimes: [new Date(T0)] }, T0 + 2 * MIN)),
    new Date(T0 + 32 * MIN).toISOString(),
  );
  const third = next(
    { attempts: 3, callTimes: [new Date(T0), new Date(T0 + 2 * MIN), new Date(T0 + 32 * MIN)] },
    T0 + 32 * MIN,
  );
  assert.equal(at(third), '2050-09-06T08:00:00.000Z');
  assert.match(third.kind === 'call' ? third.reason : '', /next calling day at 10:00/);
});

test('after four attempts the plan is exhausted', () => {
  assert.equal(at(next({ attempts: 4 }, T0)), 'exhausted');
});

test('a busy line or a declined call is never called straight back: 30 minutes', () => {
  assert.equal(at(next({ attempts: 1, lastOutcome: 'busy' }, T0)), new Date(T0 + 30 * MIN).toISOString());
});

test('at most 3 calls in any 24 hours: the 4th waits until the 1st is a day old', () => {
  // Monday 14:00 Berlin: the next calling day's 10:00 is within 24 hours of the first call.
  const start = Date.parse('2050-09-05T12:00:00Z');
  const calls = [new Date(start), new Date(start + 2 * MIN), new Date(start + 32 * MIN)];
  const s = next({ attempts: 3, callTimes: calls }, start + 32 * MIN);
  assert.equal(at(s), '2050-09-06T12:00:00.000Z');
  assert.match(s.kind === 'call' ? s.reason : '', /at most 3 calls in 24 hours/);
});

test('a sandbox lead runs the ladder 60× faster', () => {
  assert.equal(at(next({ attempts: 1 }, T0, false)), new Date(T0 + 2_000).toISOString());
});

test('the voicemail message is left at most once per 24 hours, with its placeholders filled', () => {
  const vars = { leadFirstName: 'Ada', agentName: 'Mia', businessName: 'Sunny Roofs' };
  const now = new Date(T0);
  assert.equal(
    voicemailMessageFor({ voice, voicemailLeftAt: null, now, livemode: true, vars }),
    'Hi Ada, this is Mia from Sunny Roofs about your enquiry. We will try you again soon.',
  );
  assert.equal(
    voicemailMessageFor({ voice, voicemailLeftAt: new Date(T0 - 23 * 60 * MIN), now, livemode: true, vars }),
    null,
  );
  assert.ok(voicemailMessageFor({ voice, voicemailLeftAt: new Date(T0 - 24 * 60 * MIN), now, livemode: true, vars }));
  assert.equal(
    voicemailMessageFor({
      voice: { ...voice, voicemailMessage: null },
      voicemailLeftAt: null,
      now,
      livemode: true,
      vars,
    }),
    null,
  );
});

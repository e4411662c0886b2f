import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentConfigSchema } from '../../src/workspaces/agent-config.ts';
import { contactPlanOf, contactPlanSchema, DEFAULT_CONTACT_PLAN } from '../../src/workspaces/contact-plan-config.ts';

// The `agent.contactPlan` settings: the defaults the docs promise, and the checks the config file
// and the Agent page share.

test('the defaults are the ones docs/FOLLOW-UP.md lists', () => {
  assert.equal(DEFAULT_CONTACT_PLAN.firstContact, 'immediate');
  assert.deepEqual(DEFAULT_CONTACT_PLAN.window, {
    days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat'],
    start: '09:00',
    end: '20:00',
    holidays: [],
  });
  assert.deepEqual(
    { ...DEFAULT_CONTACT_PLAN.voice, voicemailMessage: typeof DEFAULT_CONTACT_PLAN.voice.voicemailMessage },
    {
      maxAttempts: 4,
      maxAttemptsPer24h: 3,
      retryAfterMinutes: [2, 30],
      busyRetryAfterMinutes: 30,
      nextDayAt: '10:00',
      voicemailMessage: 'string',
    },
  );
  assert.deepEqual(DEFAULT_CONTACT_PLAN.whatsapp.followUps, [{ afterHours: 24 }, { afterHours: 72 }]);
  assert.equal(DEFAULT_CONTACT_PLAN.whatsapp.nudgeAfterMinutes, 120);
  assert.deepEqual(contactPlanOf(null), DEFAULT_CONTACT_PLAN);
  // A section saved before a field existed takes that field's default.
  assert.equal(contactPlanOf({ contactPlan: { voice: { maxAttempts: 6 } } }).voice.maxAttemptsPer24h, 3);
  assert.equal(contactPlanOf({ contactPlan: { voice: { maxAttempts: 6 } } }).voice.maxAttempts, 6);
});

test('what the schema refuses, with a message that names the field', () => {
  const refused: [unknown, string][] = [
    [{ voice: { maxAttempts: 2, maxAttemptsPer24h: 3 } }, 'maxAttemptsPer24h must not exceed maxAttempts'],
    [{ whatsapp: { followUps: [{ afterHours: 72 }, { afterHours: 24 }] } }, 'follow-ups must come in order'],
    [{ window: { start: '20:00', end: '09:00' } }, 'window.end must be after window.start'],
    [{ window: { start: '9:00' } }, 'window.start must be a time such as 09:00'],
    [{ window: { days: [] } }, 'at least one day'],
    [{ window: { holidays: ['25.12.2026'] } }, 'a holiday is a date'],
    [{ voice: { retryAfterMinutes: [0] } }, 'at least 1 minute'],
    [{ whatsapp: { followUps: [{ afterHours: 24, template: { contentSid: 'nope' } }] } }, ''],
    [{ voice: { voicemailMessage: 'x'.repeat(301) } }, ''],
    [{ firstContact: 'later' }, ''],
    [{ unknown: true }, ''],
  ];
  for (const [input, message] of refused) {
    const r = contactPlanSchema.safeParse(input);
    assert.equal(r.success, false, JSON.stringify(input));
    if (message)
      assert.match(r.error!.issues.map((i) => i.message).join('\n'), new RegExp(message), JSON.stringify(input));
  }
  assert.equal(
    contactPlanSchema.safeParse({ window: { end: '24:00' }, voice: { voicemailMessage: null } }).success,
    true,
  );
});

test('the agent section carries the plan (the config file and the Agent page share the schema)', () => {
  const agent = {
    persona: { agentName: 'Mia', company: 'Acme', offer: 'x', tone: 'y' },
    timeZone: 'Europe/Berlin',
    contactPlan: { whatsapp: { followUps: [{ afterHours: 12, template: { name: 'nudge', language: 'de' } }] } },
  };
  const parsed = agentConfigSchema.parse(agent);
  assert.equal(parsed.contactPlan?.whatsapp.followUps[0]?.afterHours, 12);
  assert.equal(agentConfigSchema.safeParse({ ...agent, contactPlan: { voice: { maxAttempts: 11 } } }).success, false);
});

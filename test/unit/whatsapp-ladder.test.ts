import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  afterTemplate,
  firstContactOnSent,
  followUpOnSent,
  followUpTemplate,
  nudgeOnSent,
  replyOnSent,
} from '../../src/contact-plan/whatsapp-ladder.ts';
import { contactPlanSchema, DEFAULT_CONTACT_PLAN } from '../../src/workspaces/contact-plan-config.ts';

const HOUR = 3_600_000;
const w = DEFAULT_CONTACT_PLAN.whatsapp;

test(
  'the first template is followed up at 24 h, ' +
    'the second follow-up at 72 h from it, then the plan gives up 24 h later',
  () => {
    const first = firstContactOnSent(w, true);
    assert.deepEqual(first.attempt, { kind: 'first_contact', data: {} });
    assert.deepEqual(first.next, {
      kind: 'template',
      afterMs: 24 * HOUR,
      reason: 'first follow-up',
      data: { followUp: 1 },
    });
    const one = followUpOnSent(w, 1, true);
    assert.deepEqual(one.attempt, { kind: 'template', data: { followUp: 1 } });
    // 72 h from the first template: 48 h after the first follow-up.
    assert.deepEqual(one.next, {
      kind: 'template',
      afterMs: 48 * HOUR,
      reason: 'second follow-up',
      data: { followUp: 2 },
    });
    assert.deepEqual(followUpOnSent(w, 2, true).next, {
      kind: 'give_up',
      afterMs: 24 * HOUR,
      reason: 'no answer',
      data: {},
    });
  },
);

test('a workspace without follow-ups gives up after the first template', () => {
  const none = contactPlanSchema.parse({ whatsapp: { followUps: [], giveUpAfterHours: 6 } }).whatsapp;
  assert.equal(afterTemplate(none, 0, true).kind, 'give_up');
  assert.equal(afterTemplate(none, 0, true).afterMs, 6 * HOUR);
});

test('sandbox leads follow the ladder 60 times faster', () => {
  assert.equal(firstContactOnSent(w, false).next?.afterMs, (24 * HOUR) / 60);
  assert.equal(replyOnSent(w, false)?.nudge?.afterMs, (120 * 60_000) / 60);
});

test('a reply schedules the nudge after nudgeAfterMinutes; the nudge counts once and then the plan gives up', () => {
  assert.deepEqual(replyOnSent(w, true), { nudge: { afterMs: 120 * 60_000, reason: 'the lead went quiet' } });
  const nudge = nudgeOnSent(w, true);
  assert.equal(nudge.nudged, true);
  assert.deepEqual(nudge.attempt, { kind: 'nudge', data: {} });
  assert.equal(nudge.next?.kind, 'give_up');
  const off = contactPlanSchema.parse({ whatsapp: { nudgeAfterMinutes: null } }).whatsapp;
  assert.equal(replyOnSent(off, true), null);
});

test("a follow-up's own template, or none (the first-contact template again)", () => {
  const own = contactPlanSchema.parse({
    whatsapp: { followUps: [{ afterHours: 24 }, { afterHours: 48, template: { name: 'nudge_2', language: 'en' } }] },
  }).whatsapp;
  assert.equal(followUpTemplate(own, 1), undefined);
  assert.deepEqual(followUpTemplate(own, 2), { name: 'nudge_2', language: 'en' });
});

// WhatsApp follow-ups (docs/FOLLOW-UP.md, docs/WHATSAPP.md "Follow-ups"): the unanswered first
// template gets the workspace's follow-up templates, then the lead goes to a person; a reply ends
// the plan; a retried attempt sends once. The nudge and the providers' limits are in
// whatsapp-follow-up-nudge.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { HOUR, setUpFollowUps } from '../helpers/whatsapp-follow-up-setup.ts';

const f = setUpFollowUps();

describe('an unanswered first template', () => {
  test(
    'follow-up 1 at 24 h, follow-up 2 at 72 h, then the lead ' + 'goes to a person "not reached after 3 attempts"',
    async () => {
      const ws = await f.workspace('twilio');
      const { leadId, phone } = await f.silentLead(ws);
      assert.equal(f.sentTo(phone).length, 1);
      // Scheduled in the statement that recorded the first template.
      const first = await f.pending(leadId);
      assert.equal(first?.kind, 'template');
      assert.ok(Math.abs(first!.at.getTime() - (Date.now() + 24 * HOUR)) < 10 * 60_000, String(first!.at));
      assert.deepEqual(
        (await f.events(leadId, ['contact.attempted'])).map((e) => [e.data.kind, e.data.outcome, e.data.attempt]),
        [['first_contact', 'sent', 1]],
      );

      // Not due yet: nothing happens.
      assert.deepEqual(await f.after(23 * HOUR), []);
      assert.deepEqual(await f.after(HOUR + 10 * 60_000), ['attempted']);
      const sent = f.sentTo(phone);
      assert.equal(sent.length, 2);
      assert.equal(sent[1]!.kind, 'template');
      const second = await f.pending(leadId);
      assert.equal(second?.kind, 'template');

      assert.deepEqual(await f.after(47 * HOUR), []);
      assert.deepEqual(await f.after(HOUR), ['attempted']);
      assert.equal(f.sentTo(phone).length, 3);
      assert.equal((await f.pending(leadId))?.kind, 'give_up');

      assert.deepEqual(await f.after(24 * HOUR), ['exhausted']);
      assert.equal((await f.lead(leadId)).status, 'needs_human');
      const escalated = await f.events(leadId, ['conversation.escalated']);
      assert.equal(escalated.at(-1)?.data.detail, 'not reached after 3 attempts');
      assert.deepEqual(
        (await f.events(leadId, ['contact.attempted'])).map((e) => [
          e.data.kind,
          e.data.followUp ?? null,
          e.data.attempt,
        ]),
        [
          ['first_contact', null, 1],
          ['template', 1, 2],
          ['template', 2, 3],
        ],
      );
      assert.deepEqual(
        (await f.turns(leadId)).map((t) => [t.kind, t.state]),
        [
          ['first_contact', 'sent'],
          ['follow_up', 'sent'],
          ['follow_up', 'sent'],
        ],
      );
    },
  );

  test("a follow-up's own template goes out with the first template's variables", async () => {
    const sid = `HX${'ab'.repeat(16)}`;
    const ws = await f.workspace('twilio', {
      whatsapp: { followUps: [{ afterHours: 24, template: { contentSid: sid } }] },
    });
    f.setup.h.twilio.addTemplate(sid, 'Still interested, {{1}}?');
    const { leadId, phone } = await f.silentLead(ws);
    await f.after(24 * HOUR + 10 * 60_000);
    const sent = f.sentTo(phone);
    assert.equal(sent.length, 2, JSON.stringify(await f.turns(leadId)));
    assert.equal(sent[1]!.contentSid, sid);
    assert.deepEqual(sent[1]!.variables, sent[0]!.variables);
  });
});

describe('a reply ends the plan', () => {
  test('a reply after the first template cancels the pending follow-up', async () => {
    const ws = await f.workspace('twilio');
    const { leadId, phone } = await f.silentLead(ws);
    await f.setup.h.leadSays('twilio', ws.slug, phone, 'Hi, yes I am interested');
    await f.setup.h.settle();
    const ended = await f.events(leadId, ['contact.plan_ended']);
    assert.equal(ended[0]?.data.reason, 'replied');
    assert.deepEqual((ended[0]!.data.cancelled as { kind: string }).kind, 'template');
    // What is pending now is the nudge the agent's answer scheduled, not a follow-up template.
    assert.equal((await f.pending(leadId))?.kind, 'nudge');
    assert.equal(f.sentTo(phone).filter((m) => m.kind === 'template').length, 1);
  });

  test(
    'a reply arriving while the follow-up waits to be sent: the ' + 'follow-up is not sent and nothing follows it',
    async () => {
      const ws = await f.workspace('twilio');
      const { leadId, phone } = await f.silentLead(ws);
      f.setup.h.clock.advance(24 * HOUR + 10 * 60_000);
      const { runDueSteps } = await import('../helpers/contact-plan-harness.ts');
      // The step queues the follow-up's turn; the lead writes before a worker sends it.
      assert.deepEqual(await runDueSteps(f.setup.h.app, f.setup.h.clock), ['attempted']);
      await f.setup.h.leadSays('twilio', ws.slug, phone, 'Sorry, busy week. Yes please');
      await f.setup.h.settle();
      assert.equal(f.sentTo(phone).filter((m) => m.kind === 'template').length, 1);
      const kinds = (await f.turns(leadId)).map((t) => [t.kind, t.state, t.outcome]);
      assert.deepEqual(kinds.slice(0, 3), [
        ['first_contact', 'sent', null],
        ['follow_up', 'cancelled', 'lead_replied'],
        ['reply', 'sent', null],
      ]);
      assert.notEqual((await f.pending(leadId))?.kind, 'template');
    },
  );
});

describe('a retried attempt', () => {
  test('a worker killed after taking the step: the step runs again and the follow-up is sent once', async () => {
    const ws = await f.workspace('twilio');
    const { leadId, phone } = await f.silentLead(ws);
    f.setup.h.clock.advance(24 * HOUR + 10 * 60_000);
    const step = (await f.pending(leadId))!.step;
    assert.equal(await f.setup.h.app.contactPlans.run(leadId, step), 'attempted');
    // The job again, as pg-boss retries it after the worker died (the step is in flight: resumed).
    assert.equal(await f.setup.h.app.contactPlans.run(leadId, step), 'attempted');
    await f.setup.h.settle();
    assert.equal(f.sentTo(phone).length, 2);
    assert.equal((await f.turns(leadId)).filter((t) => t.kind === 'follow_up').length, 1);
    // And once sent, the job a third time finds the plan moved on.
    assert.equal(await f.setup.h.app.contactPlans.run(leadId, step), 'superseded');
    assert.equal((await f.pending(leadId))?.kind, 'template');
  });
});

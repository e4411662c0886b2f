// The nudge (docs/FOLLOW-UP.md): a lead who answered and fell silent gets one message from the
// agent, free-form inside the 24-hour window and a template outside it; the providers' "not now"
// refusals are skipped steps, not retries or hand-overs; the first template of an `in_window`
// workspace waits for the window.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { ALWAYS_OPEN, HOUR, setUpFollowUps } from '../helpers/whatsapp-follow-up-setup.ts';

const f = setUpFollowUps();

/** A lead who got the first template, answered, and got the agent's answer. */
async function answeredLead(ws: { apiKey: string; slug: string }) {
  const { leadId, phone } = await f.silentLead(ws);
  await f.setup.h.leadSays('twilio', ws.slug, phone, 'Hi, yes I am interested');
  await f.setup.h.settle();
  return { leadId, phone };
}

describe('the nudge', () => {
  test('after 2 hours of silence the agent writes once; the next answer schedules no second nudge', async () => {
    const ws = await f.workspace('twilio');
    const { leadId, phone } = await answeredLead(ws);
    assert.equal((await f.pending(leadId))?.kind, 'nudge');
    const before = f.sentTo(phone).length;
    assert.deepEqual(await f.after(HOUR), []);
    assert.deepEqual(await f.after(HOUR + 5 * 60_000), ['attempted']);
    const sent = f.sentTo(phone);
    assert.equal(sent.length, before + 1);
    assert.equal(sent.at(-1)!.kind, 'text');
    assert.deepEqual((await f.turns(leadId)).at(-1), { kind: 'nudge', state: 'sent', outcome: null });
    assert.ok((await f.plan(leadId)).nudged_at);
    assert.equal((await f.pending(leadId))?.kind, 'give_up');
    const attempted = await f.events(leadId, ['contact.attempted']);
    assert.deepEqual([attempted.at(-1)?.data.kind, attempted.at(-1)?.data.outcome], ['nudge', 'sent']);

    await f.setup.h.leadSays('twilio', ws.slug, phone, 'About 180 a month');
    await f.setup.h.settle();
    assert.equal((await f.lead(leadId)).status, 'in_conversation');
    assert.equal(await f.pending(leadId), null);
  });

  test('outside the 24-hour window the nudge is a template', async () => {
    const ws = await f.workspace('twilio', { whatsapp: { nudgeAfterMinutes: 25 * 60 } });
    const { leadId, phone } = await answeredLead(ws);
    assert.deepEqual(await f.after(25 * HOUR + 5 * 60_000), ['attempted']);
    assert.equal(f.sentTo(phone).at(-1)!.kind, 'template');
    assert.deepEqual((await f.turns(leadId)).at(-1), { kind: 'follow_up', state: 'sent', outcome: null });
    assert.ok((await f.plan(leadId)).nudged_at);
    assert.equal((await f.pending(leadId))?.kind, 'give_up');
  });
});

describe("the providers' limits", () => {
  test("Meta's per-user marketing limit (131049): the follow-up is skipped and the plan goes on", async () => {
    const ws = await f.workspace('meta');
    const { leadId } = await f.silentLead(ws);
    const sends = f.setup.h.meta.sends.length;
    f.setup.h.meta.failNextSends(1, {
      status: 400,
      code: 131049,
      message: '(#131049) This message was not delivered to maintain healthy ecosystem engagement.',
    });
    assert.deepEqual(await f.after(24 * HOUR + 10 * 60_000), ['attempted']);
    assert.equal(f.setup.h.meta.sends.length, sends);
    assert.deepEqual((await f.turns(leadId)).at(-1), { kind: 'follow_up', state: 'failed', outcome: 'skipped:131049' });
    const last = (await f.events(leadId, ['contact.attempted'])).at(-1)!.data;
    assert.deepEqual([last.kind, last.outcome, last.code, last.followUp], ['template', 'skipped', '131049', 1]);
    assert.notEqual((await f.lead(leadId)).status, 'needs_human');
    const next = await f.pending(leadId);
    assert.equal(next?.kind, 'template');
    // The next step is the second follow-up, not the first again.
    const scheduled = await f.events(leadId, ['contact.scheduled']);
    assert.equal(scheduled.at(-1)?.data.followUp, 2);
  });
});

describe("the providers' limits reported later, as a delivery status", () => {
  test(
    'a follow-up accepted, then failed with the per-user limit ' + '(63049): skipped, the lead stays with the agent',
    async () => {
      const ws = await f.workspace('twilio');
      const { leadId } = await f.silentLead(ws);
      f.setup.h.twilio.failNextDeliveries(1, { errorCode: 63049 });
      assert.deepEqual(await f.after(24 * HOUR + 10 * 60_000), ['attempted']);
      assert.equal((await f.lead(leadId)).status, 'in_conversation');
      const [failed] = await f.events(leadId, ['message.failed']);
      assert.equal(failed?.data.outcome, 'limit_reached');
      // The plan goes on: the second follow-up is next.
      const next = await f.pending(leadId);
      assert.equal(next?.kind, 'template');
      assert.equal((await f.events(leadId, ['contact.scheduled'])).at(-1)?.data.followUp, 2);
      assert.equal((await f.events(leadId, ['conversation.escalated'])).length, 0);
    },
  );
});

describe('first contact in the window', () => {
  test('the first template waits in the queue until the window opens; the 201 is the same', async () => {
    const day = (d: number) => new Date(f.setup.h.clock.now + d * 24 * HOUR).toISOString().slice(0, 10);
    // Yesterday, today and tomorrow (UTC) are holidays: today is one wherever the lead lives.
    const ws = await f.workspace('twilio', {
      firstContact: 'in_window',
      window: { ...ALWAYS_OPEN, holidays: [day(-1), day(0), day(1)] },
    });
    const res = await postLead(f.setup.h.app.http, ws.apiKey, validLead({ phone: uniquePhone() }));
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body), ['ok', 'leadId', 'status', 'messageQueued']);
    const { rows } = await f.setup.h.app.db.pool.query(
      `SELECT start_after FROM outbox WHERE queue = 'agent-turn' AND payload->>'leadId' = $1`,
      [res.body.leadId],
    );
    assert.equal(rows.length, 1);
    assert.ok(rows[0].start_after.getTime() > f.setup.h.clock.now + 12 * HOUR, String(rows[0].start_after));

    // A workspace that contacts at once queues the turn with no start_after.
    const now = await f.workspace('twilio');
    const immediate = await postLead(f.setup.h.app.http, now.apiKey, validLead({ phone: uniquePhone() }));
    const { rows: at } = await f.setup.h.app.db.pool.query(
      `SELECT start_after FROM outbox WHERE queue = 'agent-turn' AND payload->>'leadId' = $1`,
      [immediate.body.leadId],
    );
    assert.equal(at[0].start_after, null);
    await f.setup.h.app.db.pool.query(`DELETE FROM outbox WHERE payload->>'leadId' = $1`, [res.body.leadId]);
  });
});

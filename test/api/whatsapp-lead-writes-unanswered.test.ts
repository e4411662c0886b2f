import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitionLead, type LeadStatus } from '../../src/leads/lead-state.ts';
import { DEFAULT_HOLDING_MESSAGE } from '../../src/whatsapp/hand-over.ts';
import { WROTE_AFTER_CLOSE } from '../../src/whatsapp/inbound-service.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { leadEvents } from '../helpers/agent-harness.ts';
import { uniquePhone } from '../helpers/http.ts';
import { setUpWhatsappTurns } from '../helpers/whatsapp-turn-setup.ts';

// A lead who writes when the agent will not answer is never left unseen (docs/WHATSAPP.md,
// "Inbound" and "When something fails"): with the kill switch off, even before any first contact,
// the lead goes to a person with the holding message; a booked, unqualified or opted-out lead
// keeps its status, and the message is on its timeline for a person.

const { setup: env, leadWithTemplate, twilioTo, lead, turns } = setUpWhatsappTurns();

let op: AdminSession | undefined;
async function operator(): Promise<AdminSession> {
  if (op) return op;
  const a = await makeOperator(env.h.app, [{ workspaceId: env.tw.workspaceId, role: 'owner' }]);
  return (op = (await signIn(env.h.app.http, a.email, a.password)).session!);
}

const setAgent = (on: boolean) =>
  env.h.app.db.pool.query('UPDATE workspaces SET agent_enabled = $2 WHERE id = $1', [env.tw.workspaceId, on]);
const escalations = async (leadId: string) =>
  (await leadEvents(env.h.app.db.pool, leadId)).filter((e) => e.type === 'conversation.escalated').map((e) => e.data);
const operatorSets = async (leadId: string, to: LeadStatus) =>
  assert.ok((await transitionLead(env.h.app.db.pool, { leadId, to, actor: 'operator', event: { type: 'test' } })).ok);

describe('the kill switch off before the first contact', () => {
  it('a lead who writes first goes to a person with the holding message; the model is not asked', async () => {
    const raw = uniquePhone();
    const phone = `+${raw.replace(/\D/g, '')}`;
    const modelCalls = env.h.chat.requests.length;
    await setAgent(false);
    let leadId: string;
    try {
      ({ leadId } = await env.h.submit(env.tw.apiKey, { phone: raw }));
      await env.h.settle();
      await env.h.leadSays('twilio', env.tw.slug, phone, 'Hello');
      await env.h.settle();
    } finally {
      await setAgent(true);
    }
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.deepEqual(
      (await escalations(leadId)).map((d) => [d.outcome, d.holdingMessage]),
      [['agent_off', true]],
    );
    assert.deepEqual(
      twilioTo(phone).map((m) => m.text),
      [DEFAULT_HOLDING_MESSAGE],
    );
    assert.equal(env.h.chat.requests.length, modelCalls);
    assert.deepEqual(
      (await turns(leadId)).map((t) => [t.kind, t.state]),
      [['reply', 'sent']],
    );
  });
});

describe('a lead the agent no longer answers writes', () => {
  /** The lead's messages after its first contact, and the model's requests, while `fn` runs. */
  async function quietDuring(phone: string, fn: () => Promise<void>): Promise<void> {
    const [sent, modelCalls] = [twilioTo(phone).length, env.h.chat.requests.length];
    await fn();
    await env.h.settle();
    assert.equal(twilioTo(phone).length, sent, 'nothing is sent');
    assert.equal(env.h.chat.requests.length, modelCalls, 'the model is not asked');
  }

  for (const status of ['booked', 'unqualified'] as const) {
    it(`${status}: the status stays, the message is on the timeline for a person and unread`, async () => {
      const { leadId, phone } = await leadWithTemplate();
      await operatorSets(leadId, status);
      await quietDuring(phone, () =>
        env.h.leadSays('twilio', env.tw.slug, phone, "I can't make Thursday, can we move it?"),
      );
      assert.equal((await lead(leadId)).status, status);
      const [escalated, ...more] = await escalations(leadId);
      assert.equal(more.length, 0);
      assert.equal(escalated?.outcome, WROTE_AFTER_CLOSE);
      assert.equal(escalated?.status, status);
      assert.match(String(escalated?.reason), new RegExp(`closed \\(${status}\\)`));
      assert.equal(typeof escalated?.messageId, 'number');
      const inbox = await admin(
        env.h.app.http,
        await operator(),
        'GET',
        `/api/admin/workspaces/${env.tw.slug}/leads?limit=100`,
      );
      const row = (inbox.body.leads as { id: string; unread: boolean }[]).find((l) => l.id === leadId);
      assert.equal(row?.unread, true);
    });
  }

  it('opted out: nothing is sent, the opt-out stays, the message is on the timeline for a person', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await env.h.leadSays('twilio', env.tw.slug, phone, 'STOP');
    await env.h.settle();
    await quietDuring(phone, () => env.h.leadSays('twilio', env.tw.slug, phone, 'START'));
    const row = await lead(leadId);
    assert.equal(row.status, 'unqualified');
    assert.ok(row.opted_out_at, 'START does not clear the opt-out');
    const [escalated, ...more] = await escalations(leadId);
    assert.equal(more.length, 0);
    assert.equal(escalated?.outcome, WROTE_AFTER_CLOSE);
    assert.match(String(escalated?.reason), /opting out/);
  });

  it('opted out, then handed back to the agent: the lead who writes goes to a person', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await env.h.leadSays('twilio', env.tw.slug, phone, 'STOP');
    await env.h.settle();
    await operatorSets(leadId, 'needs_human');
    await operatorSets(leadId, 'in_conversation');
    await quietDuring(phone, () => env.h.leadSays('twilio', env.tw.slug, phone, 'One more question'));
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.deepEqual(
      (await escalations(leadId)).map((d) => d.outcome),
      [WROTE_AFTER_CLOSE],
    );
  });

  it('with a person already: stored, nothing more on the timeline (the lead is in the waiting view)', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await operatorSets(leadId, 'needs_human');
    await quietDuring(phone, () => env.h.leadSays('twilio', env.tw.slug, phone, 'Hello?'));
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.deepEqual(await escalations(leadId), []);
  });
});

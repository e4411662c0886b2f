import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DO_NOT_CONTACT_MESSAGE, DO_NOT_CONTACT_NOTES } from '../../src/contact-plan/suppression.ts';
import { recordOptOut } from '../../src/leads/lead-opt-out.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The do-not-contact gate on WhatsApp (src/contact-plan/suppression-gate.ts): first contacts, agent
// replies and operator replies all leave through the gated MessagingProvider; a refused send ends
// visibly (the message row and the timeline say why, the lead is closed unless a person has it).
// An opt-out puts the number on the list, and a new lead with that number is never contacted.

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; sandboxKey: string; workspaceId: string };
let op: AdminSession;

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
  const a = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  op = (await signIn(h.app.http, a.email, a.password)).session!;
});
after(() => h.close());

const sentTo = (phone: string) =>
  h.twilio.messages.filter((m) => m.to === `whatsapp:${phone}` || m.to === phone).length;
const leadOf = async (id: string) =>
  (await h.app.db.pool.query('SELECT status, qualification_notes FROM leads WHERE id = $1', [id])).rows[0];
const lastOutbound = async (id: string) =>
  (
    await h.app.db.pool.query(
      `SELECT status, error_code, error_message FROM whatsapp_messages
        WHERE lead_id = $1 AND direction = 'outbound' ORDER BY id DESC LIMIT 1`,
      [id],
    )
  ).rows[0];
const suppressedEvents = async (id: string) =>
  (await h.app.db.pool.query(`SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'contact.suppressed'`, [id]))
    .rows;
const addNumber = (phone: string) =>
  admin(h.app.http, op, 'POST', `/api/admin/workspaces/${ws.slug}/do-not-contact`, { phone });

describe('a WhatsApp message to a number on the do-not-contact list', () => {
  it('first contact: the lead is accepted as today, no template goes out, the lead ends unqualified', async () => {
    const raw = uniquePhone();
    await addNumber(raw);
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: raw });
    await h.settle();
    assert.equal(sentTo(phone), 0);
    assert.deepEqual(await leadOf(leadId), { status: 'unqualified', qualification_notes: DO_NOT_CONTACT_NOTES });
    assert.deepEqual(await lastOutbound(leadId), {
      status: 'failed',
      error_code: 'do_not_contact',
      error_message: DO_NOT_CONTACT_MESSAGE,
    });
    assert.equal((await suppressedEvents(leadId)).length, 1);
    assert.deepEqual(
      h.app.logs.filter((l) => l.includes(phone.slice(1))),
      [],
    );
  });

  it("agent reply: the lead's button puts the number on the list; the next reply is refused", async () => {
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.settle();
    const before = sentTo(phone);
    assert.equal(before, 1);
    const res = await admin(
      h.app.http,
      op,
      'POST',
      `/api/admin/workspaces/${ws.slug}/leads/${leadId}/do-not-contact`,
      {},
    );
    assert.deepEqual(res.body, { ok: true, phone, changed: true });
    await h.leadSays('twilio', ws.slug, phone, 'Hi, what does a panel cost?');
    await h.settle();
    assert.equal(sentTo(phone), before);
    assert.equal((await leadOf(leadId)).status, 'unqualified');
    const page = await admin(h.app.http, op, 'GET', `/api/admin/workspaces/${ws.slug}/leads/${leadId}`);
    assert.equal(page.body.lead.doNotContact.source, 'operator');
  });

  it('operator reply: refused, the lead stays with the person, the message and timeline say why', async () => {
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.settle();
    await h.leadSays('twilio', ws.slug, phone, 'I want a person');
    const base = `/api/admin/workspaces/${ws.slug}/leads/${leadId}`;
    assert.equal((await admin(h.app.http, op, 'POST', `${base}/take-over`, {})).status, 200);
    await h.settle();
    const before = sentTo(phone);
    await addNumber(phone);
    const reply = await admin(h.app.http, op, 'POST', `${base}/reply`, { text: 'Hello from a person' });
    assert.equal(reply.status, 200, JSON.stringify(reply.body));
    await h.settle();
    assert.equal(sentTo(phone), before);
    assert.equal((await leadOf(leadId)).status, 'needs_human');
    assert.equal((await lastOutbound(leadId)).error_message, DO_NOT_CONTACT_MESSAGE);
    assert.equal((await suppressedEvents(leadId))[0]?.data.status, 'needs_human');
  });

  it('a follow-up or any other send: the gated provider refuses it (live and sandbox)', async () => {
    const raw = uniquePhone();
    await addNumber(raw);
    const workspace = (await h.app.workspaces.list()).find((w) => w.id === ws.workspaceId)!;
    const request = {
      to: `+${raw.replace(/\D/g, '')}`,
      content: { kind: 'template' as const, variables: ['Ada'] },
      idempotencyKey: 'k1',
    };
    const live = h.app.conversation.messaging(workspace, h.app.workspaces.settingsOf(workspace))!;
    const refused = await live.send(request);
    assert.deepEqual(refused.ok ? null : [refused.kind, refused.code], ['recipient', 'do_not_contact']);
    const sb = await h.app.sandbox.providers();
    const sandbox = await sb.conversation.messaging(workspace, sb.settings)!.send(request);
    assert.deepEqual(sandbox.ok ? null : sandbox.code, 'do_not_contact');
    assert.equal(sentTo(request.to), 0);
  });

  it('an opt-out (STOP) puts the number on the list: a new lead with it is never contacted', async () => {
    const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
    await h.settle();
    await h.leadSays('twilio', ws.slug, phone, 'STOP');
    await h.settle();
    const listed = await h.app.db.pool.query(
      'SELECT source, lead_id FROM suppressed_numbers WHERE workspace_id = $1 AND phone_e164 = $2',
      [ws.workspaceId, phone],
    );
    assert.deepEqual(listed.rows, [{ source: 'opt_out', lead_id: leadId }]);
    const before = sentTo(phone);
    await h.app.db.pool.query('DELETE FROM leads WHERE id = $1', [leadId]);
    const again = await h.submit(ws.apiKey, { phone });
    await h.settle();
    assert.equal(sentTo(phone), before);
    assert.equal((await leadOf(again.leadId)).status, 'unqualified');
  });

  it("a sandbox lead's opt-out leaves the list alone: the live lead with that number is still answered", async () => {
    const raw = uniquePhone();
    const live = await h.submit(ws.apiKey, { phone: raw });
    await h.settle();
    const planBefore = await h.app.db.pool.query('SELECT ended_at FROM contact_plans WHERE lead_id = $1', [
      live.leadId,
    ]);
    // Anyone with a sandbox key (a publishable one sits in web pages) can make a sandbox lead with
    // any number opt out (…0005 does it in the sandbox): that must not reach the live lead.
    const sandbox = await h.submit(ws.sandboxKey, { phone: raw });
    await recordOptOut(h.app.db.pool, { leadId: sandbox.leadId, actor: 'system', data: { via: 'keyword' } });
    const listed = await h.app.db.pool.query('SELECT 1 FROM suppressed_numbers WHERE phone_e164 = $1', [live.phone]);
    assert.equal(listed.rowCount, 0);
    const planAfter = await h.app.db.pool.query('SELECT ended_at FROM contact_plans WHERE lead_id = $1', [live.leadId]);
    assert.deepEqual(planAfter.rows, planBefore.rows);
    const before = sentTo(live.phone);
    await h.leadSays('twilio', ws.slug, live.phone, 'Hi, what does a panel cost?');
    await h.settle();
    assert.ok(sentTo(live.phone) > before, 'the live lead is answered');
    assert.equal((await leadOf(live.leadId)).status, 'in_conversation');
  });
});

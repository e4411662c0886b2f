import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { DO_NOT_CONTACT_NOTES } from '../../src/contact-plan/suppression.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { voiceWorkspace, type VoiceWorkspace } from '../helpers/voice-harness.ts';
import { voiceWorkspaceSetup } from '../helpers/voice-workspace-setup.ts';

// The do-not-contact gate on calls (src/contact-plan/suppression-gate.ts), built once around the
// voice provider in the composition root: a listed number submitted again is accepted (201) and
// never called; the list is the workspace's own; removing a number lets calls happen again. And
// the list's admin API: roles, paging, bad numbers, the audit trail.

const s = voiceWorkspaceSetup();
let other: VoiceWorkspace;
let owner: AdminSession;
let agent: AdminSession;

// Once, inside each describe (the setup's own hook has run by then).
let ready: Promise<void> | null = null;
const setUp = () => (ready ??= setUpOnce());
async function setUpOnce(): Promise<void> {
  other = await voiceWorkspace(s.h);
  const a = await makeOperator(s.h.app, [{ workspaceId: s.ws.workspaceId, role: 'owner' }]);
  owner = (await signIn(s.h.app.http, a.email, a.password)).session!;
  const b = await makeOperator(s.h.app, [{ workspaceId: s.ws.workspaceId, role: 'agent' }]);
  agent = (await signIn(s.h.app.http, b.email, b.password)).session!;
}

const e164 = (raw: string) => `+${raw.replace(/\D/g, '')}`;
const callsTo = (phone: string) =>
  s.h.vapi.calls.filter((c) => (c.call.customer as { number?: string } | undefined)?.number === phone).length;
const dnc = (w = s.ws) => `/api/admin/workspaces/${w.slug}/do-not-contact`;
const lead = async (id: string) =>
  (await s.h.app.db.pool.query('SELECT status, qualification_notes FROM leads WHERE id = $1', [id])).rows[0];

describe('a call to a number on the do-not-contact list', () => {
  before(setUp);
  it('is never placed at POST: the lead is accepted (201), stored unqualified with the reason', async () => {
    const raw = uniquePhone();
    const added = await admin(s.h.app.http, agent, 'POST', dnc(), { phone: raw, note: 'asked by e-mail' });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.deepEqual(added.body, { ok: true, phone: e164(raw), changed: true });

    const res = await postLead(s.h.app.http, s.ws.apiKey, validLead({ phone: raw }));
    assert.equal(res.status, 201);
    assert.deepEqual(res.body, {
      ok: true,
      leadId: res.body.leadId,
      status: 'unqualified',
      callQueued: false,
    });
    assert.equal(callsTo(e164(raw)), 0);
    assert.deepEqual(await lead(res.body.leadId), { status: 'unqualified', qualification_notes: DO_NOT_CONTACT_NOTES });
    const events = await s.h.app.db.pool.query(
      `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'contact.suppressed'`,
      [res.body.leadId],
    );
    assert.equal(events.rows[0]?.data.to, 'unqualified');
    const page = await admin(s.h.app.http, owner, 'GET', `/api/admin/workspaces/${s.ws.slug}/leads/${res.body.leadId}`);
    assert.equal(page.body.lead.doNotContact.source, 'api');
    // The public read says the same as the lead page.
    const read = await s.h.app.http.inject({
      method: 'GET',
      url: `/api/public/leads/${res.body.leadId}`,
      headers: { authorization: `Bearer ${s.ws.apiKey}` },
    });
    assert.equal(read.json().lead.status, 'unqualified');
    // No phone number in any log line.
    const digits = e164(raw).slice(1);
    assert.deepEqual(
      s.h.app.logs.filter((l) => l.includes(digits)),
      [],
    );
  });

  it('is refused by the gate for any caller of the provider (a retry, a callback)', async () => {
    const raw = uniquePhone();
    await admin(s.h.app.http, agent, 'POST', dnc(), { phone: raw });
    const request = {
      apiKey: 'k',
      assistantId: 'a',
      phoneNumberId: 'p',
      customer: { number: e164(raw), name: 'Ada' },
      variableValues: {},
      metadata: { leadId: '00000000-0000-4000-8000-000000000000', workspaceId: s.ws.workspaceId },
    };
    const refused = await s.h.app.voice.placeCall(request);
    assert.deepEqual(refused.ok ? null : refused.code, 'do_not_contact');
    const sandbox = await (await s.h.app.sandbox.providers()).voice.placeCall(request);
    assert.deepEqual(sandbox.ok ? null : sandbox.code, 'do_not_contact');
    assert.equal(callsTo(e164(raw)), 0);
  });

  it("applies to its own workspace only: another workspace's lead with that number is called", async () => {
    const raw = uniquePhone();
    await admin(s.h.app.http, agent, 'POST', dnc(), { phone: raw });
    const res = await postLead(s.h.app.http, other.apiKey, validLead({ phone: raw }));
    assert.equal(res.status, 201);
    assert.notEqual(res.body.providerCallId, '');
    assert.equal(callsTo(e164(raw)), 1);
  });

  it('is placed again once the number is taken off the list (admins only)', async () => {
    const raw = uniquePhone();
    await admin(s.h.app.http, agent, 'POST', dnc(), { phone: raw });
    const byAgent = await admin(s.h.app.http, agent, 'POST', `${dnc()}/remove`, { phone: raw });
    assert.equal(byAgent.status, 403);
    const removed = await admin(s.h.app.http, owner, 'POST', `${dnc()}/remove`, { phone: raw });
    assert.deepEqual(removed.body, { ok: true, phone: e164(raw), changed: true });
    const res = await postLead(s.h.app.http, s.ws.apiKey, validLead({ phone: raw }));
    assert.equal(res.status, 201);
    assert.equal(callsTo(e164(raw)), 1);
  });
});

describe('the do-not-contact admin API', () => {
  before(setUp);
  it('lists newest first, paged; refuses what is not a number; audits adds and removals', async () => {
    const a = uniquePhone();
    const b = uniquePhone();
    await admin(s.h.app.http, agent, 'POST', dnc(), { phone: a });
    await admin(s.h.app.http, agent, 'POST', dnc(), { phone: b });
    const again = await admin(s.h.app.http, agent, 'POST', dnc(), { phone: b });
    assert.equal(again.body.changed, false);
    const first = await admin(s.h.app.http, agent, 'GET', `${dnc()}?limit=1`);
    assert.equal(first.status, 200);
    assert.equal(first.body.numbers.length, 1);
    assert.ok(first.body.total >= 2);
    const all = await admin(s.h.app.http, agent, 'GET', `${dnc()}?limit=100`);
    const phones = all.body.numbers.map((n: { phone: string }) => n.phone);
    assert.ok(phones.indexOf(e164(b)) < phones.indexOf(e164(a)));
    assert.equal(all.body.numbers[0].operator.name.startsWith('Operator'), true);
    const bad = await admin(s.h.app.http, agent, 'POST', dnc(), { phone: 'call me maybe' });
    assert.equal(bad.status, 400);
    // Another workspace's list is not the operator's.
    const foreign = await admin(s.h.app.http, agent, 'GET', dnc(other));
    assert.equal(foreign.status, 404);
    const audit = await s.h.app.db.pool.query(
      `SELECT type, count(*)::int AS n FROM audit_events WHERE workspace_id = $1 AND type LIKE 'do_not_contact.%'
        GROUP BY type ORDER BY type`,
      [s.ws.workspaceId],
    );
    assert.ok(audit.rows.find((r) => r.type === 'do_not_contact.added')?.n >= 2);
    assert.ok(audit.rows.find((r) => r.type === 'do_not_contact.removed')?.n >= 1);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Role } from '../../src/operators/roles.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { DEFAULT_CONTACT_PLAN } from '../../src/workspaces/contact-plan-config.ts';

// The Form and Agent pages' admin API (docs/DASHBOARD.md, "Form builder and agent settings"):
// everyone reads, owners and admins save; ids stay; a deleted question's label stays on old
// leads; a stale version is 409; the WhatsApp template is edited without its section's secrets.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let chat: Awaited<ReturnType<TestApp['createWorkspace']>>;
const sessions = {} as Record<Role, AdminSession>;
let stranger: AdminSession;
const AUTH_TOKEN = 'twilio-auth-token-never-shown';
const form = () => `/api/admin/workspaces/${ws.slug}/form`;
const agent = (slug = ws.slug) => `/api/admin/workspaces/${slug}/agent`;
const PERSONA = { agentName: 'Mia', company: 'Sunny Roofs', offer: 'solar panels', tone: 'warm' };
const draft = (over: Record<string, unknown> = {}) => ({
  persona: PERSONA,
  criteria: 'Owns a house',
  timeZone: 'Europe/Berlin',
  defaultCountry: 'DE',
  ...over,
});

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('voice');
  chat = await app.createWorkspace('whatsapp', {
    whatsapp: {
      provider: 'twilio',
      accountSid: `AC${'a'.repeat(32)}`,
      authToken: AUTH_TOKEN,
      from: '+15550009999',
      templateContentSid: `HX${'b'.repeat(32)}`,
    },
  });
  for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
    const op = await makeOperator(app, [
      { workspaceId: ws.workspaceId, role },
      { workspaceId: chat.workspaceId, role },
    ]);
    sessions[role] = (await signIn(app.http, op.email, op.password)).session!;
  }
  const other = await app.createWorkspace('voice');
  const op = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  stranger = (await signIn(app.http, op.email, op.password)).session!;
});

after(async () => {
  await app?.close();
});

const audits = async (type: string) =>
  (await app.db.pool.query('SELECT count(*)::int AS n FROM audit_events WHERE type = $1', [type])).rows[0].n as number;

describe('the form builder API', () => {
  it('an owner saves three questions; ids are given once and kept across edits and reorders', async () => {
    const empty = await admin(app.http, sessions.owner, 'GET', form());
    assert.equal(empty.status, 200, JSON.stringify(empty.body));
    assert.deepEqual(empty.body.questions, []);
    assert.match(empty.body.leadsUrl, /\/api\/public\/leads$/);
    const saved = await admin(app.http, sessions.owner, 'PUT', form(), {
      version: empty.body.version,
      questions: [
        { label: 'Do you own the house?', type: 'choice', options: ['Yes', 'No'], required: true },
        { label: 'Monthly bill', type: 'number' },
        { label: 'Anything else?', type: 'text' },
      ],
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const ids = saved.body.questions.map((q: any) => q.id);
    for (const id of ids) assert.match(id, /^q_[A-Za-z0-9]{12}$/);
    assert.equal(await audits('form.updated'), 1);

    const [own, bill, other] = saved.body.questions;
    const edited = await admin(app.http, sessions.admin, 'PUT', form(), {
      version: saved.body.version,
      questions: [
        { ...other, label: 'Anything else to tell us?' },
        own,
        bill,
        { label: 'Roof age', type: 'number', required: false },
      ],
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(
      edited.body.questions.slice(0, 3).map((q: any) => q.id),
      [ids[2], ids[0], ids[1]],
    );
    assert.equal(edited.body.questions[0].label, 'Anything else to tell us?');
    assert.ok(!ids.includes(edited.body.questions[3].id));
  });

  it("a deleted question is retired with its label, and an old lead's answer shows under it", async () => {
    const current = (await admin(app.http, sessions.owner, 'GET', form())).body;
    const [first, ...rest] = current.questions;
    const lead = await postLead(
      app.http,
      ws.sandboxKey,
      validLead({ phone: '+1 555 301 0002', formResponses: { [first.id]: 'Tell me more', [rest[0].id]: 'Yes' } }),
    );
    assert.equal(lead.status, 201, JSON.stringify(lead.body));
    const removed = await admin(app.http, sessions.owner, 'PUT', form(), { version: current.version, questions: rest });
    assert.equal(removed.status, 200);
    assert.deepEqual(removed.body.retiredQuestions, [{ id: first.id, label: first.label }]);
    const page = await admin(
      app.http,
      sessions.viewer,
      'GET',
      `/api/admin/workspaces/${ws.slug}/leads/${lead.body.leadId}`,
    );
    assert.equal(page.status, 200, JSON.stringify(page.body));
    assert.deepEqual(page.body.lead.formAnswers, [
      { id: rest[0].id, label: rest[0].label, value: 'Yes' },
      { id: first.id, label: 'Anything else to tell us?', value: 'Tell me more' },
    ]);
  });

  it('refuses a stale version (409), an id not on the form, and bad fields, naming each', async () => {
    const current = (await admin(app.http, sessions.owner, 'GET', form())).body;
    const stale = await admin(app.http, sessions.admin, 'PUT', form(), {
      version: 'an-old-version',
      questions: current.questions,
    });
    assert.equal(stale.status, 409);
    assert.equal(stale.body.error, 'These settings were changed meanwhile.');
    assert.match(stale.body.message, /reload/);
    const foreign = await admin(app.http, sessions.admin, 'PUT', form(), {
      version: current.version,
      questions: [{ id: 'q_madeup', label: 'X', type: 'text' }],
    });
    assert.equal(foreign.status, 400);
    assert.deepEqual(foreign.body.issues[0].path, ['questions', '0', 'id']);
    assert.match(foreign.body.issues[0].message, /leave the id out/);
    const bad = await admin(app.http, sessions.admin, 'PUT', form(), {
      version: current.version,
      questions: [
        { label: ' ', type: 'text' },
        { label: 'Pick', type: 'choice', options: ['Only one'] },
        { label: 'pick', type: 'text' },
      ],
    });
    assert.equal(bad.status, 400);
    const messages = bad.body.issues.map((i: any) => `${i.path.join('.')}: ${i.message}`);
    assert.ok(messages.includes('questions.0.label: label is required'), messages.join('\n'));
    assert.ok(
      messages.includes('questions.1.options: a choice question needs at least two options'),
      messages.join('\n'),
    );
    const twice = await admin(app.http, sessions.admin, 'PUT', form(), {
      version: current.version,
      questions: [
        { label: 'Pick', type: 'text' },
        { label: 'pick', type: 'text' },
      ],
    });
    assert.equal(twice.status, 400);
    assert.deepEqual(
      twice.body.issues.map((i: any) => `${i.path.join('.')}: ${i.message}`),
      ['questions: two questions are labelled "pick"'],
    );
    const missing = await admin(app.http, sessions.admin, 'PUT', form(), { questions: [] });
    assert.equal(missing.status, 400);
    assert.deepEqual(missing.body.issues[0].path, ['version']);
    assert.deepEqual(
      (await admin(app.http, sessions.owner, 'GET', form())).body.questions,
      current.questions,
      'nothing changed',
    );
  });

  it('agents and viewers read but get 403 on a save; non-members 404; no CSRF 403; signed out 401', async () => {
    const current = (await admin(app.http, sessions.owner, 'GET', form())).body;
    for (const role of ['agent', 'viewer'] as const) {
      assert.equal((await admin(app.http, sessions[role], 'GET', form())).status, 200, role);
      const r = await admin(app.http, sessions[role], 'PUT', form(), { version: current.version, questions: [] });
      assert.equal(r.status, 403, role);
      assert.equal(r.body.error, 'Your role in this workspace does not allow this.');
    }
    assert.equal((await admin(app.http, stranger, 'GET', form())).status, 404);
    assert.equal(
      (await admin(app.http, stranger, 'PUT', form(), { version: current.version, questions: [] })).status,
      404,
    );
    const noCsrf = await admin(
      app.http,
      sessions.owner,
      'PUT',
      form(),
      { version: current.version, questions: [] },
      { csrf: false },
    );
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.body.error, 'Missing or invalid CSRF token.');
    assert.equal((await admin(app.http, null, 'GET', form())).status, 401);
    assert.deepEqual(
      (await admin(app.http, sessions.owner, 'GET', form())).body.questions,
      current.questions,
      'nothing changed',
    );
  });
});

describe('the agent settings API', () => {
  it('an admin saves the persona; the preview is built from the draft by the agent prompt builder', async () => {
    const got = await admin(app.http, sessions.admin, 'GET', agent());
    assert.equal(got.status, 200, JSON.stringify(got.body));
    assert.equal(got.body.enabled, true);
    assert.equal(got.body.whatsappTemplate, null);
    const preview = await admin(
      app.http,
      sessions.viewer,
      'POST',
      `${agent()}/preview`,
      draft({ persona: { ...PERSONA, agentName: 'Draftina' } }),
    );
    assert.equal(preview.status, 200, JSON.stringify(preview.body));
    assert.match(preview.body.prompt, /^## Who you are\nYou are Draftina, speaking for Sunny Roofs\./);
    assert.match(preview.body.prompt, /You are on a phone call/);
    assert.match(
      preview.body.prompt,
      /Anything else to tell us\?|Do you own the house\?/,
      'the saved questions are in it',
    );
    const saved = await admin(app.http, sessions.admin, 'PUT', agent(), { version: got.body.version, ...draft() });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.agent, {
      persona: PERSONA,
      criteria: 'Owns a house',
      timeZone: 'Europe/Berlin',
      defaultCountry: 'DE',
      // Follow-ups as they run: the defaults until saved (admin-contact-plan.test.ts edits them).
      contactPlan: DEFAULT_CONTACT_PLAN,
    });
    assert.equal(await audits('agent.updated'), 1);
    const questions = (await admin(app.http, sessions.owner, 'GET', form())).body.questions;
    assert.ok(questions.length > 0, 'the questions survive an agent save');
    const stale = await admin(app.http, sessions.admin, 'PUT', agent(), { version: got.body.version, ...draft() });
    assert.equal(stale.status, 409);
  });

  it('names each bad field', async () => {
    const { version } = (await admin(app.http, sessions.owner, 'GET', agent())).body;
    const bad = await admin(app.http, sessions.owner, 'PUT', agent(), {
      version,
      ...draft({ persona: { ...PERSONA, company: '' }, timeZone: 'Mars/Base', defaultCountry: 'XX' }),
    });
    assert.equal(bad.status, 400);
    const messages = bad.body.issues.map((i: any) => `${i.path.join('.')}: ${i.message}`);
    assert.ok(messages.includes('persona.company: persona.company is required'), messages.join('\n'));
    assert.ok(
      messages.some((m: string) => m.startsWith('timeZone: timeZone must be an IANA time zone')),
      messages.join('\n'),
    );
    assert.ok(
      messages.some((m: string) => m.startsWith('defaultCountry: defaultCountry must be an ISO 3166-1')),
      messages.join('\n'),
    );
    assert.equal(
      (await admin(app.http, sessions.owner, 'POST', `${agent()}/preview`, draft({ timeZone: 'Nowhere' }))).status,
      400,
    );
  });

  it("edits the WhatsApp template without sending or losing the section's secrets", async () => {
    const got = await admin(app.http, sessions.owner, 'GET', agent(chat.slug));
    assert.equal(got.status, 200);
    assert.deepEqual(got.body.whatsappTemplate, {
      provider: 'twilio',
      templateContentSid: `HX${'b'.repeat(32)}`,
      templateBody: null,
    });
    assert.ok(!JSON.stringify(got.body).includes(AUTH_TOKEN));
    const wrong = await admin(app.http, sessions.owner, 'PUT', agent(chat.slug), {
      version: got.body.version,
      ...draft({ whatsappTemplate: { templateContentSid: 'HX123' } }),
    });
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.body.issues[0].path, ['whatsappTemplate', 'templateContentSid']);
    const sid = `HX${'c'.repeat(32)}`;
    const saved = await admin(app.http, sessions.owner, 'PUT', agent(chat.slug), {
      version: got.body.version,
      ...draft({ whatsappTemplate: { templateContentSid: sid, templateBody: 'Hi {{1}}!' } }),
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.deepEqual(saved.body.whatsappTemplate, {
      provider: 'twilio',
      templateContentSid: sid,
      templateBody: 'Hi {{1}}!',
    });
    assert.ok(!JSON.stringify(saved.body).includes(AUTH_TOKEN));
    const workspace = await app.workspaces.findBySlug(chat.slug);
    const settings = app.workspaces.settingsOf(workspace!);
    assert.equal(
      settings.whatsapp?.provider === 'twilio' && settings.whatsapp.authToken,
      AUTH_TOKEN,
      'the secret is kept',
    );
    assert.equal(settings.whatsapp?.provider === 'twilio' && settings.whatsapp.templateContentSid, sid);
  });

  it('the kill switch: off and on, audited by direction; readers 403', async () => {
    const off = await admin(app.http, sessions.admin, 'POST', `${agent(chat.slug)}/switch-off`, {});
    assert.equal(off.status, 200, JSON.stringify(off.body));
    assert.equal(off.body.enabled, false);
    assert.equal((await admin(app.http, sessions.viewer, 'GET', agent(chat.slug))).body.enabled, false);
    assert.equal(
      (await app.db.pool.query('SELECT agent_enabled FROM workspaces WHERE id = $1', [chat.workspaceId])).rows[0]
        .agent_enabled,
      false,
    );
    assert.equal(await audits('agent.switched_off'), 1);
    assert.equal(
      (await admin(app.http, sessions.owner, 'POST', `${agent(chat.slug)}/switch-on`, {})).body.enabled,
      true,
    );
    assert.equal(await audits('agent.switched_on'), 1);
    for (const role of ['agent', 'viewer'] as const) {
      for (const path of ['switch-off', 'switch-on'])
        assert.equal(
          (await admin(app.http, sessions[role], 'POST', `${agent(chat.slug)}/${path}`, {})).status,
          403,
          `${role} ${path}`,
        );
      const { version } = (await admin(app.http, sessions[role], 'GET', agent())).body;
      assert.equal((await admin(app.http, sessions[role], 'PUT', agent(), { version, ...draft() })).status, 403, role);
    }
    assert.equal(
      (await admin(app.http, sessions.owner, 'POST', `${agent(chat.slug)}/switch-off`, {}, { csrf: false })).status,
      403,
    );
    assert.equal((await admin(app.http, stranger, 'GET', agent())).status, 404);
    assert.equal((await admin(app.http, stranger, 'POST', `${agent()}/switch-off`, {})).status, 404);
    assert.equal((await admin(app.http, stranger, 'POST', `${agent()}/preview`, draft())).status, 404);
    assert.equal(
      (await app.db.pool.query('SELECT agent_enabled FROM workspaces WHERE id = $1', [chat.workspaceId])).rows[0]
        .agent_enabled,
      true,
    );
  });
});

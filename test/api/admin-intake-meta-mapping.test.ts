// A Meta source's field mapping edited on the Form page (docs/INTAKE.md, "Meta Lead Ads"): the
// admin API shows the defaults, takes a mapping checked by the intake's own schema and the
// workspace's questions, and the next `leadgen` webhook (through the Meta Lead Ads simulator and
// the real route) maps with what was saved.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  META_LEADS_SIM,
  startMetaLeadsSimulator,
  type MetaLeadsSimulator,
} from '../../src/simulators/meta-leads/meta-leads-simulator.ts';
import type { AgentConfigInput } from '../../src/workspaces/agent-config.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

let sim: MetaLeadsSimulator;
let app: TestApp;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let otherSlug: string;
let owner: AdminSession;
let outsider: AdminSession;
let sourceId: string;
let hookUrl: string;

const agent = (questions: AgentConfigInput['questions']): AgentConfigInput => ({
  persona: { agentName: 'Mia', company: 'Kitchens Ltd', offer: 'fitted kitchens', tone: 'warm' },
  criteria: 'Wants a kitchen this year.',
  timeZone: 'Europe/Berlin',
  questions,
});

const sources = () => `/api/admin/workspaces/${ws.slug}/intake/sources`;
const call = (method: 'GET' | 'POST' | 'PATCH', url: string, body?: unknown, session = owner) =>
  admin(app.http, session, method, url, body);
const metaOf = async () =>
  (await call('GET', sources())).body.sources.find((s: { id: string }) => s.id === sourceId).meta;

before(async () => {
  sim = await startMetaLeadsSimulator();
  ({ app, base } = await startListeningApp({ env: { WHATSAPP_GRAPH_BASE_URL: sim.graphBaseUrl } }));
  ws = await app.createWorkspace('whatsapp', {
    agent: agent([{ id: 'q_budget', label: 'Budget', type: 'text', required: false }]),
  });
  const other = await app.createWorkspace('whatsapp', {
    agent: agent([{ id: 'q_theirs', label: 'Their question', type: 'text', required: false }]),
  });
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  owner = (await signIn(app.http, op.email, op.password)).session!;
  otherSlug = other.slug;
  const them = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  outsider = (await signIn(app.http, them.email, them.password)).session!;
  const created = await call('POST', sources(), {
    kind: 'meta',
    name: 'Kitchen Page',
    pageAccessToken: META_LEADS_SIM.pageAccessToken,
    appSecret: META_LEADS_SIM.appSecret,
    verifyToken: META_LEADS_SIM.verifyToken,
    pageId: META_LEADS_SIM.pageId,
  });
  assert.equal(created.status, 200, JSON.stringify(created.body));
  sourceId = created.body.source.id;
  hookUrl = created.body.source.url;
  assert.ok(hookUrl.startsWith(base));
});
after(async () => {
  await app?.close();
  await sim?.close();
});

async function leadOf(leadgenId: string) {
  const { rows } = await app.db.pool.query(
    'SELECT name, email, goal, livemode, form_responses, metadata FROM ' +
      'leads WHERE source_id = $1 AND source_lead_id = $2',
    [sourceId, leadgenId],
  );
  return rows[0];
}

describe("a Meta source's field mapping on the Form page", () => {
  test("shows the defaults for Meta's standard fields before anything is saved", async () => {
    assert.deepEqual(await metaOf(), {
      fieldMapping: {
        full_name: 'name',
        first_name: 'first_name',
        last_name: 'last_name',
        phone_number: 'phone',
        email: 'email',
      },
      defaults: {
        full_name: 'name',
        first_name: 'first_name',
        last_name: 'last_name',
        phone_number: 'phone',
        email: 'email',
      },
      organicToSandbox: false,
    });
  });

  test('a saved mapping is what the next leadgen webhook maps with', async () => {
    const saved = await call('PATCH', `${sources()}/${sourceId}`, {
      fieldMapping: {
        budget_range: 'question:q_budget',
        'what_are_you_looking_for?': 'goal',
        city: 'metadata:town',
        email: 'ignore',
      },
      organicToSandbox: true,
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    assert.equal(saved.body.source.meta.fieldMapping.budget_range, 'question:q_budget');
    assert.equal(saved.body.source.meta.fieldMapping.email, 'ignore');
    assert.equal(saved.body.source.meta.fieldMapping.full_name, 'name', 'the defaults stay under the saved mapping');
    assert.equal(saved.body.source.meta.organicToSandbox, true);
    const fieldData = [
      { name: 'full_name', values: ['Grace Hopper'] },
      { name: 'phone_number', values: ['+4915111120001'] },
      { name: 'email', values: ['grace@example.com'] },
      { name: 'what_are_you_looking_for?', values: ['A kitchen'] },
      { name: 'budget_range', values: ['10k-20k'] },
      { name: 'city', values: ['Berlin'] },
    ];
    const ad = sim.addLead({ fieldData });
    assert.equal((await sim.sendLeadgen(hookUrl, ad)).status, 200);
    const lead = await leadOf(ad.id);
    assert.ok(lead, 'stored');
    assert.equal(lead.name, 'Grace Hopper');
    assert.equal(lead.email, null, 'email mapped to ignore');
    assert.equal(lead.goal, 'A kitchen');
    assert.deepEqual(lead.form_responses, { q_budget: '10k-20k' });
    assert.equal(lead.metadata.town, 'Berlin');
    assert.equal(lead.metadata.city, undefined);
    assert.equal(lead.livemode, true);
    // organicToSandbox: a lead not from an ad goes to the sandbox.
    const organic = sim.addLead({
      isOrganic: true,
      fieldData: fieldData.map((f) => (f.name === 'phone_number' ? { ...f, values: ['+4915111120002'] } : f)),
    });
    assert.equal((await sim.sendLeadgen(hookUrl, organic)).status, 200);
    assert.equal((await leadOf(organic.id))?.livemode, false);
  });

  test('an invalid target is refused naming the field, and the saved mapping stays', async () => {
    const before = await metaOf();
    const bad = await call('PATCH', `${sources()}/${sourceId}`, {
      fieldMapping: { budget_range: 'questions:q_budget' },
    });
    assert.equal(bad.status, 400, JSON.stringify(bad.body));
    assert.deepEqual(bad.body.issues[0].path, ['fieldMapping', 'budget_range']);
    assert.match(bad.body.issues[0].message, /question:<id> or metadata:<key>/);
    assert.deepEqual(await metaOf(), before);
  });

  test("another workspace's question id is refused, on edit and on connect", async () => {
    const before = await metaOf();
    const theirs = await call('PATCH', `${sources()}/${sourceId}`, {
      fieldMapping: { budget_range: 'question:q_theirs' },
    });
    assert.equal(theirs.status, 400, JSON.stringify(theirs.body));
    assert.deepEqual(theirs.body.issues, [
      {
        path: ['fieldMapping', 'budget_range'],
        message: "budget_range: q_theirs is not a question of this workspace's form.",
      },
    ]);
    assert.deepEqual(await metaOf(), before);
    const connect = await call('POST', sources(), {
      kind: 'meta',
      name: 'Second Page',
      pageAccessToken: 'EAA-other-token',
      appSecret: 'other-app-secret',
      verifyToken: 'other-verify',
      fieldMapping: { budget: 'question:q_theirs' },
    });
    assert.equal(connect.status, 400, JSON.stringify(connect.body));
    assert.deepEqual(connect.body.issues[0].path, ['fieldMapping', 'budget']);
  });

  test("a Meta mapping is only a Meta source's, and only its workspace's operators edit it", async () => {
    const hook = await call('POST', sources(), { kind: 'webhook', name: 'Typeform' });
    assert.equal(hook.body.source.meta, null);
    const wrong = await call('PATCH', `${sources()}/${hook.body.source.id}`, { fieldMapping: { email: 'email' } });
    assert.equal(wrong.status, 400);
    assert.deepEqual(wrong.body.issues[0].path, ['fieldMapping']);
    const generic = await call('PATCH', `${sources()}/${sourceId}`, { mapping: { phone: 'contact.phone' } });
    assert.equal(generic.status, 400);
    const foreign = await call(
      'PATCH',
      `/api/admin/workspaces/${otherSlug}/intake/sources/${sourceId}`,
      { fieldMapping: { email: 'ignore' } },
      outsider,
    );
    assert.equal(foreign.status, 404);
    assert.equal((await metaOf()).fieldMapping.email, 'ignore', 'unchanged');
  });
});

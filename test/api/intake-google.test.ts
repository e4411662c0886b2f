// Google Ads lead form webhooks (docs/INTAKE.md, "Google lead forms"): Google's deliveries come
// from the simulator (src/simulators/google-leads/) over HTTP to the real route. The key Google
// puts in the body, the column mapping and its override, idempotency by Google's lead_id, test
// leads to the sandbox, the campaign's ids on the lead, errors on the Logs page.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LeadSourceService } from '../../src/intake/lead-source-service.ts';
import { GoogleLeadsSimulator } from '../../src/simulators/google-leads/google-leads-simulator.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let sources: LeadSourceService;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  ({ app } = await startListeningApp());
  sources = new LeadSourceService({ pool: app.pool, secrets: app.secrets, publicBaseUrl: app.config.PUBLIC_BASE_URL });
  ws = await app.createWorkspace('whatsapp');
});
after(() => app.close());

let phoneSeq = 200;
const nextPhone = () => `+4420794${String(++phoneSeq).padStart(5, '0')}`;

/** A Google source and Google's side of it, pointed at the source's URL with `key`. */
async function connect(opts: { key?: string; mapping?: Record<string, unknown>; googleKey?: string } = {}) {
  const { source, secret } = await sources.create(ws.workspaceId, {
    kind: 'google',
    name: 'Spring campaign',
    ...(opts.key ? { secret: opts.key } : {}),
    ...(opts.mapping ? { mapping: opts.mapping } : {}),
  });
  const google = new GoogleLeadsSimulator({ webhookUrl: source.url, googleKey: opts.googleKey ?? secret });
  return { source, secret, google };
}

async function leadsOf(sourceId: string) {
  const { rows } = await app.pool.query(
    `SELECT id, name, phone, email, goal, metadata, livemode, source, source_lead_id, source_detail
       FROM leads WHERE source_id = $1 ORDER BY created_at`,
    [sourceId],
  );
  return rows;
}

async function logOf(sourceId: string) {
  const { rows } = await app.pool.query(
    `SELECT provider, lead_id, http_status, outcome, error, payload FROM integration_events
      WHERE payload->>'sourceId' = $1 ORDER BY id`,
    [sourceId],
  );
  return rows;
}

describe('google_key', () => {
  test(
    'the key the operator chose is what Google must send; a ' + 'wrong key is 401, stores nothing, and is logged',
    async () => {
      const { source, google } = await connect({ key: 'my-google-key-42' });
      assert.match(source.url, /\/api\/intake\/google\/[A-Za-z0-9_-]{32}$/);
      const ok = await google.submitLead({ fullName: 'Ada Lovelace', phone: nextPhone() });
      assert.equal(ok.status, 200, ok.text);

      const forged = new GoogleLeadsSimulator({ webhookUrl: source.url, googleKey: 'not-the-key-at-all' });
      const refused = await forged.submitLead({ fullName: 'Eve', phone: nextPhone() });
      assert.equal(refused.status, 401);
      assert.equal((await leadsOf(source.id)).length, 1);
      const log = await logOf(source.id);
      assert.deepEqual(
        log.map((e) => [e.outcome, e.http_status]),
        [
          ['created', 200],
          ['rejected', 401],
        ],
      );
      assert.ok(!JSON.stringify(log).includes('my-google-key-42'), 'the key is never logged');
      assert.ok(!JSON.stringify(log).includes('Eve'), 'a refused body is not stored');
      assert.equal((await sources.get(ws.workspaceId, source.id))?.status, 'failing');
    },
  );

  test('a body that does not parse is a 400 logged by its size only: the key in it is never stored', async () => {
    const { source, secret } = await connect({ key: 'truncated-body-key-77' });
    // Cut off mid-body: no object to read the key from, but the key is in the text.
    const res = await fetch(source.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"google_key":"${secret}", "lead_id":`,
    });
    assert.equal(res.status, 400);
    const log = await logOf(source.id);
    assert.deepEqual(
      log.map((e) => [e.provider, e.outcome, e.http_status]),
      [['google-ads', 'rejected', 400]],
    );
    assert.ok(!JSON.stringify(log).includes(secret), 'the key is never logged');
    assert.deepEqual(log[0].payload.request, { bytes: `{"google_key":"${secret}", "lead_id":`.length });
    assert.equal((await sources.get(ws.workspaceId, source.id))?.status, 'failing');
  });

  test('a wrong key with a huge lead_id is logged with a bounded id: a caller cannot fill the log', async () => {
    const { source } = await connect({ key: 'bounded-key-31' });
    const body = JSON.stringify({ google_key: 'wrong', lead_id: 'x'.repeat(50_000) });
    const res = await fetch(source.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    assert.equal(res.status, 401);
    const [entry] = await logOf(source.id);
    assert.deepEqual(entry.payload.request, { lead_id: 'x'.repeat(200), bytes: body.length });
  });
});

describe('mapping and detail', () => {
  test(
    "Google's standard columns map by default; other answers " + "become metadata; the campaign's ids are kept exactly",
    async () => {
      const { source, google } = await connect();
      const phone = nextPhone();
      const d = await google.submitLead({
        fullName: 'Ada Lovelace',
        phone,
        email: 'ada@example.com',
        postalCode: 'SW1A 1AA',
        questions: [{ columnName: 'Which service?', columnId: 'SERVICE', answer: 'Kitchen' }],
        campaignId: '12345678901',
        adGroupId: '9007199254740993',
        formId: '555',
        creativeId: '777',
        gclId: 'gclid-abc',
      });
      assert.equal(d.status, 200, d.text);
      assert.equal(JSON.parse(d.text).outcome, 'created');
      const [lead] = await leadsOf(source.id);
      assert.deepEqual(
        [lead.name, lead.phone, lead.email, lead.source, lead.source_lead_id, lead.livemode],
        ['Ada Lovelace', phone, 'ada@example.com', 'google', d.leadId, true],
      );
      assert.deepEqual(lead.metadata, { postal_code: 'SW1A 1AA', service: 'Kitchen' });
      assert.deepEqual(lead.source_detail, {
        campaignId: '12345678901',
        adGroupId: '9007199254740993',
        creativeId: '777',
        formId: '555',
        gclId: 'gclid-abc',
        apiVersion: '1.0',
      });
    },
  );

  test("an operator's mapping overrides the defaults (first and last name, a question as the goal)", async () => {
    const { source, google } = await connect({
      mapping: { name: ['FIRST_NAME', 'LAST_NAME'], goal: 'What do you need?', metadata: { zip: 'POSTAL_CODE' } },
    });
    await google.submitLead({
      firstName: 'Grace',
      lastName: 'Hopper',
      phone: nextPhone(),
      postalCode: '10001',
      // A custom question without a column id goes by its name.
      questions: [{ columnName: 'What do you need?', answer: 'A quote' }],
    });
    const [lead] = await leadsOf(source.id);
    assert.deepEqual([lead.name, lead.goal, lead.metadata], ['Grace Hopper', 'A quote', { zip: '10001' }]);
  });
});

describe('idempotency, test leads, errors', () => {
  test('a redelivered lead makes no second lead and no error; the answer names the first', async () => {
    const { source, google } = await connect();
    const first = await google.submitLead({ fullName: 'Ada', phone: nextPhone() });
    const again = await google.redeliver(first);
    assert.equal(again.status, 200);
    assert.deepEqual(JSON.parse(again.text), {
      ok: true,
      leadId: JSON.parse(first.text).leadId,
      outcome: 'duplicate',
      livemode: true,
    });
    assert.equal((await leadsOf(source.id)).length, 1);
    assert.deepEqual(
      (await logOf(source.id)).map((e) => [e.outcome, e.error]),
      [
        ['created', null],
        ['duplicate', null],
      ],
    );
    assert.deepEqual(
      app.logs.map((l) => JSON.parse(l)).filter((l) => l.level >= 40),
      [],
    );
  });

  test("Google's test data goes to the sandbox", async () => {
    const { source, google } = await connect();
    const d = await google.sendTestData();
    assert.equal(d.status, 200, d.text);
    const [lead] = await leadsOf(source.id);
    assert.equal(lead.livemode, false);
    assert.equal(lead.name, 'FirstName LastName');
  });

  test('a lead without a phone is a 400 on the Logs page; a revoked source is 404', async () => {
    const { source, google } = await connect();
    const d = await google.submitLead({ fullName: 'Ada', email: 'ada@example.com' });
    assert.equal(d.status, 400);
    const [entry] = await logOf(source.id);
    assert.deepEqual([entry.provider, entry.outcome, entry.http_status], ['google-ads', 'error', 400]);
    assert.match(entry.error, /phone/);
    assert.equal(entry.payload.request.google_key, undefined);
    await sources.revoke(ws.workspaceId, source.id);
    assert.equal((await google.submitLead({ fullName: 'Ada', phone: nextPhone() })).status, 404);
    assert.deepEqual(await leadsOf(source.id), []);
  });
});

// Generic inbound webhooks (docs/INTAKE.md, "Generic webhooks") through the real app: the secret
// (HMAC signature or bearer), the field mapping, idempotency by the source's own lead id, test
// leads to the sandbox, errors in the integration log and on the source's status.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { charsOf, METADATA_BLOCK_MAX_CHARS, metadataLines } from '../../src/agent/lead-data-block.ts';
import { applyMapping, FLAT_DEFAULTS } from '../../src/intake/field-mapping.ts';
import { LeadSourceService } from '../../src/intake/lead-source-service.ts';
import { signWebhookBody } from '../../src/intake/webhook-auth.ts';
import { webhookSample } from '../../src/intake/webhook-sample.ts';
import { GOAL_MAX_CHARS } from '../../src/leads/lead-submission.ts';
import { METADATA_VALUE_MAX_CHARS } from '../../src/leads/metadata-render.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let sources: LeadSourceService;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  app = await startTestApp();
  sources = new LeadSourceService({ pool: app.pool, secrets: app.secrets, publicBaseUrl: app.config.PUBLIC_BASE_URL });
  ws = await app.createWorkspace('whatsapp');
});
after(() => app.close());

let phoneSeq = 100;
const nextPhone = () => `+44 20 7946 ${String(++phoneSeq).padStart(4, '0')}`;

async function newSource(opts: Parameters<LeadSourceService['create']>[1] extends infer I ? Partial<I> : never = {}) {
  const { source, secret } = await sources.create(ws.workspaceId, { kind: 'webhook', name: 'Tally', ...opts });
  return { source, secret, path: new URL(source.url).pathname };
}

async function post(path: string, body: string, headers: Record<string, string>) {
  const res = await app.http.inject({ method: 'POST', url: path, payload: body, headers });
  return { status: res.statusCode, json: res.json() };
}

const bearer = (secret: string) => ({ 'content-type': 'application/json', authorization: `Bearer ${secret}` });

async function leadsOf(sourceId: string) {
  const { rows } = await app.pool.query(
    `SELECT id, name, phone, email, goal, metadata, livemode, source, source_id, source_lead_id, source_detail,
            api_key_id
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

describe('secret', () => {
  test('a bearer secret or an HMAC signature of the body is accepted', async () => {
    const { source, secret, path } = await newSource();
    const byBearer = await post(path, JSON.stringify({ name: 'Ada', phone: nextPhone() }), bearer(secret));
    assert.equal(byBearer.status, 200, JSON.stringify(byBearer.json));
    assert.equal(byBearer.json.outcome, 'created');
    const body = JSON.stringify({ name: 'Grace', phone: nextPhone() });
    const bySignature = await post(path, body, {
      'content-type': 'application/json',
      'x-leadintake-signature': signWebhookBody(secret, body),
    });
    assert.equal(bySignature.status, 200, JSON.stringify(bySignature.json));
    assert.equal((await leadsOf(source.id)).length, 2);
  });

  test('a wrong or missing secret is 401 and stores no lead; the attempt is on the Logs page', async () => {
    const { source, secret, path } = await newSource();
    const body = JSON.stringify({ name: 'Eve', phone: nextPhone() });
    const attempts: Record<string, string>[] = [
      bearer('lis_not-the-secret-at-all'),
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', 'x-leadintake-signature': signWebhookBody('other-secret', body) },
      // A wrong signature is not rescued by a right bearer beside it.
      { ...bearer(secret), 'x-leadintake-signature': signWebhookBody(secret, `${body} `) },
    ];
    for (const headers of attempts) {
      const res = await post(path, body, headers);
      assert.equal(res.status, 401);
      assert.deepEqual(res.json, { ok: false, error: 'Invalid webhook signature.' });
    }
    assert.deepEqual(await leadsOf(source.id), []);
    const log = await logOf(source.id);
    assert.deepEqual(
      log.map((e) => [e.outcome, e.http_status]),
      attempts.map(() => ['rejected', 401]),
    );
    assert.ok(!JSON.stringify(log).includes('Eve'), 'a refused body is not stored');
    assert.equal((await sources.get(ws.workspaceId, source.id))?.status, 'failing');
  });

  test('an unknown, malformed or revoked token is 404', async () => {
    const { source, secret, path } = await newSource();
    const body = JSON.stringify({ name: 'Ada', phone: nextPhone() });
    assert.equal(
      (await post('/api/intake/webhook/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA', body, bearer(secret))).status,
      404,
    );
    assert.equal((await post('/api/intake/webhook/short', body, bearer(secret))).status, 404);
    // A Google source's token on the generic route is not a generic source.
    const google = await sources.create(ws.workspaceId, { kind: 'google', name: 'G' });
    assert.equal(
      (await post(`/api/intake/webhook/${google.source.url.split('/').pop()}`, body, bearer(google.secret))).status,
      404,
    );
    assert.ok(await sources.revoke(ws.workspaceId, source.id));
    assert.equal((await post(path, body, bearer(secret))).status, 404);
    assert.deepEqual(await leadsOf(source.id), []);
  });
});

describe('mapping', () => {
  test('fields longer than the API takes are cut to fit, not refused: the lead is kept', async () => {
    const { source, secret, path } = await newSource();
    const fields = Object.fromEntries(Array.from({ length: 12 }, (_, i) => [`field_${i}`, 'x'.repeat(900)]));
    const body = { name: 'Ada', phone: nextPhone(), message: 'm'.repeat(3000), remarks: 'r'.repeat(5000), ...fields };
    const res = await post(path, JSON.stringify(body), bearer(secret));
    assert.equal(res.status, 200, JSON.stringify(res.json));
    const [lead] = await leadsOf(source.id);
    assert.equal(lead.goal, 'm'.repeat(GOAL_MAX_CHARS));
    assert.equal(lead.metadata.remarks, 'r'.repeat(METADATA_VALUE_MAX_CHARS));
    // Pairs past the prompt's share are left out, the later ones first.
    assert.ok('field_0' in lead.metadata && !('field_11' in lead.metadata), Object.keys(lead.metadata).join());
    assert.ok(charsOf(metadataLines(lead.metadata)) <= METADATA_BLOCK_MAX_CHARS, 'within the prompt share');
  });

  test(
    'a flat payload maps by default; what no field takes goes ' + 'into metadata; the source is on the lead',
    async () => {
      const { source, secret, path } = await newSource();
      const phone = nextPhone();
      const res = await post(
        path,
        JSON.stringify({
          id: 'sub_1',
          first_name: 'Ada',
          last_name: 'Lovelace',
          phone,
          email: 'ada@example.com',
          message: 'A kitchen',
          budget: 5000,
        }),
        bearer(secret),
      );
      assert.equal(res.status, 200, JSON.stringify(res.json));
      const [lead] = await leadsOf(source.id);
      assert.equal(lead.id, res.json.leadId);
      assert.equal(lead.name, 'Ada Lovelace');
      assert.equal(lead.phone, phone);
      assert.equal(lead.email, 'ada@example.com');
      assert.equal(lead.goal, 'A kitchen');
      assert.deepEqual(lead.metadata, { budget: 5000 });
      assert.equal(lead.source, 'webhook');
      assert.equal(lead.source_lead_id, 'sub_1');
      assert.equal(lead.livemode, true);
      const { rows } = await app.pool.query('SELECT kind, livemode FROM api_keys WHERE id = $1', [lead.api_key_id]);
      assert.deepEqual(rows, [{ kind: 'form', livemode: true }], "submitted with the workspace's form key");
      const view = await sources.get(ws.workspaceId, source.id);
      assert.equal(view?.status, 'active');
      assert.ok(view?.lastLeadAt);
    },
  );

  test('JSON paths: nested keys, positions and list items by label (Tally), form posts too', async () => {
    const mapping = {
      name: 'data.fields[label=Your name].value',
      phone: 'data.fields[label=Phone].value',
      email: '$.data.fields[2].value',
      goal: 'data.fields[label=What do you need?].value',
      sourceLeadId: 'data.submissionId',
      metadata: { plan: 'data.fields[label=Plan].value' },
    };
    const { source, secret, path } = await newSource({ mapping });
    const phone = nextPhone();
    const tally = {
      eventType: 'FORM_RESPONSE',
      data: {
        submissionId: 'tally-9',
        fields: [
          { key: 'q1', label: 'Your name', value: 'Grace Hopper' },
          { key: 'q2', label: 'Phone', value: phone },
          { key: 'q3', label: 'Email', value: 'grace@example.com' },
          { key: 'q4', label: 'What do you need?', value: 'A callback' },
          { key: 'q5', label: 'Plan', value: ['Pro', 'Yearly'] },
        ],
      },
    };
    assert.equal((await post(path, JSON.stringify(tally), bearer(secret))).status, 200);
    const [lead] = await leadsOf(source.id);
    assert.deepEqual(
      [lead.name, lead.phone, lead.email, lead.goal, lead.source_lead_id, lead.metadata],
      ['Grace Hopper', phone, 'grace@example.com', 'A callback', 'tally-9', { plan: 'Pro, Yearly' }],
    );

    const form = await newSource();
    const formPhone = nextPhone();
    const res = await post(
      form.path,
      new URLSearchParams({ name: 'Ada', phone: formPhone, city: 'London' }).toString(),
      {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Bearer ${form.secret}`,
      },
    );
    assert.equal(res.status, 200, JSON.stringify(res.json));
    assert.deepEqual(
      (await leadsOf(form.source.id)).map((l) => [l.phone, l.metadata]),
      [[formPhone, { city: 'London' }]],
    );
  });

  test("the Form page's sample payload is one its mapping reads", () => {
    for (const mapping of [
      {},
      { name: ['contact.first', 'contact.last'], phone: 'contact.tel', sourceLeadId: 'meta.id' },
    ]) {
      const sample = webhookSample('https://intake.example/api/intake/webhook/t', mapping);
      const mapped = applyMapping(sample.body, mapping, FLAT_DEFAULTS);
      assert.equal(mapped.body.name, 'Ada Lovelace');
      assert.equal(mapped.body.phone, '+44 20 7946 0958');
      assert.equal(mapped.sourceLeadId, 'sub_12345');
      assert.ok(sample.curl.includes('Authorization: Bearer <secret>'));
    }
  });
});

describe('idempotency, sandbox, errors', () => {
  test('the same delivery twice makes one lead; the retry is a 200 with that lead and logs no error', async () => {
    const { source, secret, path } = await newSource();
    const body = JSON.stringify({ id: 'zap-77', name: 'Ada', phone: nextPhone() });
    const first = await post(path, body, bearer(secret));
    const counted = async () =>
      (
        await app.pool.query('SELECT sum(count)::int AS n FROM rate_limit_counters WHERE api_key_id = $1', [
          first.json.leadId ? (await leadsOf(source.id))[0].api_key_id : null,
        ])
      ).rows[0].n;
    const countBefore = await counted();
    const again = await post(path, body, bearer(secret));
    assert.equal(first.status, 200);
    assert.equal(await counted(), countBefore, 'a retry is answered before it is counted or submitted');
    assert.deepEqual(again, {
      status: 200,
      json: { ok: true, leadId: first.json.leadId, outcome: 'duplicate', livemode: true },
    });
    assert.equal((await leadsOf(source.id)).length, 1);
    const log = await logOf(source.id);
    assert.deepEqual(
      log.map((e) => [e.outcome, e.http_status, e.error]),
      [
        ['created', 200, null],
        ['duplicate', 200, null],
      ],
    );
    const noisy = app.logs.map((l) => JSON.parse(l)).filter((l) => l.level >= 40);
    assert.deepEqual(noisy, []);
  });

  test('a phone the workspace already has is a 200 without a new lead (no 409 to the sender)', async () => {
    const { source, secret, path } = await newSource();
    const phone = nextPhone();
    const first = await post(path, JSON.stringify({ id: 'a', name: 'Ada', phone }), bearer(secret));
    const other = await post(path, JSON.stringify({ id: 'b', name: 'Ada again', phone }), bearer(secret));
    assert.deepEqual(other.json, { ok: true, leadId: first.json.leadId, outcome: 'duplicate-phone', livemode: true });
    assert.equal((await leadsOf(source.id)).length, 1);
  });

  test('a test lead, or any lead of a sandbox source, is a sandbox lead', async () => {
    const { source, secret, path } = await newSource();
    const res = await post(path, JSON.stringify({ name: 'Ada', phone: nextPhone(), test: true }), bearer(secret));
    assert.equal(res.json.livemode, false);
    const sandboxSource = await newSource({ sandbox: true });
    await post(sandboxSource.path, JSON.stringify({ name: 'Ada', phone: nextPhone() }), bearer(sandboxSource.secret));
    const leads = [...(await leadsOf(source.id)), ...(await leadsOf(sandboxSource.source.id))];
    assert.deepEqual(
      leads.map((l) => l.livemode),
      [false, false],
    );
    const { rows } = await app.pool.query('SELECT kind, livemode FROM api_keys WHERE id = $1', [leads[0].api_key_id]);
    assert.deepEqual(rows, [{ kind: 'form', livemode: false }]);
  });

  test('a payload that makes no valid lead is a 400, on the Logs page and the source status', async () => {
    const { source, secret, path } = await newSource();
    const res = await post(path, JSON.stringify({ name: 'Ada', telephone: '+44 20 7946 0000' }), bearer(secret));
    assert.equal(res.status, 400);
    const [entry] = await logOf(source.id);
    assert.equal(entry.outcome, 'error');
    assert.equal(entry.http_status, 400);
    assert.match(entry.error, /phone/);
    assert.ok(!JSON.stringify(entry).includes(secret), 'the secret is not logged');
    const view = await sources.get(ws.workspaceId, source.id);
    assert.equal(view?.status, 'failing');
    assert.match(view?.lastError ?? '', /phone/);
    const notJson = await post(path, '{"name":', bearer(secret));
    assert.equal(notJson.status, 400);
    assert.deepEqual(await leadsOf(source.id), []);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let workspaceId: string;

before(async () => {
  app = await startTestApp();
  ({ apiKey: key, workspaceId } = await app.createWorkspace('whatsapp'));
});
after(() => app.close());

const PHONE_MSG = 'Phone must be a valid E.164-style number.';

describe('POST /api/public/leads, messaging workspace', () => {
  test('201 with the spec body; lead, timeline and agent-turn job are committed together', async () => {
    const res = await postLead(
      app.http,
      key,
      validLead({ email: 'ada@example.com', goal: 'More leads', metadata: { plan: 'pro' } }),
    );
    assert.equal(res.status, 201);
    assert.deepEqual(Object.keys(res.body), ['ok', 'leadId', 'status', 'messageQueued']);
    assert.equal(res.body.ok, true);
    assert.equal(res.body.status, 'new');
    assert.equal(res.body.messageQueued, true);
    const leadId = res.body.leadId;
    const lead = await app.db.pool.query('SELECT status, workspace_id, consented_at FROM leads WHERE id = $1', [
      leadId,
    ]);
    assert.equal(lead.rows[0].status, 'new');
    assert.equal(lead.rows[0].workspace_id, workspaceId);
    assert.ok(lead.rows[0].consented_at instanceof Date);
    const events = await app.db.pool.query('SELECT type FROM lead_events WHERE lead_id = $1', [leadId]);
    assert.deepEqual(
      events.rows.map((r) => r.type),
      ['lead.created'],
    );
    const outbox = await app.db.pool.query("SELECT job_id FROM outbox WHERE payload->>'leadId' = $1", [leadId]);
    assert.equal(outbox.rowCount, 1);
    await app.relay.drain();
    const jobs = await app.db.pool.query("SELECT id, name, data FROM pgboss.job WHERE data->>'leadId' = $1", [leadId]);
    assert.equal(jobs.rowCount, 1);
    assert.equal(jobs.rows[0].name, 'agent-turn');
    assert.equal(jobs.rows[0].id, outbox.rows[0].job_id);
    assert.equal((await app.db.pool.query('SELECT count(*)::int AS n FROM outbox')).rows[0].n, 0);
  });

  test('every response carries a request id and the IETF rate-limit headers', async () => {
    const res = await postLead(app.http, key, validLead());
    assert.match(String(res.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    assert.equal(res.headers['ratelimit-policy'], '"hourly";q=1000;w=3600');
    assert.match(String(res.headers.ratelimit), /^"hourly";r=\d+;t=\d+$/);
  });

  test('a JSON body without, or with a wrong, Content-Type is still read as JSON', async () => {
    const variants: Record<string, string>[] = [
      {},
      { 'content-type': 'text/plain' },
      { 'content-type': 'application/x-www-form-urlencoded' },
    ];
    for (const headers of variants) {
      const res = await postLead(app.http, key, JSON.stringify(validLead()), headers);
      assert.equal(res.status, 201, JSON.stringify(headers));
    }
  });

  test('a body that is missing or not JSON → 400 `Request body must be valid JSON.`', async () => {
    const expected = { ok: false, error: 'Request body must be valid JSON.' };
    for (const body of [undefined, '', '   ', '{"name":', 'name=Ada', '{"a":1}}']) {
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, 400, String(body));
      assert.deepEqual(res.body, expected);
    }
  });

  test('consent missing or not literally true → the consent error', async () => {
    for (const consent of [undefined, false, 'true', 1, null]) {
      const body = validLead({ consent });
      if (consent === undefined) delete body.consent;
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, 400);
      assert.deepEqual(res.body, { ok: false, error: '`consent` must be true.' });
    }
  });

  test('every bad field is listed in issues, consent included when it is bad too', async () => {
    const res = await postLead(app.http, key, {
      name: '',
      phone: 'abc',
      email: 'nope',
      goal: 5,
      metadata: [1],
      formResponses: { q_1: 3 },
      consent: false,
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'Validation failed.');
    assert.deepEqual(res.body.issues.map((i: { path: string[] }) => i.path.join('.')).sort(), [
      'consent',
      'email',
      'formResponses',
      'goal',
      'metadata',
      'name',
      'phone',
    ]);
    assert.deepEqual(
      res.body.issues.find((i: { path: string[] }) => i.path[0] === 'phone'),
      { path: ['phone'], message: PHONE_MSG },
    );
  });

  test('a body that is JSON but not an object → Validation failed', async () => {
    for (const body of ['[]', '"lead"', '42', 'null']) {
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, 400);
      assert.equal(res.body.error, 'Validation failed.');
    }
  });

  test('the NUL character, which PostgreSQL cannot store, is a validation issue at each path', async () => {
    const res = await postLead(app.http, key, {
      ...validLead(),
      name: 'A\u0000B',
      goal: 'x\u0000',
      metadata: { ok: 'fine', deep: { list: ['a', 'b\u0000'] }, 'k\u0000': 1 },
      formResponses: { q1: '\u0000' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'Validation failed.');
    const message = 'Text must not contain the NUL character (\\u0000).';
    assert.deepEqual(res.body.issues, [
      { path: ['name'], message },
      { path: ['goal'], message },
      { path: ['metadata', 'deep', 'list', '1'], message },
      { path: ['metadata', 'k\u0000'], message },
      { path: ['formResponses', 'q1'], message },
    ]);
  });

  test('metadata nested deeper than 32 levels is a validation issue, not a stack overflow', async () => {
    const nest = (depth: number): unknown => (depth === 0 ? 'leaf' : [nest(depth - 1)]);
    const ok = await postLead(app.http, key, { ...validLead(), metadata: { a: nest(31) } });
    assert.equal(ok.status, 201, 'a value 32 levels below the body is stored');
    for (const depth of [32, 5000]) {
      const body =
        `{"name":"A","phone":"${uniquePhone()}","consent":true,` +
        `"metadata":{"a":${'['.repeat(depth)}${']'.repeat(depth)}}}`;
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, 400, `depth ${depth}`);
      assert.deepEqual(res.body.issues, [
        { path: ['metadata'], message: 'Must not be nested more than 32 levels deep.' },
      ]);
    }
  });

  const boundaryCases: [string, Record<string, unknown>, number][] = [
    ['name of 1 character', { name: 'A' }, 201],
    ['name of 120 characters', { name: 'n'.repeat(120) }, 201],
    ['name of 120 emoji (code points)', { name: '😀'.repeat(120) }, 201],
    ['empty name', { name: '' }, 400],
    ['name of 121 characters', { name: 'n'.repeat(121) }, 400],
    ['blank name', { name: '   ' }, 400],
    ['missing name', { name: undefined }, 400],
    ['goal of 2000 characters', { goal: 'g'.repeat(2000) }, 201],
    ['goal of 2001 characters', { goal: 'g'.repeat(2001) }, 400],
    ['valid email', { email: 'first.last+tag@sub.example.co.uk' }, 201],
    ['email without domain dot', { email: 'a@b' }, 400],
    ['email with spaces', { email: 'a b@example.com' }, 400],
    ['null email (blank field)', { email: null }, 201],
    ['metadata with any JSON values', { metadata: { n: 1, b: true, o: { x: [1, null] }, s: '' } }, 201],
    ['metadata that is a string', { metadata: 'x' }, 400],
    ['formResponses of strings', { formResponses: { q_abc: 'yes' } }, 201],
    ['formResponses with a number', { formResponses: { q_abc: 1 } }, 400],
    ['unknown top-level fields are ignored', { utm: 'x', extra: { a: 1 } }, 201],
  ];
  for (const [title, overrides, status] of boundaryCases) {
    test(`boundary: ${title} → ${status}`, async () => {
      const body = validLead(overrides);
      for (const k of Object.keys(overrides)) if (overrides[k] === undefined) delete body[k];
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, status, JSON.stringify(res.body));
    });
  }

  const phones: [string, number][] = [
    ['+493012', 201], // 7 characters: a possible Berlin number
    ['+44 (0) 20-7946.0958', 201],
    ['+1 (555) 010-0000 . . . . . . ..', 201], // 32 characters
    ['+1 (555) 010-0000 . . . . . . 12', 400], // 32 characters, 13 digits: too long for +1
    ['5550100', 400], // read as +55 50100: Brazil has no 5-digit numbers
    ['555010', 400], // 6 characters
    ['+1 (555) 010-0000 . . . . . . 123', 400], // 33 characters
    ['+1 555 0100 0000 0000 0000 00000', 400], // 32 characters but 24 digits
    ['+1-555-CALL-NOW', 400],
    ['++15550100000', 400],
    ['(((((((', 400],
    ['+1 555 010 0001 ', 201], // trailing space allowed
  ];
  for (const [phone, status] of phones) {
    test(`phone ${JSON.stringify(phone)} (${phone.length} chars) → ${status}`, async () => {
      const res = await postLead(app.http, key, validLead({ phone }));
      assert.equal(res.status, status, JSON.stringify(res.body));
      if (status === 400) assert.deepEqual(res.body.issues, [{ path: ['phone'], message: PHONE_MSG }]);
    });
  }

  test('GET returns the phone and metadata exactly as submitted', async () => {
    const phone = '+49 (30) 901820-77';
    const metadata = { source: 'landing', score: 7, nested: { a: [1, 2] }, blank: '' };
    const res = await postLead(app.http, key, validLead({ phone, metadata }));
    const got = await app.http.inject({
      url: `/api/public/leads/${res.body.leadId}`,
      headers: { authorization: `Bearer ${key}` },
    });
    const lead = got.json().lead;
    assert.equal(lead.phone, phone);
    assert.deepEqual(lead.metadata, metadata);
  });

  test('bodies over 64 KiB → 413 with the error shape', async () => {
    const res = await postLead(app.http, key, validLead({ goal: 'x', metadata: { blob: 'y'.repeat(70 * 1024) } }));
    assert.equal(res.status, 413);
    assert.equal(res.body.ok, false);
    assert.equal(typeof res.body.error, 'string');
  });

  test('50 concurrent POSTs of one phone → exactly one 201, the rest 409 pointing at it', async () => {
    const body = validLead();
    const answers = await Promise.all(Array.from({ length: 50 }, () => postLead(app.http, key, body)));
    const created = answers.filter((a) => a.status === 201);
    const duplicates = answers.filter((a) => a.status === 409);
    assert.equal(created.length, 1);
    assert.equal(duplicates.length, 49);
    for (const d of duplicates) {
      assert.deepEqual(d.body, {
        ok: false,
        error: 'duplicate_phone',
        message: 'A lead with this phone number already exists in the workspace.',
        leadId: created[0]!.body.leadId,
      });
    }
    const rows = await app.db.pool.query(
      "SELECT count(*)::int AS n FROM outbox o JOIN leads l ON l.id = (o.payload->>'leadId')::uuid WHERE l.phone = $1",
      [body.phone],
    );
    await app.relay.drain();
    const jobs = await app.db.pool.query("SELECT count(*)::int AS n FROM pgboss.job WHERE data->>'leadId' = $1", [
      created[0]!.body.leadId,
    ]);
    assert.equal(rows.rows[0].n + jobs.rows[0].n >= 1, true);
    assert.equal(jobs.rows[0].n, 1);
  });

  test('the same phone written differently is the same lead; another workspace may have it', async () => {
    const first = await postLead(app.http, key, validLead({ phone: '+1 (555) 777-0001' }));
    assert.equal(first.status, 201);
    const again = await postLead(app.http, key, validLead({ phone: '1.555.777.0001' }));
    assert.equal(again.status, 409);
    const other = await app.createWorkspace('whatsapp');
    const elsewhere = await postLead(app.http, other.apiKey, validLead({ phone: '+1 (555) 777-0001' }));
    assert.equal(elsewhere.status, 201);
  });

  test('nothing anybody sends yields a 5xx', async () => {
    const bodies = [
      '{"name":{"__proto__":{"x":1}},"phone":"1","consent":true}',
      '{"constructor":{"prototype":{}}}',
      '\u0000',
      '{"name":"\ud800","phone":"5550100999","consent":true}',
      '{"name":"A","phone":"5550100998","consent":true,"metadata":{"x":"\\u0000"}}',
      '9'.repeat(5000),
      JSON.stringify({ metadata: { a: 'b'.repeat(1000) } }),
    ];
    for (const body of bodies) {
      const res = await postLead(app.http, key, body);
      assert.ok(res.status < 500, `${res.status} for ${body.slice(0, 40)}`);
    }
    const weird = await app.http.inject({
      method: 'POST',
      url: '/api/public/leads/%E0%A4%A',
      headers: { authorization: `Bearer ${key}` },
    });
    assert.ok(weird.statusCode < 500);
  });

  test('logs never contain phone numbers, e-mail addresses or API keys', async () => {
    const phone = '+1 555 424 2424';
    await postLead(app.http, key, validLead({ phone, email: 'canary-xyz@example.test' }));
    await postLead(app.http, key, validLead({ phone, email: 'canary-xyz@example.test' }));
    await postLead(app.http, 'li_live_canarycanarycanary', validLead());
    const all = app.logs.join('\n');
    assert.ok(app.logs.length > 0);
    for (const secret of ['424 2424', '4242424', 'canary-xyz', key, 'canarycanary']) {
      assert.ok(!all.includes(secret), `log contains ${secret}`);
    }
  });
});

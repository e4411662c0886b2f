import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { keyCommand } from '../../src/cli/key-commands.ts';
import type { Core } from '../../src/runtime.ts';
import { PublishableKeys } from '../../src/workspaces/api-key-publishable.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// Publishable keys (li_pub_…) from browsers, CORS for their origins, and secret keys refused
// when a browser sends them (docs/INTAKE.md, "Embed and publishable keys"; docs/API.md).

let app: TestApp;
let keys: PublishableKeys;
const clock = new TestClock(Date.parse('2026-11-22T10:05:00.000Z'));
const SITE = 'https://shop.example';
const SECRET_IN_BROWSER = 'Secret keys must stay on your server; use a publishable key (li_pub_…) in a browser.';

before(async () => {
  app = await startTestApp({
    clock,
    // Cache TTL 0: a revocation or a change of origins applies to the next request.
    env: { API_KEY_CACHE_TTL_MS: '0', PUBLISHABLE_ADDRESS_HOURLY_LIMIT: '3', PUBLISHABLE_WORKSPACE_HOURLY_LIMIT: '5' },
  });
  keys = new PublishableKeys(app.db.pool, 1000);
});
after(() => app.close());

async function workspaceWithKey(origins: string[] = [SITE], sandbox = false) {
  const ws = await app.createWorkspace('whatsapp');
  const key = await keys.create({ workspaceId: ws.workspaceId, allowedOrigins: origins, sandbox });
  return { ws, key };
}

const fromBrowser = (origin: string) => ({ 'content-type': 'application/json', origin });

/** POST through the app as a browser at `ip` would (inject's remoteAddress is the client address). */
async function browserPost(key: string, body: unknown, origin: string, ip = '203.0.113.7') {
  const res = await app.http.inject({
    method: 'POST',
    url: '/api/public/leads',
    remoteAddress: ip,
    headers: { authorization: `Bearer ${key}`, ...fromBrowser(origin) },
    payload: JSON.stringify(body),
  });
  return { status: res.statusCode, body: res.json(), headers: res.headers };
}

describe('publishable keys', () => {
  test('created per mode with their origins normalized; bad origins refused', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const live = await keys.create({ workspaceId: ws.workspaceId, allowedOrigins: ['HTTPS://Shop.Example/', SITE] });
    assert.match(live.key, /^li_pub_live_[\w-]{32}$/);
    assert.deepEqual(live.allowedOrigins, [SITE]);
    const sandboxKey = await keys.create({
      workspaceId: ws.workspaceId,
      allowedOrigins: ['http://localhost:3000'],
      sandbox: true,
    });
    assert.match(sandboxKey.key, /^li_pub_test_/);
    for (const bad of [
      [],
      ['http://shop.example'],
      ['https://shop.example/contact'],
      ['*'],
      ['https://a.example?x=1'],
    ]) {
      await assert.rejects(keys.create({ workspaceId: ws.workspaceId, allowedOrigins: bad }), /validation_failed/);
    }
    const listed = await keys.list(ws.workspaceId);
    assert.deepEqual(
      listed.map((k) => [k.kind, k.livemode, k.allowedOrigins]),
      [
        ['publishable', true, [SITE]],
        ['publishable', false, ['http://localhost:3000']],
      ],
    );
    assert.equal(await keys.setOrigins(ws.workspaceId, live.id, ['https://other.example']), true);
    assert.equal(await keys.setOrigins(crypto.randomUUID(), live.id, [SITE]), false, "another workspace's key");
  });

  test('a POST from an allowed origin creates a lead with source publishable and CORS headers', async () => {
    const { ws, key } = await workspaceWithKey();
    const res = await browserPost(key.key, validLead(), SITE);
    assert.equal(res.status, 201);
    assert.equal(res.headers['access-control-allow-origin'], SITE);
    assert.equal(res.headers.vary, 'Origin');
    assert.match(String(res.headers['access-control-expose-headers']), /ratelimit/);
    const { rows } = await app.db.pool.query(
      'SELECT source, source_detail, livemode, workspace_id FROM leads WHERE id = $1',
      [res.body.leadId],
    );
    assert.deepEqual(rows[0], {
      source: 'publishable',
      source_detail: { origin: SITE },
      livemode: true,
      workspace_id: ws.workspaceId,
    });
    // A validation error is readable by the page too.
    const bad = await browserPost(key.key, { name: 'x' }, SITE);
    assert.equal(bad.status, 400);
    assert.equal(bad.headers['access-control-allow-origin'], SITE);
  });

  test('the preflight is answered for listed origins only', async () => {
    await workspaceWithKey(['https://listed.example']);
    const preflight = (origin?: string) =>
      app.http.inject({
        method: 'OPTIONS',
        url: '/api/public/leads',
        headers: {
          ...(origin ? { origin } : {}),
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'authorization, content-type',
        },
      });
    const ok = await preflight('https://listed.example');
    assert.equal(ok.statusCode, 204);
    assert.equal(ok.headers['access-control-allow-origin'], 'https://listed.example');
    assert.equal(ok.headers['access-control-allow-methods'], 'POST');
    assert.match(String(ok.headers['access-control-allow-headers']), /authorization/);
    const other = await preflight('https://evil.example');
    assert.equal(other.statusCode, 403);
    assert.equal(other.headers['access-control-allow-origin'], undefined);
    assert.equal((await preflight()).statusCode, 404, 'no Origin: not a preflight, as before');
  });

  test('another origin, or none, is refused without CORS headers and without a lead', async () => {
    const { ws, key } = await workspaceWithKey();
    for (const headers of [fromBrowser('https://evil.example'), { 'content-type': 'application/json' }]) {
      const res = await postLead(app.http, key.key, validLead(), headers);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, { ok: false, error: "This origin is not in the publishable key's allowed origins." });
      assert.equal(res.headers['access-control-allow-origin'], undefined);
    }
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    assert.equal(rows[0].n, 0);
  });

  test('a publishable key cannot read a lead: 403, with or without an Origin', async () => {
    const { key } = await workspaceWithKey();
    const created = await browserPost(key.key, validLead(), SITE);
    for (const headers of [{}, { origin: SITE }] as Record<string, string>[]) {
      const res = await getLead(app.http, key.key, created.body.leadId, headers);
      assert.equal(res.status, 403);
      assert.deepEqual(res.body, {
        ok: false,
        error: 'A publishable key can only create leads; read them with a secret key on your server.',
      });
    }
  });

  test('a revoked publishable key is 401 like any revoked key', async () => {
    const { ws, key } = await workspaceWithKey();
    assert.equal(await keys.revoke(crypto.randomUUID(), key.id), false, "not another workspace's");
    assert.equal(await keys.revoke(ws.workspaceId, key.id), true);
    const res = await browserPost(key.key, validLead(), SITE);
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { ok: false, error: 'API key is invalid or revoked.' });
  });

  test('per-address and per-workspace hourly limits; the honeypot', async () => {
    const { key } = await workspaceWithKey();
    // Per address: 3 an hour.
    for (let i = 0; i < 3; i++)
      assert.equal((await browserPost(key.key, validLead(), SITE, '198.51.100.1')).status, 201);
    const limited = await browserPost(key.key, validLead(), SITE, '198.51.100.1');
    assert.equal(limited.status, 429);
    assert.equal(limited.headers['retry-after'], String(55 * 60), 'until the hour is over');
    assert.equal(limited.headers['access-control-allow-origin'], SITE);
    // Other addresses go on until the workspace's 5 (the attempt refused by its address did not count).
    assert.equal((await browserPost(key.key, validLead(), SITE, '198.51.100.2')).status, 201);
    assert.equal((await browserPost(key.key, validLead(), SITE, '198.51.100.3')).status, 201);
    assert.equal((await browserPost(key.key, validLead(), SITE, '198.51.100.4')).status, 429);
    // The counters keep a keyed hash, never the address.
    const { rows } = await app.db.pool.query('SELECT scope FROM intake_rate_counters');
    assert.ok(rows.length > 0);
    assert.ok(rows.every((r: { scope: string }) => !r.scope.includes('198.51.100')));

    const other = await workspaceWithKey();
    const trapped = await browserPost(other.key.key, validLead({ leadintake_hp: 'http://spam.example' }), SITE);
    assert.equal(trapped.status, 400);
    assert.deepEqual(trapped.body.issues, [{ path: ['leadintake_hp'], message: 'This field must be left empty.' }]);
    assert.equal((await browserPost(other.key.key, validLead({ leadintake_hp: '' }), SITE)).status, 201);
  });

  test("an address over its own limit does not spend the workspace's: another visitor still gets through", async () => {
    const { ws, key } = await workspaceWithKey();
    // More than the workspace's 5 from one address, each caught by the honeypot (no lead).
    for (let i = 0; i < 8; i++)
      await browserPost(key.key, validLead({ leadintake_hp: 'http://spam.example' }), SITE, '198.51.100.9');
    const res = await browserPost(key.key, validLead(), SITE, '198.51.100.10');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    assert.equal(rows[0].n, 1);
  });

  test("what the address limit, the honeypot or the body limit refuses spends none of the key's quota", async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await keys.create({ workspaceId: ws.workspaceId, allowedOrigins: [SITE], hourlyLimit: 4 });
    const flooder = '198.51.100.20';
    for (let i = 0; i < 3; i++) assert.equal((await browserPost(key.key, validLead(), SITE, flooder)).status, 201);
    // The key (public, like its origin) has 1 left: one address flooding past its own limit…
    for (let i = 0; i < 10; i++) assert.equal((await browserPost(key.key, validLead(), SITE, flooder)).status, 429);
    const refused = await browserPost(key.key, validLead(), SITE, flooder);
    assert.equal(refused.status, 429);
    assert.match(String(refused.headers.ratelimit), /^"hourly";r=1;/, "the key's quota as it stands");
    const huge = await browserPost(key.key, validLead({ goal: 'x'.repeat(70 * 1024) }), SITE, flooder);
    assert.equal(huge.status, 413);
    const trapped = await browserPost(
      key.key,
      validLead({ leadintake_hp: 'http://spam.example' }),
      SITE,
      '198.51.100.21',
    );
    assert.equal(trapped.status, 400);
    // …leaves it to the next visitor.
    const res = await browserPost(key.key, validLead(), SITE, '198.51.100.22');
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.match(String(res.headers.ratelimit), /^"hourly";r=0;/);
  });

  test('a sandbox publishable key makes sandbox leads', async () => {
    const { key } = await workspaceWithKey([SITE], true);
    const res = await browserPost(key.key, validLead(), SITE);
    assert.equal(res.status, 201);
    const { rows } = await app.db.pool.query('SELECT livemode FROM leads WHERE id = $1', [res.body.leadId]);
    assert.equal(rows[0].livemode, false);
  });
});

describe('the CLI', () => {
  test('key create --publishable --origin, then key list shows its kind and origins', async () => {
    const { slug, workspaceId } = await app.createWorkspace('whatsapp');
    const printed: string[] = [];
    const log = console.log;
    console.log = (line: string) => void printed.push(line);
    try {
      const args = [
        'create',
        slug,
        '--publishable',
        '--origin',
        `${SITE}, http://localhost:8080`,
        '--sandbox',
        '--json',
      ];
      assert.equal(await keyCommand(args, app as unknown as Core), 0);
      assert.equal(await keyCommand(['list', slug], app as unknown as Core), 0);
      await assert.rejects(keyCommand(['create', slug, '--publishable'], app as unknown as Core), /needs --origin/);
      await assert.rejects(
        keyCommand(['create', slug, '--publishable', '--origin', 'http://shop.example'], app as unknown as Core),
        /https:\/\/host/,
      );
    } finally {
      console.log = log;
    }
    const created = JSON.parse(printed[0]!);
    assert.match(created.key, /^li_pub_test_/);
    assert.deepEqual(created.allowedOrigins, [SITE, 'http://localhost:8080']);
    assert.match(
      printed.at(-1)!,
      /sandbox\tlimit 1000\/h\tactive\tpublishable https:\/\/shop.example,http:\/\/localhost:8080$/,
    );
    assert.equal((await keys.list(workspaceId)).length, 1);
  });
});

describe('secret keys and browsers', () => {
  test('a secret key with an Origin header is refused with a 401 that says why, on both endpoints', async () => {
    const { apiKey, workspaceId } = await app.createWorkspace('whatsapp');
    const post = await postLead(app.http, apiKey, validLead(), fromBrowser(SITE));
    const get = await getLead(app.http, apiKey, crypto.randomUUID(), { origin: 'null' });
    for (const res of [post, get]) {
      assert.equal(res.status, 401);
      assert.deepEqual(res.body, { ok: false, error: SECRET_IN_BROWSER });
      assert.equal(res.headers.ratelimit, undefined, 'refused before it is counted');
    }
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1', [
      workspaceId,
    ]);
    assert.equal(rows[0].n, 0);
  });

  test('without an Origin a secret key works exactly as before', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const post = await postLead(app.http, apiKey, validLead());
    assert.equal(post.status, 201);
    assert.equal(post.headers['access-control-allow-origin'], undefined);
    const get = await getLead(app.http, apiKey, post.body.leadId);
    assert.equal(get.status, 200);
    assert.equal(get.body.source, undefined, 'the read answer gains nothing');
  });

  test("the hosted form's own key is never accepted as a bearer token", async () => {
    const { workspaceId } = await app.createWorkspace('whatsapp');
    const key = await keys.create({ workspaceId, allowedOrigins: [SITE] });
    await app.db.pool.query("UPDATE api_keys SET kind = 'form', allowed_origins = '{}' WHERE id = $1", [key.id]);
    const res = await postLead(app.http, key.key, validLead());
    assert.equal(res.status, 401);
    assert.deepEqual(res.body, { ok: false, error: 'API key is invalid or revoked.' });
    // Refused by the authenticator itself, not only by the routes' check of a key's use.
    assert.deepEqual(await app.authenticator.authenticate(`Bearer ${key.key}`), { ok: false, reason: 'invalid_key' });
  });
});

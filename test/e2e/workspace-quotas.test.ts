import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, TestClock, type TestApp } from '../helpers/test-app.ts';
import { runBin } from '../helpers/worker-process.ts';

// The installation's caps on what one workspace's own admin can do (docs/SECURITY.md, "Quotas"):
// webhook endpoints, API keys and their hourly limits, the inbox search's minimum length and the
// admin API's rate limit per session. Each through the admin API as the dashboard calls it, and
// the caps of endpoints and keys also through the CLI.

const LIMITS = {
  MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE: '2',
  MAX_API_KEYS_PER_WORKSPACE: '3',
  MAX_KEY_HOURLY_LIMIT: '5000',
  ADMIN_RATE_LIMIT_PER_MINUTE: '40',
};

let app: TestApp;
const clock = new TestClock();
type Workspace = Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  app = await startTestApp({ env: LIMITS, clock });
});

after(async () => {
  await app?.close();
});

/** A new workspace and a new session of its owner (each session has its own rate-limit count). */
async function ownedWorkspace(): Promise<{ ws: Workspace; owner: AdminSession }> {
  const ws = await app.createWorkspace('whatsapp');
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  return { ws, owner: (await signIn(app.http, op.email, op.password)).session! };
}

function cli(...args: string[]) {
  const env = { PATH: process.env.PATH ?? '', DATABASE_URL: app.db.url, LOG_LEVEL: 'warn' };
  return runBin(args, { env: { ...env, LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY, ...LIMITS } });
}

describe('webhook endpoints per workspace', () => {
  const url = (i: number) => `https://hooks.example.com/leads/${i}`;

  it('the dashboard adds up to the cap; the next one is refused with a message that says the limit', async () => {
    const { ws, owner } = await ownedWorkspace();
    const base = `/api/admin/workspaces/${ws.slug}/webhooks`;
    const add = (i: number) => admin(app.http, owner, 'POST', base, { url: url(i), eventTypes: [] });
    for (const i of [1, 2]) assert.equal((await add(i)).status, 200);
    const refused = await add(3);
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error, 'Workspace limit reached.');
    assert.match(refused.body.issues[0].message, /has 2 webhook endpoints, the most this installation allows: remove/);
    assert.equal((await admin(app.http, owner, 'GET', base)).body.endpoints.length, 2);
    // Removing one makes room again.
    const [first] = (await admin(app.http, owner, 'GET', base)).body.endpoints;
    assert.equal((await admin(app.http, owner, 'DELETE', `${base}/${first.id}`)).status, 200);
    assert.equal((await add(4)).status, 200);
  });

  it('concurrent adds cannot pass the cap together', async () => {
    const { ws, owner } = await ownedWorkspace();
    const base = `/api/admin/workspaces/${ws.slug}/webhooks`;
    const add = (i: number) => admin(app.http, owner, 'POST', base, { url: url(i), eventTypes: [] });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => add(i)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, 200, ...Array(10).fill(409)]);
    assert.equal((await admin(app.http, owner, 'GET', base)).body.endpoints.length, 2);
  });

  it('`leadintake webhook add` is held to the same cap and says which setting moves it', async () => {
    const { ws } = await ownedWorkspace();
    for (const i of [1, 2]) assert.equal((await cli('webhook', 'add', ws.slug, '--url', url(i))).code, 0);
    const r = await cli('webhook', 'add', ws.slug, '--url', url(3));
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /^leadintake: This workspace has 2 webhook endpoints, the most this installation allows: /);
    assert.match(r.stderr, /MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE/);
  });
});

describe('API keys per workspace and their hourly limits', () => {
  it('an hourly limit over MAX_KEY_HOURLY_LIMIT is refused; up to it is accepted', async () => {
    const { ws, owner } = await ownedWorkspace();
    const base = `/api/admin/workspaces/${ws.slug}/keys`;
    const refused = await admin(app.http, owner, 'POST', base, { name: 'flood', sandbox: false, hourlyLimit: 1e6 });
    assert.equal(refused.status, 400);
    const message = 'The hourly limit of a key can be at most 5000 on this installation.';
    assert.deepEqual(refused.body.issues, [{ path: ['hourlyLimit'], message }]);
    const ok = await admin(app.http, owner, 'POST', base, { name: 'busy', sandbox: false, hourlyLimit: 5000 });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const listed = (await admin(app.http, owner, 'GET', base)).body.keys;
    assert.deepEqual(listed.map((k: { hourlyLimit: number }) => k.hourlyLimit).sort(), [1000, 1000, 5000]);
  });

  it('active keys stop at MAX_API_KEYS_PER_WORKSPACE; a revoked key makes room', async () => {
    const { ws, owner } = await ownedWorkspace(); // created with a live and a sandbox key
    const base = `/api/admin/workspaces/${ws.slug}/keys`;
    assert.equal((await admin(app.http, owner, 'POST', base, { name: 'third', sandbox: false })).status, 200);
    const refused = await admin(app.http, owner, 'POST', base, { name: 'fourth', sandbox: true });
    assert.equal(refused.status, 409);
    assert.equal(refused.body.error, 'Workspace limit reached.');
    assert.match(refused.body.issues[0].message, /has 3 active API keys, the most this installation allows: revoke/);
    const keys = (await admin(app.http, owner, 'GET', base)).body.keys;
    assert.equal((await admin(app.http, owner, 'DELETE', `${base}/${keys[0].id}`)).status, 200);
    assert.equal((await admin(app.http, owner, 'POST', base, { name: 'fourth', sandbox: true })).status, 200);
  });

  it('concurrent creations cannot pass the cap together', async () => {
    const { ws, owner } = await ownedWorkspace();
    const base = `/api/admin/workspaces/${ws.slug}/keys`;
    const create = (i: number) => admin(app.http, owner, 'POST', base, { name: `k${i}`, sandbox: false });
    const answers = await Promise.all(Array.from({ length: 12 }, (_, i) => create(i)));
    assert.deepEqual(answers.map((a) => a.status).sort(), [200, ...Array(11).fill(409)]);
  });

  it('a key made before the cap was lowered keeps its limit and keeps working', async () => {
    const { ws } = await ownedWorkspace();
    // As an installation without the cap (or with a higher one) made it.
    const old = await app.workspaces.createKey(ws.slug, { name: 'old', hourlyLimit: 100_000 });
    const res = await postLead(app.http, old!.key, validLead());
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.headers['ratelimit-policy'], '"hourly";q=100000;w=3600');
  });

  it('`leadintake key create` is held to both caps and says which setting moves each', async () => {
    const { ws } = await ownedWorkspace();
    const over = await cli('key', 'create', ws.slug, '--hourly-limit', '5001');
    assert.equal(over.code, 1);
    assert.match(over.stderr, /^leadintake: The hourly limit of a key can be at most 5000 on this installation\. /);
    assert.match(over.stderr, /MAX_KEY_HOURLY_LIMIT/);
    assert.equal((await cli('key', 'create', ws.slug, '--hourly-limit', '5000')).code, 0);
    const full = await cli('key', 'create', ws.slug);
    assert.equal(full.code, 1);
    assert.match(full.stderr, /^leadintake: This workspace has 3 active API keys.*MAX_API_KEYS_PER_WORKSPACE/);
  });
});

describe('the inbox search', () => {
  it('is refused under 3 characters (a phone number: under 3 digits), with the minimum in the message', async () => {
    const { ws, owner } = await ownedWorkspace();
    const leads = `/api/admin/workspaces/${ws.slug}/leads`;
    for (const q of ['ab', ' a ', '12', '+1 2', '(4)-5']) {
      const res = await admin(app.http, owner, 'GET', `${leads}?q=${encodeURIComponent(q)}`);
      assert.equal(res.status, 400, q);
      const message = 'Search needs at least 3 characters (3 digits for a phone number).';
      assert.deepEqual(res.body.issues, [{ path: ['q'], message }], q);
    }
    for (const q of ['abc', 'Zoë', '123', '+1 23', 'a@b', '']) {
      assert.equal((await admin(app.http, owner, 'GET', `${leads}?q=${encodeURIComponent(q)}`)).status, 200, q);
    }
  });
});

describe('the admin API rate limit per session', () => {
  it('answers 429 with Retry-After past the limit, for that session only, until the next minute', async () => {
    const { ws, owner } = await ownedWorkspace();
    const { owner: colleague } = await ownedWorkspace();
    // Start at the beginning of a minute: the whole test is in one window.
    clock.now = Math.ceil(clock.now / 60_000) * 60_000 + 1000;
    const inbox = `/api/admin/workspaces/${ws.slug}/leads`;
    for (let i = 0; i < 40; i++) {
      assert.equal((await admin(app.http, owner, 'GET', inbox)).status, 200, `request ${i + 1}`);
    }
    const limited = await admin(app.http, owner, 'GET', inbox);
    assert.equal(limited.status, 429);
    assert.deepEqual(limited.body, { ok: false, error: 'Rate limit exceeded.' });
    assert.equal(limited.headers['retry-after'], '59');
    // Every route of the admin API counts, writes and the live-update stream's opening too;
    // another session is not affected.
    assert.equal((await admin(app.http, owner, 'POST', `${inbox}/${crypto.randomUUID()}/take-over`)).status, 429);
    assert.equal((await admin(app.http, owner, 'GET', `/api/admin/workspaces/${ws.slug}/events`)).status, 429);
    assert.equal((await admin(app.http, colleague, 'GET', '/api/admin/session')).status, 200);
    clock.advance(59_000);
    assert.equal((await admin(app.http, owner, 'GET', inbox)).status, 200);
  });
});

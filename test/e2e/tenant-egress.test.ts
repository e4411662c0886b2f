import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery-service.ts';
import { isEndpointError, WebhookEndpointService } from '../../src/webhooks/webhook-endpoint-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';
import { drainWebhooks, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { runBin } from '../helpers/worker-process.ts';

// A workspace admin is a stranger to the installation: the installation's model key
// (OPENAI_API_KEY) never goes to a URL a workspace chose, and no URL a workspace sets (llm.baseUrl,
// webhook endpoints) reaches the installation's own network, in any spelling, when saved or at
// connect time. Here the operator has NOT allowed private networks; the other half, with the
// switch set, is test/api/tenant-egress-allowed.test.ts.

const CANARY = 'sk-canary-installation-key-0123456789';
const OWN_KEY = 'sk-workspace-own-key-0123456789';
const INTERNAL_SECRET = 'INTERNAL-SECRET-7f3a';

let app: TestApp;
/** The installation's model server (OPENAI_BASE_URL): the canary may go here, and only here. */
let installation: RecordingServer;
/** A service on the installation's network that answers with a secret. */
let internal: RecordingServer;
let receiver: WebhookReceiver;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let attacker: AdminSession;
let dir: string;

before(async () => {
  installation = await startRecordingServer({ status: 200, body: '{"id":"gpt-4o-mini","object":"model"}' });
  internal = await startRecordingServer({ status: 500, body: JSON.stringify({ adminToken: INTERNAL_SECRET }) });
  receiver = await startWebhookReceiver();
  app = await startTestApp({ env: { OPENAI_BASE_URL: `${installation.url}/v1`, OPENAI_API_KEY: CANARY } });
  ws = await app.createWorkspace('whatsapp');
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'admin' }]);
  attacker = (await signIn(app.http, op.email, op.password)).session!;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-egress-'));
});

after(async () => {
  await app?.close();
  await Promise.all([installation?.close(), internal?.close(), receiver?.close()]);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const providers = (p = '') => `/api/admin/workspaces/${ws.slug}/providers${p}`;
const saveLlm = (body: unknown) => admin(app.http, attacker, 'PUT', providers('/llm'), body);
const testLlm = () => admin(app.http, attacker, 'POST', providers('/llm/test'));
/** Settings as stored before these rules (WorkspaceService itself does not judge them). */
const storeLegacy = (llm: Record<string, string>) => app.workspaces.update(ws.slug, { llm });
const carriesCanary = (s: RecordingServer) => s.requests.some((r) => JSON.stringify(r.headers).includes(CANARY));

function cli(...args: string[]) {
  return runBin(args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: app.db.url,
      LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      LOG_LEVEL: 'warn',
      LEADINTAKE_DATA_DIR: path.join(dir, 'data'),
      OPENAI_BASE_URL: `${installation.url}/v1`,
      OPENAI_API_KEY: CANARY,
    },
  });
}

describe("the installation's model key", () => {
  it("is used with the installation's own model server (so the canary is live)", async () => {
    assert.equal((await saveLlm({ model: 'gpt-4o-mini' })).status, 200);
    const r = await testLlm();
    assert.equal(r.body.passed, true, JSON.stringify(r.body));
    assert.equal(installation.requests.at(-1)!.headers.authorization, `Bearer ${CANARY}`);
  });

  it("a workspace's own baseUrl without its own apiKey is refused when saved: admin API, config file", async () => {
    const baseUrl = 'https://models.example.com/v1';
    for (const body of [
      { baseUrl, apiKey: null },
      { baseUrl, model: 'm' },
    ]) {
      const r = await saveLlm(body);
      assert.equal(r.status, 400, JSON.stringify(r.body));
      assert.deepEqual(r.body.issues[0].path, ['llm', 'apiKey']);
      assert.match(r.body.issues[0].message, /llm\.apiKey must be set too: the installation's key is sent only to/);
    }
    const file = path.join(dir, 'mixed.json');
    fs.writeFileSync(file, JSON.stringify({ llm: { baseUrl: 'https://models.example.com/v1' } }));
    const updated = await cli('workspace', 'update', ws.slug, '--config', file);
    assert.equal(updated.code, 1, updated.stdout);
    assert.match(updated.stderr, /llm\.apiKey must be set too/);
    const created = await cli(
      'workspace',
      'create',
      '--slug',
      'mixed',
      '--name',
      'M',
      '--channel',
      'whatsapp',
      '--config',
      file,
    );
    assert.equal(created.code, 1, created.stdout);
    assert.match(created.stderr, /llm\.apiKey must be set too/);
  });

  it("stored before the rule: nothing goes to the workspace's URL (Test connection, `workspace verify`)", async () => {
    await storeLegacy({ baseUrl: `${internal.url}/v1` });
    const before = installation.requests.length;
    const r = await testLlm();
    assert.equal(r.status, 200);
    assert.equal(r.body.passed, false);
    assert.match(r.body.checks[0].note, /llm\.apiKey must be set too/);
    const verify = await cli('workspace', 'verify', ws.slug);
    assert.equal(verify.code, 1);
    assert.match(verify.stdout, /FAIL\s+model\s+API key\s+not checked: llm\.baseUrl names a model server of the/);
    assert.equal(internal.requests.length, 0, "nothing reached the workspace's URL");
    assert.equal(installation.requests.length, before);
    assert.ok(!carriesCanary(internal));
  });
});

describe("llm.baseUrl and the installation's network", () => {
  it('an internal listener behind the trailing-? trick, and loopback in any spelling, are refused', async () => {
    const p = internal.port;
    const urls = [
      `${internal.url}/internal/admin?`,
      `http://localhost:${p}/internal/admin?`,
      `http://2130706433:${p}/v1`,
      `http://0x7f000001:${p}/v1`,
      `http://0177.0.0.1:${p}/v1`,
      `http://127.1:${p}/v1`,
      `http://[::1]:${p}/v1`,
      `http://[::ffff:127.0.0.1]:${p}/v1`,
      'http://169.254.169.254/latest/meta-data?',
      'http://10.0.0.5/v1',
      `http://[::7f00:1]:${p}/v1`,
      `http://[64:ff9b::7f00:1]:${p}/v1`,
      `http://[2002:7f00:1::]:${p}/v1`,
    ];
    for (const baseUrl of urls) {
      const r = await saveLlm({ baseUrl, apiKey: OWN_KEY });
      assert.equal(r.status, 400, `${baseUrl}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body.issues[0].path, ['llm', 'baseUrl']);
      const refusal = /^llm\.baseUrl points to (a private, loopback|an address that is never)/;
      assert.match(r.body.issues[0].message, refusal, baseUrl);
    }
    assert.equal(internal.requests.length, 0);
  });

  it('stored anyway, neither a literal address nor a name that resolves to one is connected to', async () => {
    for (const baseUrl of [`${internal.url}/internal/admin?`, `http://localhost:${internal.port}/internal/admin?`]) {
      await storeLegacy({ baseUrl, apiKey: OWN_KEY });
      const r = await testLlm();
      assert.equal(r.body.passed, false);
      assert.match(r.body.checks[0].note, /Did not contact the chat model server: its address is private/, baseUrl);
      assert.ok(!JSON.stringify(r.body).includes(INTERNAL_SECRET));
    }
    assert.equal(internal.requests.length, 0, 'the internal service was never reached');
  });

  it("a turn's model request to it is not sent either", async () => {
    const providers = defaultConversationProviders(app.config, {
      scheduling: app.scheduling,
      chat: { sleep: async () => {} },
    });
    const chat = providers.chat({ llm: { baseUrl: `http://localhost:${internal.port}/v1`, apiKey: OWN_KEY } });
    const r = await chat.model.complete({ model: chat.name, messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(r.ok, false);
    assert.match(r.ok ? '' : r.message, /Did not contact the chat model/);
    assert.equal(internal.requests.length, 0);
  });
});

describe('webhook endpoints', () => {
  const hooks = () => `/api/admin/workspaces/${ws.slug}/webhooks`;

  it('loopback in every spelling is refused for sandbox events too, and IPv6 carrying IPv4 or private', async () => {
    const p = receiver.url.split(':').at(-1)!;
    const urls = [
      receiver.url,
      `http://localhost:${p}`,
      `http://2130706433:${p}/h`,
      `http://0x7f000001:${p}/h`,
      `http://0177.0.0.1:${p}/h`,
      `http://[::1]:${p}/h`,
      `https://localhost:${p}/h`,
      `https://127.0.0.1:${p}/h`,
      `https://[::ffff:127.0.0.1]:${p}/h`,
      'https://10.0.0.5/h',
      'https://100.64.1.1/h',
      'https://169.254.169.254/h',
      'https://[fe80::1]/h',
      'https://[fd12::1]/h',
      'https://[::7f00:1]/h',
      'https://[::a00:5]/h',
      'https://[64:ff9b::a9fe:a9fe]/h',
      'https://[2002:a9fe:a9fe::]/h',
    ];
    for (const url of urls) {
      const r = await admin(app.http, attacker, 'POST', hooks(), { url });
      assert.equal(r.status, 400, `${url}: ${JSON.stringify(r.body)}`);
      assert.deepEqual(r.body.issues[0].path, ['url']);
    }
    assert.equal((await admin(app.http, attacker, 'GET', hooks())).body.endpoints.length, 0);
  });

  it('an endpoint on loopback, by name or literal address, is refused at delivery of a sandbox event', async () => {
    // Added while the operator allowed private networks; the switch is off now.
    const secrets = new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));
    const opened = new WebhookEndpointService(app.db.pool, secrets, () => new Date(), { allowPrivateNetworks: true });
    const service = new WebhookDeliveryService({
      pool: app.db.pool,
      boss: app.boss,
      log: app.log,
      clock: () => new Date(),
      secrets,
      timeoutMs: 5000,
      allowPrivateNetworks: app.config.EGRESS_ALLOW_PRIVATE_NETWORKS,
      retryScheduleSeconds: [],
      jitter: () => 1,
    });
    const byName = receiver.url.replace('http://127.0.0.1', 'https://localhost');
    const urls = [byName, receiver.url.replace('http:', 'https:'), receiver.url];
    for (const [i, url] of urls.entries()) {
      const added = await opened.add(ws.slug, url, ['lead.created']);
      if (isEndpointError(added)) throw new Error(JSON.stringify(added));
      const lead = await postLead(app.http, ws.sandboxKey, validLead({ phone: `+1 555 404 010${i}` }));
      assert.equal(lead.status, 201);
      await app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
      assert.deepEqual(await drainWebhooks({ relay: app.relay, boss: app.boss, service }), ['failed'], url);
      const log = await admin(app.http, attacker, 'GET', `${hooks()}/${added.endpoint.id}/deliveries`);
      const attempt = log.body.deliveries[0].attempts[0];
      assert.equal(attempt.outcome, 'refused', url);
      assert.match(attempt.response, /^refused: /);
      await opened.remove(added.endpoint.id);
    }
    assert.equal(receiver.received.length, 0);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { startChatSimulator, type ChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/test-app.ts';
import { drainWebhooks, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The operator's switch (EGRESS_ALLOW_PRIVATE_NETWORKS=true, as a self-hoster with a model
// server on their own network sets it): a workspace's URLs may then reach 127.0.0.1, but the
// installation's key still never goes to them, what they answer is never shown, and metadata and
// tunnelled addresses stay refused. WhatsApp turns run end to end (whatsapp-harness.ts).

const CANARY = 'sk-canary-installation-key-0123456789';
const OWN_KEY = 'sk-workspace-own-key-0123456789';
const INTERNAL_SECRET = 'INTERNAL-SECRET-7f3a';

let h: WhatsappHarness;
let own: ChatSimulator;
let trap: RecordingServer;
let internal: RecordingServer;
let receiver: WebhookReceiver;

before(async () => {
  own = await startChatSimulator({ apiKeys: [OWN_KEY] });
  trap = await startRecordingServer({ status: 401, body: '{}' });
  internal = await startRecordingServer({ status: 500, body: JSON.stringify({ adminToken: INTERNAL_SECRET }) });
  receiver = await startWebhookReceiver();
  h = await startWhatsappHarness({ env: { OPENAI_API_KEY: CANARY, EGRESS_ALLOW_PRIVATE_NETWORKS: 'true' } });
});

after(async () => {
  await h?.close();
  await Promise.all([own?.close(), trap?.close(), internal?.close(), receiver?.close()]);
});

const carriesCanary = (requests: Array<{ headers: Record<string, unknown> }>) =>
  requests.some((r) => JSON.stringify(r.headers).includes(CANARY));

async function adminOf(workspaceId: string): Promise<AdminSession> {
  const op = await makeOperator(h.app, [{ workspaceId, role: 'admin' }]);
  return (await signIn(h.app.http, op.email, op.password)).session!;
}

it('the old name WEBHOOKS_ALLOW_PRIVATE_NETWORKS still sets the switch; the new name wins; off by default', () => {
  assert.equal(loadConfig({}).EGRESS_ALLOW_PRIVATE_NETWORKS, false);
  assert.equal(loadConfig({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true' }).EGRESS_ALLOW_PRIVATE_NETWORKS, true);
  const both = loadConfig({ WEBHOOKS_ALLOW_PRIVATE_NETWORKS: 'true', EGRESS_ALLOW_PRIVATE_NETWORKS: 'false' });
  assert.equal(both.EGRESS_ALLOW_PRIVATE_NETWORKS, false);
  assert.equal(h.app.config.EGRESS_ALLOW_PRIVATE_NETWORKS, true);
});

describe('a WhatsApp turn', () => {
  async function converse(slug: string, apiKey: string): Promise<void> {
    const raw = uniquePhone();
    await h.submit(apiKey, { phone: raw });
    await h.settle();
    await h.leadSays('twilio', slug, `+${raw.replace(/\D/g, '')}`, 'Hello! Yes, I own the house.');
    await h.settle({ ignoreBackoff: true });
  }

  it("the workspace's URL without a key of its own (stored before the rule): the model is not called", async () => {
    const w = await h.workspace('twilio', { llm: { baseUrl: `${trap.url}/v1` } });
    await converse(w.slug, w.apiKey);
    assert.equal(trap.requests.length, 0, "the workspace's URL got no request");
  });

  it("with its own key, its own server gets that key and never the installation's", async () => {
    const w = await h.workspace('twilio', { llm: { baseUrl: own.baseUrl, apiKey: OWN_KEY } });
    await converse(w.slug, w.apiKey);
    assert.ok(own.requests.length > 0, "the workspace's model was used");
    assert.ok(own.requests.every((r) => r.headers.authorization === `Bearer ${OWN_KEY}`));
    assert.ok(!carriesCanary(own.requests));
  });
});

describe("Test connection of a model server on the installation's network", () => {
  it("is reached with the workspace's own key; the answer shows the status, never the body", async () => {
    const w = await h.workspace('twilio');
    const session = await adminOf(w.workspaceId);
    const base = `/api/admin/workspaces/${w.slug}/providers/llm`;
    const baseUrl = `${internal.url}/internal/admin?`;
    const saved = await admin(h.app.http, session, 'PUT', base, { baseUrl, apiKey: OWN_KEY });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const mixed = await admin(h.app.http, session, 'PUT', base, { baseUrl, apiKey: null });
    assert.equal(mixed.status, 400, 'the switch does not lift the key rule');
    const r = await admin(h.app.http, session, 'POST', `${base}/test`);
    assert.equal(r.body.passed, false);
    assert.match(r.body.checks[0].note, /^The model server answered HTTP 500, not a model/);
    assert.ok(!JSON.stringify(r.body).includes(INTERNAL_SECRET), JSON.stringify(r.body));
    assert.ok(internal.requests.length > 0);
    assert.ok(internal.requests.every((q) => q.headers.authorization === `Bearer ${OWN_KEY}`));
    assert.ok(!carriesCanary(internal.requests));
  });

  it("a turn's failed model request logs the status, not what the server answered", async () => {
    const providers = defaultConversationProviders(h.app.config, {
      scheduling: h.app.scheduling,
      chat: { sleep: async () => {}, maxRetries: 0 },
    });
    const chat = providers.chat({ llm: { baseUrl: `${internal.url}/v1`, apiKey: OWN_KEY } });
    const r = await chat.model.complete({ model: chat.name, messages: [{ role: 'user', content: 'hello' }] });
    assert.equal(r.ok, false);
    assert.equal(r.ok ? '' : r.message, 'The chat model server answered HTTP 500.');
  });

  it('metadata and tunnelled addresses stay refused', async () => {
    const w = await h.workspace('twilio');
    const session = await adminOf(w.workspaceId);
    const urls = [
      'http://169.254.169.254/x?',
      'http://[64:ff9b::7f00:1]/v1',
      'http://[::7f00:1]/v1',
      'http://[2002:7f00::]/v1',
    ];
    for (const baseUrl of urls) {
      const url = `/api/admin/workspaces/${w.slug}/providers/llm`;
      const r = await admin(h.app.http, session, 'PUT', url, { baseUrl, apiKey: 'k' });
      assert.equal(r.status, 400, baseUrl);
      assert.match(r.body.issues[0].message, /never allowed/);
    }
  });
});

describe('webhooks', () => {
  it('a receiver on 127.0.0.1 gets sandbox events over http; the log shows the status, never the answer', async () => {
    const w = await h.workspace('twilio');
    const session = await adminOf(w.workspaceId);
    const hooks = `/api/admin/workspaces/${w.slug}/webhooks`;
    for (const url of ['https://169.254.169.254/h', 'https://[64:ff9b::a9fe:a9fe]/h', 'https://[2002:a9fe:a9fe::]/h']) {
      assert.equal((await admin(h.app.http, session, 'POST', hooks, { url })).status, 400, url);
    }
    const added = await admin(h.app.http, session, 'POST', hooks, { url: receiver.url, eventTypes: ['lead.created'] });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    receiver.answers.push(500);
    // A sandbox lead of this workspace (the harness keeps only the live key).
    const key = await h.app.workspaces.createKey(w.slug, { sandbox: true });
    const lead = await postLead(h.app.http, key!.key, validLead({ phone: uniquePhone() }));
    assert.equal(lead.status, 201, JSON.stringify(lead.body));
    await h.app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
    const service = new WebhookDeliveryService({
      pool: h.app.db.pool,
      boss: h.app.boss,
      log: h.app.log,
      clock: () => new Date(),
      secrets: new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)),
      timeoutMs: 5000,
      allowPrivateNetworks: h.app.config.EGRESS_ALLOW_PRIVATE_NETWORKS,
      retryScheduleSeconds: [],
      jitter: () => 1,
    });
    await drainWebhooks({ relay: h.app.relay, boss: h.app.boss, service });
    assert.equal(receiver.received.length, 1);
    const log = await admin(h.app.http, session, 'GET', `${hooks}/${added.body.endpoint.id}/deliveries`);
    const attempt = log.body.deliveries[0].attempts[0];
    assert.equal(attempt.statusCode, 500);
    assert.equal(attempt.response, 'answered HTTP 500');
    assert.ok(!JSON.stringify(log.body).includes('receiver says'));
    const stored = await h.app.db.pool.query(`SELECT response_excerpt FROM webhook_attempts WHERE status_code = 500`);
    assert.deepEqual(
      stored.rows.map((r) => r.response_excerpt),
      ['answered HTTP 500'],
      'nor is the answer stored',
    );
    // An attempt an earlier version logged with the first KiB of the answer: the answer is not shown.
    await h.app.db.pool.query(
      `UPDATE webhook_attempts SET response_excerpt = 'receiver says: ${INTERNAL_SECRET}' WHERE status_code = 500`,
    );
    const again = await admin(h.app.http, session, 'GET', `${hooks}/${added.body.endpoint.id}/deliveries`);
    assert.equal(again.body.deliveries[0].attempts[0].response, 'answered HTTP 500');
    assert.ok(!JSON.stringify(again.body).includes(INTERNAL_SECRET));
  });
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import type { JobWithMetadata } from 'pg-boss';
import { ModelGate } from '../../src/agent/model-gate.ts';
import { OpenAIChatClient } from '../../src/agent/openai/openai-chat-client.ts';
import { modelGate } from '../../src/composition.ts';
import { AGENT_TURN_QUEUE } from '../../src/jobs/queues.ts';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import {
  CHAT_FAILURES,
  startChatSimulator,
  type ChatSimulator,
} from '../../src/simulators/chat-model/chat-simulator.ts';
import { HOSTILE_MODELS } from '../../src/simulators/chat-model/hostile-models.ts';
import { scriptedReply } from '../../src/simulators/chat-model/scripted-policy.ts';
import { WebhookEndpointService } from '../../src/webhooks/webhook-endpoint-service.ts';
import { DEFAULT_HOLDING_MESSAGE } from '../../src/whatsapp/hand-over.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/test-app.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// A failing model never drops a lead in silence: every turn that ends without an answer hands
// the lead to a person (needs_human, the reason on its timeline, lead.status_changed) with the
// workspace's holding message while the 24-hour window is open. Malformed answers are retried like
// 5xx; a server's Retry-After is honoured by rescheduling the job, never by waiting in a worker;
// one workspace's failing or hanging model cannot take the turn workers of the others.
// Through the real OpenAI-compatible client, turn engine and worker. Sequential: the simulators'
// injected failures apply to whichever request comes next.

let h: WhatsappHarness;
let tw: { slug: string; apiKey: string; workspaceId: string };
let worker: TurnWorker;

/** A turn engine and worker as `serve` builds them (the per-workspace gate included), on the harness. */
function workerWith(o: { gate?: ModelGate | null; concurrency?: number } = {}): TurnWorker {
  const providers = defaultConversationProviders(h.app.config, {
    chat: { sleep: async () => {} },
    scheduling: new CalcomClient({ baseUrl: h.calcom.url, sleep: async () => {} }),
  });
  // As `serve` builds it: here 1 call per workspace at once (the env below), 3 failures open the breaker.
  const gate = o.gate !== undefined ? o.gate : modelGate(h.app.config);
  const engine = new TurnEngine({
    integrationLog: h.app.integrationLog,
    pool: h.app.db.pool,
    log: h.app.log,
    clock: h.clock.read,
    workspaces: h.app.workspaces,
    providers,
    maxModelWaitMs: h.app.config.LLM_RETRY_AFTER_MAX_SECONDS * 1000,
    ...(gate ? { modelGate: gate } : {}),
  });
  return new TurnWorker({ boss: h.app.boss, engine, log: h.app.log, concurrency: o.concurrency ?? 2 });
}

/** Relays and runs turn jobs (their back-off and startAfter ignored) until nothing is left. */
async function settle(w = worker): Promise<void> {
  for (let round = 0; round < 100; round++) {
    await h.app.relay.drain();
    const ran = await w.drainOnce({ ignoreBackoff: true });
    await Promise.all([h.twilio.idle(), h.meta.idle()]);
    const { rows } = await h.app.db.pool.query('SELECT count(*)::int AS n FROM outbox WHERE queue = $1', [
      AGENT_TURN_QUEUE,
    ]);
    if (ran === 0 && rows[0].n === 0) return;
  }
  throw new Error('did not settle within 100 rounds');
}

before(async () => {
  h = await startWhatsappHarness({
    env: { EGRESS_ALLOW_PRIVATE_NETWORKS: 'true', LLM_TIMEOUT_MS: '3000', LLM_MAX_CONCURRENCY_PER_WORKSPACE: '1' },
  });
  tw = await h.workspace('twilio');
  // Every status change of this workspace's leads becomes a lead.status_changed webhook event.
  const secrets = new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));
  const endpoints = new WebhookEndpointService(h.app.db.pool, secrets, h.clock.read, { allowPrivateNetworks: true });
  await endpoints.add(tw.slug, 'http://127.0.0.1:9/hooks', ['lead.status_changed']);
});
after(() => h.close());
beforeEach(() => {
  h.chat.clearFailures();
  h.chat.setPolicy(scriptedReply);
  // A gate of its own per test: one test's open breaker must not refuse the next test's calls.
  worker = workerWith();
});

/** A lead of `w` that got its template; the model's requests so far. */
async function leadWithTemplate(w = tw): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const { leadId } = await h.submit(w.apiKey, { phone: raw });
  await settle();
  return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
}

const twilioTo = (phone: string) => h.twilio.messages.filter((m) => m.to === phone);
const lastSent = (phone: string) => twilioTo(phone).at(-1)?.text;
const lead = async (id: string) => (await h.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [id])).rows[0];

async function escalation(leadId: string): Promise<Record<string, any> | undefined> {
  const { rows } = await h.app.db.pool.query(
    `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'conversation.escalated' ORDER BY id DESC LIMIT 1`,
    [leadId],
  );
  return rows[0]?.data;
}

async function statusWebhooks(leadId: string): Promise<string[]> {
  const { rows } = await h.app.db.pool.query(
    `SELECT detail->>'to' AS to FROM webhook_events WHERE lead_id = $1 AND type = 'lead.status_changed' ORDER BY id`,
    [leadId],
  );
  return rows.map((r) => r.to);
}

/** The lead is with a person, says why, was told so, and the webhook fired; no job dead-lettered or failed for good. */
async function assertHandedOver(leadId: string, phone: string, outcome: string): Promise<void> {
  const holding = DEFAULT_HOLDING_MESSAGE;
  assert.equal((await lead(leadId)).status, 'needs_human');
  const e = await escalation(leadId);
  assert.equal(e?.outcome, outcome, JSON.stringify(e));
  assert.ok(typeof e?.reason === 'string' && e.reason.length > 0);
  assert.equal(lastSent(phone), holding, 'the lead got the holding message');
  assert.ok((await statusWebhooks(leadId)).includes('needs_human'), 'lead.status_changed fired');
  const { rows } = await h.app.db.pool.query(
    `SELECT state FROM pgboss.job
      WHERE name = 'agent-turn' AND data->>'leadId' = $1 AND state IN ('failed', 'created', 'retry')`,
    [leadId],
  );
  assert.deepEqual(rows, [], 'no job failed for good or left waiting');
  const { rows: msg } = await h.app.db.pool.query(
    `SELECT status FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound' ORDER BY id DESC LIMIT 1`,
    [leadId],
  );
  assert.notEqual(msg[0]?.status, 'pending', 'the holding message was recorded as sent');
}

describe('malformed answers are retried like 5xx, then the lead goes to a person', () => {
  for (const name of ['noToolCallId', 'emptyChoices', 'errorWith200'] as const) {
    it(name, async () => {
      const { leadId, phone } = await leadWithTemplate();
      const before = h.chat.requests.length;
      h.chat.setPolicy(HOSTILE_MODELS[name]);
      await h.leadSays('twilio', tw.slug, phone, 'Hello, what would you like to know?');
      await settle();
      assert.ok(h.chat.requests.length - before > 1, 'retried');
      await assertHandedOver(leadId, phone, 'model_failed');
    });
  }
});

describe('rate limits and persistent 5xx', () => {
  it(
    '429, Retry-After: 120: one request, the job rescheduled 2 ' + 'minutes on, a warn line; then handed over',
    async () => {
      const { leadId, phone } = await leadWithTemplate();
      const before = h.chat.requests.length;
      h.chat.failNext(CHAT_FAILURES.rateLimited({ seconds: '120' }), 50);
      await h.leadSays('twilio', tw.slug, phone, 'Hello?');
      await h.app.relay.drain();
      const [job] = await h.app.boss.fetch(AGENT_TURN_QUEUE, { batchSize: 1, includeMetadata: true });
      assert.ok(job);
      const result = await worker.runJob(job);
      assert.equal(result.status, 'completed');
      await h.app.boss.complete(AGENT_TURN_QUEUE, { id: job.id, retryCount: job.retryCount }, result.output as object);
      assert.equal(h.chat.requests.length - before, 1, 'no quick retries within the job');
      const { rows } = await h.app.db.pool.query(
        `SELECT retry_limit, start_after > now() + interval '100 seconds' AS later FROM pgboss.job
        WHERE data->>'leadId' = $1 AND name = $2 AND state = 'created'`,
        [leadId, AGENT_TURN_QUEUE],
      );
      assert.equal(rows.length, 1, 'one successor');
      assert.equal(rows[0].later, true, 'not before the asked wait');
      assert.equal(rows[0].retry_limit, (job as JobWithMetadata).retryLimit - 1, 'the attempt was spent');
      assert.ok(
        h.app.logs.some((l) => l.includes('"level":40') && l.includes('agent turn rescheduled')),
        'a warn line',
      );
      // Bounded: the breaker the wait opened refuses the next attempts; the last one hands over.
      await settle();
      assert.equal(h.chat.requests.length - before, 1, 'the server was not asked again before its time');
      await assertHandedOver(leadId, phone, 'model_failed');
    },
  );

  it('429, Retry-After: 3600 (over LLM_RETRY_AFTER_MAX_SECONDS): one request, the lead handed over now', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const before = h.chat.requests.length;
    h.chat.failNext(CHAT_FAILURES.rateLimited({ seconds: '3600' }), 50);
    await h.leadSays('twilio', tw.slug, phone, 'Hello?');
    await settle();
    assert.equal(h.chat.requests.length - before, 1);
    await assertHandedOver(leadId, phone, 'model_wait_too_long');
    assert.match((await escalation(leadId))?.reason, /3600 s/);
  });

  it('persistent 5xx: the breaker stops the requests after 3 failed calls; the lead goes to a person', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const before = h.chat.requests.length;
    h.chat.failNext(CHAT_FAILURES.serverError(), 100);
    await h.leadSays('twilio', tw.slug, phone, 'Hello?');
    await settle();
    // 3 calls of 3 requests each (the client's own two retries); without the breaker, 6 × 3.
    assert.ok(h.chat.requests.length - before <= 9, String(h.chat.requests.length - before));
    await assertHandedOver(leadId, phone, 'model_failed');
    assert.ok(h.app.logs.some((l) => l.includes('"level":40') && l.includes('whatsapp turn provider failure')));
  });
});

describe('other turns that end without an answer', () => {
  it("the tool round cap: handed over with the workspace's own holding message", async () => {
    const agent = { ...SOLAR_AGENT, holdingMessage: 'Danke! Gleich meldet sich jemand.' };
    const own = await h.workspace('twilio', { agent });
    const { leadId, phone } = await leadWithTemplate(own);
    h.chat.setPolicy(HOSTILE_MODELS.endlessToolLoop);
    await h.leadSays('twilio', own.slug, phone, 'When can you come?');
    await settle();
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.equal((await escalation(leadId))?.outcome, 'too_many_tool_rounds');
    assert.equal(lastSent(phone), 'Danke! Gleich meldet sich jemand.');
  });

  it('context too long: handed over at once, never dead-lettered', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const before = h.chat.requests.length;
    const message = "This model's maximum context length is 128000 tokens.";
    const error = { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' };
    h.chat.failNext({ kind: 'http', status: 400, body: { error } }, 5);
    await h.leadSays('twilio', tw.slug, phone, 'Hello?');
    await settle();
    assert.equal(h.chat.requests.length - before, 1);
    await assertHandedOver(leadId, phone, 'context_overflow');
  });

  it('the kill switch: the lead who writes goes to a person with the holding message; no model call', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const before = h.chat.requests.length;
    await h.app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [tw.workspaceId]);
    try {
      await h.leadSays('twilio', tw.slug, phone, 'Hello?');
      await settle();
    } finally {
      await h.app.db.pool.query('UPDATE workspaces SET agent_enabled = true WHERE id = $1', [tw.workspaceId]);
    }
    assert.equal(h.chat.requests.length - before, 0);
    await assertHandedOver(leadId, phone, 'agent_off');
  });

  it('the window closed: handed over without a message', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await h.leadSays('twilio', tw.slug, phone, 'Hello?');
    await h.app.db.pool.query(
      `UPDATE leads SET last_inbound_at = last_inbound_at - interval '25 hours' WHERE id = $1`,
      [leadId],
    );
    const sent = twilioTo(phone).length;
    await settle();
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.equal(twilioTo(phone).length, sent);
  });
});

describe('the circuit breaker of a workspace, through the real client', () => {
  it('opens after 3 failed calls, refuses without a request, lets one trial through after the cool-down', async () => {
    let now = 1_000_000;
    const gate = new ModelGate({ maxConcurrent: 2, failureThreshold: 3, cooldownMs: 30_000, now: () => now });
    const client = new OpenAIChatClient({ baseUrl: h.chat.baseUrl, apiKey: h.chat.apiKey, maxRetries: 0 });
    const { model } = gate.wrap('w1', { model: client });
    const other = gate.wrap('w2', { model: client }).model;
    const request = { model: 'gpt-4o-mini', messages: [{ role: 'user' as const, content: 'Hello' }] };
    h.chat.failNext(CHAT_FAILURES.serverError(), 3);
    for (let i = 0; i < 3; i++) assert.equal((await model.complete(request)).ok, false);
    const before = h.chat.requests.length;
    const refused = await model.complete(request);
    assert.deepEqual([refused.ok, (refused as { retryAfterMs?: number }).retryAfterMs], [false, 30_000]);
    assert.equal(h.chat.requests.length, before, 'no request while open');
    assert.equal((await other.complete(request)).ok, true, 'another workspace is not affected');
    now += 30_000;
    assert.equal((await model.complete(request)).ok, true, 'the trial call');
    assert.equal((await model.complete(request)).ok, true, 'closed again');
  });
});

describe('the holding message on the Agent page', () => {
  it('is shown (absent: the default), saved, validated like the other settings, and used', async () => {
    const w = await h.workspace('twilio');
    const op = await makeOperator(h.app, [{ workspaceId: w.workspaceId, role: 'admin' }]);
    const session = (await signIn(h.app.http, op.email, op.password)).session!;
    const url = `/api/admin/workspaces/${w.slug}/agent`;
    const got = await admin(h.app.http, session, 'GET', url);
    assert.equal(got.body.agent.holdingMessage, undefined, 'the default');
    const { persona, criteria, timeZone } = got.body.agent;
    const draft = { version: got.body.version, persona, criteria, timeZone };
    const long = await admin(h.app.http, session, 'PUT', url, { ...draft, holdingMessage: 'x'.repeat(501) });
    assert.equal(long.status, 400, JSON.stringify(long.body));
    const saved = await admin(h.app.http, session, 'PUT', url, {
      ...draft,
      holdingMessage: '  One moment — a colleague is on it.  ',
    });
    assert.equal(saved.status, 200, JSON.stringify(saved.body));
    const shown = (await admin(h.app.http, session, 'GET', url)).body.agent.holdingMessage;
    assert.equal(shown, 'One moment — a colleague is on it.');
    const { leadId, phone } = await leadWithTemplate(w);
    h.chat.failNext(CHAT_FAILURES.insufficientQuota());
    await h.leadSays('twilio', w.slug, phone, 'Hello?');
    await settle();
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.equal(lastSent(phone), 'One moment — a colleague is on it.');
  });
});

describe("one workspace's hanging model", () => {
  let hanging: ChatSimulator;
  before(async () => {
    hanging = await startChatSimulator({});
  });
  after(() => hanging.close().catch(() => {}));

  it("does not hold the workers: another workspace's lead is answered while its turns are stuck", async () => {
    const llm = { baseUrl: hanging.baseUrl, apiKey: hanging.apiKey, model: 'gpt-4o-mini' };
    const a = await h.workspace('twilio', { llm });
    const [a1, a2, b] = [await leadWithTemplate(a), await leadWithTemplate(a), await leadWithTemplate()];
    hanging.failNext({ kind: 'hang' }, 10);
    await h.leadSays('twilio', a.slug, a1.phone, 'Hello from A1');
    await h.leadSays('twilio', a.slug, a2.phone, 'Hello from A2');
    await h.leadSays('twilio', tw.slug, b.phone, 'Hello from B');
    await h.app.relay.drain();
    const jobs = await h.app.boss.fetch(AGENT_TURN_QUEUE, { batchSize: 10, includeMetadata: true });
    const jobOf = (leadId: string) => jobs.find((j) => (j.data as { leadId: string }).leadId === leadId)!;
    // Two workers; A's two turns start first and would take both.
    const w = workerWith({ concurrency: 2 });
    const order: string[] = [];
    const run = (name: string, leadId: string) => w.runJob(jobOf(leadId)).then((r) => (order.push(name), r));
    const runs = [run('a1', a1.leadId), run('a2', a2.leadId), run('b', b.leadId)];
    await runs[2];
    // No timing: when B's turn is done, one of A's is still waiting for A's model.
    assert.ok(!(order.includes('a1') && order.includes('a2')), `finished before B: ${order.join(', ')}`);
    assert.equal(twilioTo(b.phone).length, 2, 'B was answered');
    await hanging.close(); // ends the hang
    await Promise.all(runs);
  });
});

import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { CHAT_FAILURES } from '../../src/simulators/chat-model/chat-simulator.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { computeTwilioSignature } from '../../src/whatsapp/twilio/twilio-signature.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// What a WhatsApp turn asks the model, and its checkpoints: a failed send never bills the model
// twice, and delivery statuses that arrive before the send is recorded are kept. The 24-hour
// window, failures the agent cannot fix and the switches that stop it: whatsapp-turn-stops.test.ts.
// Sequential: the simulators' injected failures apply to whichever request comes next.

let h: WhatsappHarness;
let tw: { slug: string; apiKey: string; workspaceId: string };
let mt: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  tw = await h.workspace('twilio');
  mt = await h.workspace('meta');
});
after(() => h.close());
beforeEach(() => h.chat.clearFailures());

async function leadWithTemplate(w = tw): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const { leadId } = await h.submit(w.apiKey, { phone: raw });
  await h.settle();
  return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
}

const twilioTo = (phone: string) => h.twilio.messages.filter((m) => m.to === phone);
const sendAttempts = (phone: string) =>
  h.twilio.requests.filter((r) => r.method === 'POST' && r.params.To === `whatsapp:${phone}`).length;
const lead = async (id: string) => (await h.app.db.pool.query('SELECT * FROM leads WHERE id = $1', [id])).rows[0];
const turns = async (id: string) =>
  (
    await h.app.db.pool.query(
      'SELECT kind, state, outcome, model_calls FROM agent_turns WHERE lead_id = $1 ORDER BY id',
      [id],
    )
  ).rows;
const jobsOf = async (id: string) =>
  (
    await h.app.db.pool.query(
      `SELECT name, state, retry_count FROM pgboss.job WHERE data->>'leadId' = $1 ORDER BY created_on`,
      [id],
    )
  ).rows;

describe("the model's request", () => {
  it('the agent core prompt with what else we know, the conversation so far and the seven tools', async () => {
    const raw = uniquePhone();
    const phone = `+${raw.replace(/\D/g, '')}`;
    await h.submit(tw.apiKey, {
      phone: raw,
      name: 'Grace Hopper',
      metadata: { source: 'spring campaign', roofSize: 42 },
    });
    await h.settle();
    const before = h.chat.requests.length;
    await h.leadSays('twilio', tw.slug, phone, 'Hello! Yes, I own it.');
    await h.settle();
    const body = h.chat.requests[before]!.body as {
      model: string;
      messages: Array<{ role: string; content: string | null }>;
      tools: Array<{ function: { name: string } }>;
    };
    assert.equal(body.model, h.app.config.LLM_MODEL);
    const system = body.messages[0]!;
    assert.equal(system.role, 'system');
    assert.match(system.content!, /\nWhat else we know about this lead:\n[^#]*spring campaign[^#]*<\/lead_data>/);
    assert.match(system.content!, /\nName: "Grace Hopper"\n/);
    assert.ok(!system.content!.includes(phone.slice(1)), 'the phone number is not in the prompt');
    assert.deepEqual(
      body.messages.slice(1).map((m) => m.role),
      ['assistant', 'user'],
    );
    assert.match(body.messages[1]!.content!, /template/);
    assert.equal(body.messages[2]!.content, 'Hello! Yes, I own it.');
    assert.deepEqual(body.tools.map((t) => t.function.name).sort(), [
      'bookConsult',
      'endConversation',
      'escalateToHuman',
      'listSlots',
      'markUnqualified',
      'optOut',
      'updateLeadProfile',
    ]);
  });
});

describe('checkpoints', () => {
  it('a model failing 3 times then answering: sent once, on the 4th model request', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const before = h.chat.requests.length;
    // The client retries twice itself (3 requests), the job then retries once more.
    h.chat.failNext(CHAT_FAILURES.serverError(), 3);
    await h.leadSays('twilio', tw.slug, phone, 'Hello, what would you like to know?');
    await h.settle();
    assert.equal(twilioTo(phone).length, 1, 'nothing sent while the model fails');
    assert.equal(h.chat.requests.length - before, 3);
    await h.settle({ ignoreBackoff: true });
    assert.equal(twilioTo(phone).length, 2);
    // The 4th request answered (a tool round), the 5th wrote the message; only those are counted.
    const [, reply] = await turns(leadId);
    assert.deepEqual(reply, { kind: 'reply', state: 'sent', outcome: null, model_calls: 2 });
    assert.equal(h.chat.requests.length - before, 5);
    assert.deepEqual((await jobsOf(leadId)).map((j) => [j.state, j.retry_count]).at(-1), ['completed', 1]);
  });

  it('a failed send is retried without calling the model again', async () => {
    const { leadId, phone } = await leadWithTemplate();
    h.twilio.failNextSends(1, { status: 503, code: 20503 });
    const before = h.chat.requests.length;
    await h.leadSays('twilio', tw.slug, phone, PERSONA_PHRASES.answer);
    await h.settle();
    const modelRequests = h.chat.requests.length - before;
    assert.ok(modelRequests >= 2, 'a tool round and the answer');
    assert.equal(twilioTo(phone).length, 1);
    assert.equal((await turns(leadId))[1].state, 'ready', 'the answer is stored, waiting to be sent');
    await h.settle({ ignoreBackoff: true });
    assert.equal(twilioTo(phone).length, 2);
    assert.equal(sendAttempts(phone), 3, 'template, failed attempt, retried attempt');
    assert.equal(h.chat.requests.length - before, modelRequests, 'no model call on the retry');
    assert.equal((await turns(leadId))[1].state, 'sent');
  });

  it('a delivery callback carrying our key settles a send whose answer was lost: no second send', async () => {
    const { leadId, phone } = await leadWithTemplate();
    // Twilio accepted the message but the process died before recording it: the turn is ready,
    // its message pending. The status callback arrives with our idempotency key.
    await h.leadSays('twilio', tw.slug, phone, PERSONA_PHRASES.answer);
    h.twilio.failNextSends(1, { hangUp: true });
    await h.settle();
    const { rows } = await h.app.db.pool.query(
      `SELECT idempotency_key FROM whatsapp_messages
        WHERE lead_id = $1 AND direction = 'outbound' AND status = 'pending'`,
      [leadId],
    );
    assert.equal(rows.length, 1);
    const path = `/api/whatsapp/twilio/${tw.slug}/status?outboundKey=${rows[0].idempotency_key}`;
    const params = { MessageSid: `SM${'7'.repeat(32)}`, MessageStatus: 'delivered', AccountSid: h.twilio.accountSid };
    const url = `${h.baseUrl}${path}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': computeTwilioSignature(h.twilio.authToken, url, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    assert.equal(res.status, 204);
    await h.settle({ ignoreBackoff: true });
    assert.equal(twilioTo(phone).length, 1, 'only the template: the hung-up send is not repeated');
    assert.equal((await turns(leadId))[1].state, 'sent');
  });
});

describe('statuses that arrive before the send is recorded', () => {
  // The provider calls back before our commit: the send's result is handed back only once the
  // simulator has delivered its status webhooks, so they find no recorded message yet.
  function engineWithSlowRecording() {
    const base = defaultConversationProviders(h.app.config, { scheduling: h.app.scheduling });
    return new TurnEngine({
      integrationLog: h.app.integrationLog,
      pool: h.app.db.pool,
      log: h.app.log,
      clock: h.clock.read,
      workspaces: h.app.workspaces,
      providers: {
        ...base,
        messaging: (w, settings) => {
          const real = base.messaging(w, settings)!;
          return {
            name: real.name,
            send: async (r) => {
              const res = await real.send(r);
              await h.meta.idle();
              return res;
            },
          };
        },
      },
    });
  }

  it('are kept and applied when the send is recorded', async () => {
    const raw = uniquePhone();
    const { leadId } = await h.submit(mt.apiKey, { phone: raw });
    await h.app.relay.drain();
    await engineWithSlowRecording().run(leadId);
    const { rows } = await h.app.db.pool.query(`SELECT status FROM whatsapp_messages WHERE lead_id = $1`, [leadId]);
    assert.deepEqual(rows, [{ status: 'read' }]);
    const early = await h.app.db.pool.query(`SELECT count(*)::int AS n FROM whatsapp_early_statuses`);
    assert.equal(early.rows[0].n, 0);
    assert.equal((await lead(leadId)).status, 'in_conversation');
    await h.settle();
  });

  it('an early "failed" hands the lead to a person', async () => {
    const raw = uniquePhone();
    h.meta.failRecipient(raw, {
      code: 131026,
      title: 'Message undeliverable',
      details: 'Unable to deliver the message.',
    });
    try {
      const { leadId } = await h.submit(mt.apiKey, { phone: raw });
      await h.app.relay.drain();
      await engineWithSlowRecording().run(leadId);
      assert.equal((await lead(leadId)).status, 'needs_human');
      const { rows } = await h.app.db.pool.query(
        `SELECT status, error_code FROM whatsapp_messages WHERE lead_id = $1`,
        [leadId],
      );
      assert.deepEqual(rows, [{ status: 'failed', error_code: '131026' }]);
    } finally {
      h.meta.failRecipient(raw, undefined);
    }
    await h.settle();
  });
});

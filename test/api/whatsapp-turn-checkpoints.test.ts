import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHAT_FAILURES } from '../../src/simulators/chat-model/chat-simulator.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { computeTwilioSignature } from '../../src/whatsapp/twilio/twilio-signature.ts';
import { uniquePhone } from '../helpers/http.ts';
import { setUpWhatsappTurns } from '../helpers/whatsapp-turn-setup.ts';

// What a WhatsApp turn asks the model, and its checkpoints: a failed send never bills the model
// twice, and delivery statuses that arrive before the send is recorded are kept. The 24-hour
// window, failures the agent cannot fix and the switches that stop it: whatsapp-turn-stops.test.ts.
// Sequential: the simulators' injected failures apply to whichever request comes next.

const { setup: env, leadWithTemplate, twilioTo, lead, turns, jobsOf } = setUpWhatsappTurns();

const sendAttempts = (phone: string) =>
  env.h.twilio.requests.filter((r) => r.method === 'POST' && r.params.To === `whatsapp:${phone}`).length;

describe("the model's request", () => {
  it('the agent core prompt with what else we know, the conversation so far and the eight tools', async () => {
    const raw = uniquePhone();
    const phone = `+${raw.replace(/\D/g, '')}`;
    await env.h.submit(env.tw.apiKey, {
      phone: raw,
      name: 'Grace Hopper',
      metadata: { source: 'spring campaign', roofSize: 42 },
    });
    await env.h.settle();
    const before = env.h.chat.requests.length;
    await env.h.leadSays('twilio', env.tw.slug, phone, 'Hello! Yes, I own it.');
    await env.h.settle();
    const body = env.h.chat.requests[before]!.body as {
      model: string;
      messages: Array<{ role: string; content: string | null }>;
      tools: Array<{ function: { name: string } }>;
    };
    assert.equal(body.model, env.h.app.config.LLM_MODEL);
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
      'scheduleCallback',
      'updateLeadProfile',
    ]);
  });
});

describe('checkpoints', () => {
  it('a model failing 3 times then answering: sent once, on the 4th model request', async () => {
    const { leadId, phone } = await leadWithTemplate();
    const before = env.h.chat.requests.length;
    // The client retries twice itself (3 requests), the job then retries once more.
    env.h.chat.failNext(CHAT_FAILURES.serverError(), 3);
    await env.h.leadSays('twilio', env.tw.slug, phone, 'Hello, what would you like to know?');
    await env.h.settle();
    assert.equal(twilioTo(phone).length, 1, 'nothing sent while the model fails');
    assert.equal(env.h.chat.requests.length - before, 3);
    await env.h.settle({ ignoreBackoff: true });
    assert.equal(twilioTo(phone).length, 2);
    // The 4th request answered (a tool round), the 5th wrote the message; only those are counted.
    const [, reply] = await turns(leadId);
    assert.deepEqual(reply, { kind: 'reply', state: 'sent', outcome: null, model_calls: 2 });
    assert.equal(env.h.chat.requests.length - before, 5);
    assert.deepEqual((await jobsOf(leadId)).map((j) => [j.state, j.retry_count]).at(-1), ['completed', 1]);
  });

  it('a failed send is retried without calling the model again', async () => {
    const { leadId, phone } = await leadWithTemplate();
    env.h.twilio.failNextSends(1, { status: 503, code: 20503 });
    const before = env.h.chat.requests.length;
    await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
    await env.h.settle();
    const modelRequests = env.h.chat.requests.length - before;
    assert.ok(modelRequests >= 2, 'a tool round and the answer');
    assert.equal(twilioTo(phone).length, 1);
    assert.equal((await turns(leadId))[1].state, 'ready', 'the answer is stored, waiting to be sent');
    await env.h.settle({ ignoreBackoff: true });
    assert.equal(twilioTo(phone).length, 2);
    assert.equal(sendAttempts(phone), 3, 'template, failed attempt, retried attempt');
    assert.equal(env.h.chat.requests.length - before, modelRequests, 'no model call on the retry');
    assert.equal((await turns(leadId))[1].state, 'sent');
  });

  it('a delivery callback carrying our key settles a send whose answer was lost: no second send', async () => {
    const { leadId, phone } = await leadWithTemplate();
    // Twilio accepted the message but the process died before recording it: the turn is ready,
    // its message pending. The status callback arrives with our idempotency key.
    await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
    env.h.twilio.failNextSends(1, { hangUp: true });
    await env.h.settle();
    const { rows } = await env.h.app.db.pool.query(
      `SELECT idempotency_key FROM whatsapp_messages
        WHERE lead_id = $1 AND direction = 'outbound' AND status = 'pending'`,
      [leadId],
    );
    assert.equal(rows.length, 1);
    const path = `/api/whatsapp/twilio/${env.tw.slug}/status?outboundKey=${rows[0].idempotency_key}`;
    const params = {
      MessageSid: `SM${'7'.repeat(32)}`,
      MessageStatus: 'delivered',
      AccountSid: env.h.twilio.accountSid,
    };
    const url = `${env.h.baseUrl}${path}`;
    const res = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': computeTwilioSignature(env.h.twilio.authToken, url, params),
      },
      body: new URLSearchParams(params).toString(),
    });
    assert.equal(res.status, 204);
    await env.h.settle({ ignoreBackoff: true });
    assert.equal(twilioTo(phone).length, 1, 'only the template: the hung-up send is not repeated');
    assert.equal((await turns(leadId))[1].state, 'sent');
  });
});

describe('statuses that arrive before the send is recorded', () => {
  // The provider calls back before our commit: the send's result is handed back only once the
  // simulator has delivered its status webhooks, so they find no recorded message yet.
  function engineWithSlowRecording() {
    const base = defaultConversationProviders(env.h.app.config, { scheduling: env.h.app.scheduling });
    return new TurnEngine({
      integrationLog: env.h.app.integrationLog,
      pool: env.h.app.db.pool,
      log: env.h.app.log,
      clock: env.h.clock.read,
      workspaces: env.h.app.workspaces,
      providers: {
        ...base,
        messaging: (w, settings) => {
          const real = base.messaging(w, settings)!;
          return {
            name: real.name,
            send: async (r) => {
              const res = await real.send(r);
              await env.h.meta.idle();
              return res;
            },
          };
        },
      },
    });
  }

  it('are kept and applied when the send is recorded', async () => {
    const raw = uniquePhone();
    const { leadId } = await env.h.submit(env.mt.apiKey, { phone: raw });
    await env.h.app.relay.drain();
    await engineWithSlowRecording().run(leadId);
    const { rows } = await env.h.app.db.pool.query(`SELECT status FROM whatsapp_messages WHERE lead_id = $1`, [leadId]);
    assert.deepEqual(rows, [{ status: 'read' }]);
    const early = await env.h.app.db.pool.query(`SELECT count(*)::int AS n FROM whatsapp_early_statuses`);
    assert.equal(early.rows[0].n, 0);
    assert.equal((await lead(leadId)).status, 'in_conversation');
    await env.h.settle();
  });

  it('an early "failed" hands the lead to a person', async () => {
    const raw = uniquePhone();
    env.h.meta.failRecipient(raw, {
      code: 131026,
      title: 'Message undeliverable',
      details: 'Unable to deliver the message.',
    });
    try {
      const { leadId } = await env.h.submit(env.mt.apiKey, { phone: raw });
      await env.h.app.relay.drain();
      await engineWithSlowRecording().run(leadId);
      assert.equal((await lead(leadId)).status, 'needs_human');
      const { rows } = await env.h.app.db.pool.query(
        `SELECT status, error_code FROM whatsapp_messages WHERE lead_id = $1`,
        [leadId],
      );
      assert.deepEqual(rows, [{ status: 'failed', error_code: '131026' }]);
    } finally {
      env.h.meta.failRecipient(raw, undefined);
    }
    await env.h.settle();
  });
});

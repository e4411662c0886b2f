import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHAT_FAILURES } from '../../src/simulators/chat-model/chat-simulator.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { leadEvents } from '../helpers/agent-harness.ts';
import { DEFAULT_HOLDING_MESSAGE } from '../../src/whatsapp/hand-over.ts';
import { uniquePhone } from '../helpers/http.ts';
import { setUpWhatsappTurns } from '../helpers/whatsapp-turn-setup.ts';

// What stops a WhatsApp turn: the 24-hour window, failures the agent cannot fix, and the switches
// that stop the agent. The model's request and the checkpoints: whatsapp-turn-checkpoints.test.ts.
// Sequential: the simulators' injected failures apply to whichever request comes next.

const { setup: env, leadWithTemplate, twilioTo, lead, turns, jobsOf } = setUpWhatsappTurns();

describe('the 24-hour window', () => {
  it('a reply due more than 24 hours after the lead wrote is not sent: the lead goes to a person', async () => {
    const { leadId, phone } = await leadWithTemplate();
    await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
    await env.h.app.db.pool.query(
      `UPDATE leads SET last_inbound_at = last_inbound_at - interval '25 hours' WHERE id = $1`,
      [leadId],
    );
    const before = env.h.chat.requests.length;
    await env.h.settle();
    assert.equal(env.h.chat.requests.length, before, 'the model is not even asked');
    assert.equal(twilioTo(phone).length, 1);
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.equal((await turns(leadId))[1].outcome, 'window_closed');
  });

  it('Twilio 63016 in a status callback hands the lead to a person', async () => {
    const { leadId, phone } = await leadWithTemplate();
    env.h.twilio.failNextDeliveries(1, { errorCode: 63016 });
    await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
    await env.h.settle();
    assert.equal((await lead(leadId)).status, 'needs_human');
    const escalated = (await leadEvents(env.h.app.db.pool, leadId)).find((e) => e.type === 'conversation.escalated')!;
    assert.equal(escalated.data.outcome, 'window_closed');
  });

  it('Meta 131047 on the send is not retried: the lead goes to a person', async () => {
    const { leadId, phone } = await leadWithTemplate(env.mt);
    env.h.meta.failNextSends(1, {
      status: 400,
      code: 131047,
      message: '(#131047) Re-engagement message',
      details: 'More than 24 hours have passed since the recipient last replied.',
    } as never);
    await env.h.leadSays('meta', env.mt.slug, phone, PERSONA_PHRASES.answer);
    await env.h.settle({ ignoreBackoff: true });
    assert.equal((await lead(leadId)).status, 'needs_human');
    assert.equal((await turns(leadId))[1].outcome, 'window_closed');
    assert.equal(env.h.meta.sends.filter((s) => `+${s.to}` === phone).length, 1);
  });
});

describe('failures a person must handle', () => {
  it('insufficient_quota: no retry, the lead goes to a person, the integration log says why', async () => {
    const { leadId, phone } = await leadWithTemplate();
    env.h.chat.failNext(CHAT_FAILURES.insufficientQuota());
    const before = env.h.chat.requests.length;
    await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
    await env.h.settle({ ignoreBackoff: true });
    assert.equal(env.h.chat.requests.length - before, 1, 'never retried');
    assert.equal((await lead(leadId)).status, 'needs_human');
    // The template, then the holding message (src/whatsapp/hand-over.ts).
    assert.deepEqual(
      twilioTo(phone)
        .map((m) => m.text)
        .slice(1),
      [DEFAULT_HOLDING_MESSAGE],
    );
    const { rows } = await env.h.app.db.pool.query(
      `SELECT provider, outcome, payload FROM integration_events WHERE lead_id = $1 AND outcome = 'insufficient_quota'`,
      [leadId],
    );
    assert.equal(rows.length, 1);
    assert.match(rows[0].payload.response.message, /quota/);
    assert.equal((await jobsOf(leadId)).at(-1)!.state, 'completed');
  });

  it('a recipient not on WhatsApp goes to a person', async () => {
    const raw = uniquePhone();
    env.h.twilio.failNextSends(1, { status: 400, code: 63003 });
    const { leadId } = await env.h.submit(env.tw.apiKey, { phone: raw });
    await env.h.settle();
    const row = await lead(leadId);
    assert.equal(row.status, 'needs_human');
    assert.equal((await turns(leadId))[0].outcome, 'recipient_unreachable');
  });

  it('settings the provider refuses: the lead goes to a person, the turn waits in the dead-letter queue', async () => {
    const raw = uniquePhone();
    env.h.twilio.failNextSends(1, { status: 401, code: 20003 });
    const { leadId } = await env.h.submit(env.tw.apiKey, { phone: raw });
    // drainOnce settles `dead` as failed (see TurnWorker); the outcome is what matters here.
    await env.h.app.relay.drain();
    const [job] = await env.h.app.boss.fetch<{ leadId: string }>('agent-turn');
    const result = await env.h.worker.runJob(job!);
    assert.equal(result.status, 'deadletter');
    assert.match(String((result.output as { reason: string }).reason), /Authenticate/);
    assert.equal((await turns(leadId))[0].state, 'ready');
    // Not left `new` unseen: with a person, the reason on its timeline (whatsapp-turn-send-last-attempt.test.ts).
    assert.equal((await lead(leadId)).status, 'needs_human');
    const escalated = (await leadEvents(env.h.app.db.pool, leadId)).find((e) => e.type === 'conversation.escalated');
    assert.equal(escalated?.data.outcome, 'provider_refused_settings');
    await env.h.app.boss.complete('agent-turn', job!.id);
  });
});

describe('switches that stop the agent', () => {
  it(
    'agent switched off: the lead who writes goes to a person ' + 'with the holding message; the model is not asked',
    async () => {
      const { leadId, phone } = await leadWithTemplate();
      const before = env.h.chat.requests.length;
      await env.h.app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [env.tw.workspaceId]);
      try {
        await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
        await env.h.leadSays('twilio', env.tw.slug, phone, 'Are you there?');
        await env.h.settle();
      } finally {
        await env.h.app.db.pool.query('UPDATE workspaces SET agent_enabled = true WHERE id = $1', [env.tw.workspaceId]);
      }
      assert.equal(env.h.chat.requests.length - before, 0);
      assert.deepEqual(
        twilioTo(phone)
          .map((m) => m.text)
          .slice(1),
        [DEFAULT_HOLDING_MESSAGE],
      );
      assert.equal((await lead(leadId)).status, 'needs_human');
      const { rows } = await env.h.app.db.pool.query(
        `SELECT count(DISTINCT turn_id)::int AS n FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound'`,
        [leadId],
      );
      assert.equal(rows[0].n, 1, 'both messages handed over by the one turn');
    },
  );

  it(
    'agent off when the lead arrived, on when the lead writes: ' + 'that job sends the template, then answers',
    async () => {
      const raw = uniquePhone();
      const phone = `+${raw.replace(/\D/g, '')}`;
      await env.h.app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [env.tw.workspaceId]);
      let leadId: string;
      try {
        ({ leadId } = await env.h.submit(env.tw.apiKey, { phone: raw }));
        await env.h.settle();
        assert.equal(twilioTo(phone).length, 0, 'the first job ended without a template');
      } finally {
        await env.h.app.db.pool.query('UPDATE workspaces SET agent_enabled = true WHERE id = $1', [env.tw.workspaceId]);
      }
      // The lead's message finds no turn yet: its job sends the template, and must not end there.
      await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
      await env.h.settle();
      assert.equal(twilioTo(phone).length, 2, 'the template, then the answer');
      assert.deepEqual(
        (await turns(leadId)).map((t) => [t.kind, t.state]),
        [
          ['first_contact', 'sent'],
          ['reply', 'sent'],
        ],
      );
    },
  );

  it('a first contact ends its job once sent (no second look at the lead)', async () => {
    const { leadId } = await leadWithTemplate();
    const { rows } = await env.h.app.db.pool.query(
      `SELECT output FROM pgboss.job WHERE data->>'leadId' = $1 AND state = 'completed'`,
      [leadId],
    );
    assert.deepEqual(
      rows.map((r) => r.output?.outcome),
      ['first_contact_sent'],
    );
  });

  it('an operator taking over while the answer is being written: the answer is not sent', async () => {
    const { leadId, phone } = await leadWithTemplate();
    // A model that answers only after an operator has taken the lead over.
    const slowModel = {
      async complete() {
        await transitionLead(env.h.app.db.pool, {
          leadId,
          to: 'needs_human',
          actor: 'operator',
          event: { type: 'lead.taken_over' },
        });
        return { ok: true as const, message: { content: 'Thanks! One more question…' } };
      },
    };
    const base = defaultConversationProviders(env.h.app.config, { scheduling: env.h.app.scheduling });
    const engine = new TurnEngine({
      integrationLog: env.h.app.integrationLog,
      pool: env.h.app.db.pool,
      log: env.h.app.log,
      clock: env.h.clock.read,
      workspaces: env.h.app.workspaces,
      providers: { ...base, messaging: base.messaging, chat: () => ({ model: slowModel, name: 'slow' }) },
    });
    await env.h.leadSays('twilio', env.tw.slug, phone, PERSONA_PHRASES.answer);
    assert.deepEqual(await engine.run(leadId), { kind: 'done', outcome: 'lead_needs_human' });
    await env.h.settle();
    assert.equal(twilioTo(phone).length, 1);
    assert.deepEqual(
      (await turns(leadId)).map((t) => [t.state, t.outcome]),
      [
        ['sent', null],
        ['cancelled', 'lead_needs_human'],
      ],
    );
  });
});

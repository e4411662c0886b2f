import assert from 'node:assert/strict';
import { DEFAULT_HOLDING_MESSAGE } from '../../src/whatsapp/hand-over.ts';
import { after, before, describe, it } from 'node:test';
import { HOSTILE_MODELS } from '../../src/simulators/chat-model/hostile-models.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { CHECK_PREFIX, MESSAGE_CHECKED } from '../../src/whatsapp/reply-guard.ts';
import { leadEvents, SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The outbound guard through the real turn worker, the real OpenAI-compatible client against the
// chat simulator's hostile models, and the real Twilio and Meta clients against their simulators:
// what the model writes is checked before any of it reaches the lead (docs/WHATSAPP.md, "What is sent").
// Sequential: the chat policy applies to whichever request comes next.

let h: WhatsappHarness;
type Ws = { slug: string; apiKey: string; workspaceId: string };
let tw: Ws;
let mt: Ws;

before(async () => {
  h = await startWhatsappHarness();
  const agent = { ...SOLAR_AGENT, allowedLinkDomains: ['sunnyroofs.example'] };
  tw = await h.workspace('twilio', { agent });
  mt = await h.workspace('meta', { agent });
});
after(() => h.close());

type Provider = 'twilio' | 'meta';
const ws = (p: Provider) => (p === 'twilio' ? tw : mt);

/** A lead that got its template, then wrote `text`; returns what the agent sent it as text. */
async function converse(
  p: Provider,
  text = 'Hi, tell me more.',
): Promise<{ leadId: string; phone: string; sent: () => string[] }> {
  const raw = uniquePhone();
  const { leadId, phone } = await h.submit(ws(p).apiKey, { phone: raw });
  await h.settle();
  await h.leadSays(p, ws(p).slug, phone, text);
  await h.settle();
  const sent = () =>
    p === 'twilio'
      ? h.twilio.messages.filter((m) => m.to === phone && m.kind === 'text').map((m) => m.params.Body!)
      : h.meta.sends.filter((m) => `+${m.to}` === phone && m.kind === 'text').map((m) => m.text);
  return { leadId, phone, sent };
}

const status = async (leadId: string) =>
  (await h.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [leadId])).rows[0].status;
const checks = async (leadId: string) =>
  (await leadEvents(h.app.db.pool, leadId)).filter((e) => e.type === MESSAGE_CHECKED).map((e) => e.data);
type Policy = Parameters<WhatsappHarness['chat']['setPolicy']>[0];
/** A policy that answers with `first` once, then with `then`. */
const once = (first: Policy, then: ReturnType<Policy>): Policy => {
  let n = 0;
  return (r) => (n++ === 0 ? first(r) : then);
};
const GOOD = { content: 'Thanks! Would Tuesday at 10:00 suit you for a short call?' };
const correctionsSeen = (from: number) =>
  h.chat.requests
    .slice(from)
    .flatMap((r) => (r.body as { messages: Array<{ role: string; content: string | null }> }).messages)
    .filter((m) => m.role === 'system' && m.content?.startsWith(CHECK_PREFIX));

describe('a claimed booking the lead does not have', () => {
  it('Twilio: never sent; asked again once, then the lead is handed to a person with the reason', async () => {
    h.chat.setPolicy(HOSTILE_MODELS.falseBookingClaim);
    const from = h.chat.requests.length;
    const c = await converse('twilio');
    // Only the holding message of the hand-over (src/whatsapp/hand-over.ts), never the claim.
    assert.deepEqual(c.sent(), [DEFAULT_HOLDING_MESSAGE]);
    assert.equal(await status(c.leadId), 'needs_human');
    assert.ok(
      correctionsSeen(from).some((m) => /no booking/.test(m.content!)),
      'the model was told why',
    );
    assert.deepEqual(
      (await checks(c.leadId)).map((d) => [d.action, d.problem]),
      [
        ['asked_again', 'booking_claim'],
        ['handed_over', 'booking_claim'],
      ],
    );
    const escalated = (await leadEvents(h.app.db.pool, c.leadId)).find((e) => e.type === 'conversation.escalated');
    assert.equal(escalated?.data.outcome, 'message_refused_booking_claim');
  });

  it('Meta: the corrected answer is sent instead', async () => {
    h.chat.setPolicy(once(HOSTILE_MODELS.falseBookingClaim, GOOD));
    const c = await converse('meta');
    assert.deepEqual(c.sent(), [GOOD.content]);
    assert.equal(await status(c.leadId), 'in_conversation');
  });
});

describe('a cut or degenerate answer', () => {
  it("Meta: finish_reason length is not sent; the model's second answer is", async () => {
    h.chat.setPolicy(once(HOSTILE_MODELS.cutByLength, GOOD));
    const c = await converse('meta');
    assert.deepEqual(c.sent(), [GOOD.content]);
    assert.deepEqual(
      (await checks(c.leadId)).map((d) => d.problem),
      ['cut'],
    );
  });

  it('Twilio: 7 MB of one letter, twice: nothing sent, the lead goes to a person', async () => {
    h.chat.setPolicy(HOSTILE_MODELS.hugeAnswer);
    const c = await converse('twilio');
    assert.deepEqual(c.sent(), [DEFAULT_HOLDING_MESSAGE], 'only the holding message');
    assert.equal(await status(c.leadId), 'needs_human');
    assert.deepEqual(
      (await checks(c.leadId)).map((d) => [d.action, d.problem]),
      [
        ['asked_again', 'degenerate'],
        ['handed_over', 'degenerate'],
      ],
    );
  });

  it('Twilio: an answer that is nothing but markup and a placeholder counts as empty', async () => {
    h.chat.setPolicy(once(() => ({ content: '<script>alert(1)</script>{{1}}' }), GOOD));
    const c = await converse('twilio');
    assert.deepEqual(c.sent(), [GOOD.content]);
    assert.deepEqual(
      (await checks(c.leadId)).map((d) => d.problem),
      ['empty'],
    );
  });
});

describe('markup, placeholders and links', () => {
  const ANSWER =
    '## Great news\n**Hi {{1}}**, <script>x()</script>our offer is at https://sunnyroofs.example/offer. ' +
    'Also see http://evil.example/win and www.phish.test/login.';
  for (const p of ['twilio', 'meta'] as const) {
    it(`${p}: removed before the send, the workspace's own link kept, what was removed on the timeline`, async () => {
      h.chat.setPolicy(() => ({ content: ANSWER }));
      const c = await converse(p);
      assert.deepEqual(c.sent(), ['Great news\nHi, our offer is at https://sunnyroofs.example/offer. Also see and.']);
      const [check] = await checks(c.leadId);
      assert.deepEqual(check!.removed, {
        html: 1,
        markdown: 2,
        placeholders: 1,
        links: ['evil.example', 'www.phish.test'],
      });
      assert.equal(check!.action, 'sent');
    });
  }
});

// About 6,000 characters in sentences of varying length (the review sent 5,000).
const LONG = Array.from(
  { length: 60 },
  (_, i) =>
    `Point ${i + 1}: our installers ${'check the roof, '.repeat(i % 4)}` +
    'plan the panels and handle the permits for you 👍.',
).join(' ');

describe('a long answer is split at sentence boundaries, not cut', () => {
  for (const [p, limit, n] of [
    ['twilio', 1600, 4],
    ['meta', 4096, 2],
  ] as const) {
    it(`${p}: ${n} messages in order, each within ${limit}, every key its own`, async () => {
      assert.ok(LONG.length > 5000 && LONG.length < 6400, String(LONG.length));
      h.chat.setPolicy(() => ({ content: LONG }));
      const c = await converse(p);
      const sent = c.sent();
      assert.equal(sent.length, n);
      for (const part of sent) {
        assert.ok(part.length <= limit && part.endsWith('👍.') && !part.includes('…'), part.slice(-30));
      }
      assert.equal(sent.join(' '), LONG);
      const { rows } = await h.app.db.pool.query(
        `SELECT m.idempotency_key, m.status, t.state FROM whatsapp_messages m JOIN agent_turns t ON t.id = m.turn_id
          WHERE m.lead_id = $1 AND m.direction = 'outbound' AND m.kind = 'text' ORDER BY m.id`,
        [c.leadId],
      );
      assert.equal(rows.length, n);
      assert.equal(new Set(rows.map((r) => r.idempotency_key)).size, n);
      assert.ok(rows.every((r) => r.status !== 'pending' && r.state === 'sent'));
      const sentEvents = (await leadEvents(h.app.db.pool, c.leadId)).filter(
        (e) => e.type === 'message.sent' && e.data.kind === 'text',
      );
      assert.equal(sentEvents.length, n);
      assert.equal((await checks(c.leadId))[0]?.parts, n);
      // The next turn reads the split answer as one message of the agent's.
      h.chat.setPolicy(() => GOOD);
      const from = h.chat.requests.length;
      await h.leadSays(p, ws(p).slug, c.phone, 'Thanks, sounds good.');
      await h.settle();
      assert.equal(c.sent().at(-1), GOOD.content);
      const messages = (h.chat.requests[from]!.body as { messages: Array<{ role: string; content: string | null }> })
        .messages;
      assert.ok(messages.some((m) => m.role === 'assistant' && m.content === sent.join('\n\n')));
    });
  }

  it('Twilio: a send stopped after the first part resumes with the second, each part sent once', async () => {
    h.chat.setPolicy(() => ({ content: LONG }));
    const raw = uniquePhone();
    const { leadId, phone } = await h.submit(tw.apiKey, { phone: raw });
    await h.settle();
    await h.leadSays('twilio', tw.slug, phone, 'Tell me everything.');
    // A worker that stops (shutdown, lost connection) right after the provider accepted part 1.
    const stop = new AbortController();
    const base = defaultConversationProviders(h.app.config, {
      scheduling: h.app.scheduling,
      chat: { sleep: async () => {} },
    });
    const providers = {
      ...base,
      messaging: (...a: Parameters<typeof base.messaging>) => {
        const p = base.messaging(...a);
        return (
          p && {
            name: p.name,
            send: async (r: Parameters<typeof p.send>[0]) => {
              const result = await p.send(r);
              if (r.content.kind === 'text') stop.abort();
              return result;
            },
          }
        );
      },
    };
    const engine = new TurnEngine({
      integrationLog: h.app.integrationLog,
      pool: h.app.db.pool,
      log: h.app.log,
      clock: h.clock.read,
      workspaces: h.app.workspaces,
      providers,
    });
    const first = await engine.run(leadId, stop.signal);
    assert.equal(first.kind, 'retry');
    const texts = () => h.twilio.messages.filter((m) => m.to === phone && m.kind === 'text').map((m) => m.params.Body!);
    assert.equal(texts().length, 1);
    const calls = h.chat.requests.length;
    await h.settle();
    assert.equal(h.chat.requests.length, calls, 'the model is not asked again');
    assert.equal(texts().length, 4);
    assert.equal(texts().join(' '), LONG);
  });
});

describe('text that comes with a tool call', () => {
  it('Twilio: "A colleague will call you tomorrow." reaches the lead, who is with a person', async () => {
    h.chat.setPolicy(HOSTILE_MODELS.contentWithToolCalls);
    const c = await converse('twilio', 'Can someone call me?');
    assert.deepEqual(c.sent(), ['A colleague will call you tomorrow.']);
    assert.equal(await status(c.leadId), 'needs_human');
  });
});

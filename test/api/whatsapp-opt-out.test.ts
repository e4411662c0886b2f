import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, afterEach, before, describe, it } from 'node:test';
import type { ChatMessage } from '../../src/agent/chat-model.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import type { ValidChatRequest } from '../../src/simulators/chat-model/chat-request-validation.ts';
import { scriptedReply, type AssistantReply } from '../../src/simulators/chat-model/scripted-policy.ts';
import { CANCEL_REASON } from '../../src/whatsapp/inbound-service.ts';
import { leadEvents } from '../helpers/agent-harness.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness, type WhatsappProvider } from '../helpers/whatsapp-harness.ts';

// Opt-out through the signed webhooks and the real turn worker: the keywords (normalised, five
// languages) never reach the model; the model's optOut tool takes the same path for other words;
// "Cancel" from a lead with a booking goes to a person and keeps the channel open; and the model
// cannot record an opt-out as a mere "unqualified" reason.

let h: WhatsappHarness;
const ws: Partial<Record<WhatsappProvider, { slug: string; apiKey: string }>> = {};

before(async () => {
  h = await startWhatsappHarness();
  ws.twilio = await h.workspace('twilio');
  ws.meta = await h.workspace('meta');
});
afterEach(() => h.chat.setPolicy(scriptedReply));
after(() => h.close());

async function leadWithTemplate(provider: WhatsappProvider = 'twilio'): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const { leadId } = await h.submit(ws[provider]!.apiKey, { phone: raw });
  await h.settle();
  return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
}

/** Through the simulators' leads, so that their 24-hour window opens like the provider's. */
const says = (provider: WhatsappProvider, phone: string, text: string) =>
  h.leadSays(provider, ws[provider]!.slug, phone, text);

const sentTo = (phone: string) =>
  h.twilio.messages.filter((m) => m.to === phone).length + h.meta.sends.filter((s) => `+${s.to}` === phone).length;
const leadRow = async (leadId: string) =>
  (await h.app.db.pool.query('SELECT status, opted_out_at, qualification_notes FROM leads WHERE id = $1', [leadId]))
    .rows[0];

const call = (name: string, args: Record<string, unknown>): AssistantReply => ({
  content: null,
  tool_calls: [
    {
      id: `call_${randomBytes(9).toString('hex')}`,
      type: 'function',
      function: { name, arguments: JSON.stringify(args) },
    },
  ],
});
const toolAnswers = (messages: ChatMessage[]) => messages.flatMap((m) => (m.role === 'tool' ? [m.content] : []));

/** A model that runs `steps` in order (one per request), then says `closing`. */
function modelDoing(steps: Array<(answers: string[]) => AssistantReply>, closing = 'Understood. Goodbye!') {
  return (request: ValidChatRequest): AssistantReply => {
    const answers = toolAnswers(request.messages);
    return steps[answers.length]?.(answers) ?? { content: closing };
  };
}

describe('opt-out keywords, normalised', () => {
  const cases: Array<[WhatsappProvider, string]> = [
    ['twilio', 'STOPP'],
    ['twilio', 'stop please'],
    ['twilio', 'STOP 🛑'],
    ['twilio', 'Unsubscribe me'],
    ['twilio', 'Bitte keine Nachrichten mehr'],
    ['twilio', 'STOP\u200B'],
    ['meta', 'S\u200BTOP'],
    ['meta', 'ＳＴＯＰ'],
    ['meta', 'No más mensajes, gracias'],
    ['meta', "Ne m'écrivez plus !"],
    ['meta', 'Não quero mais mensagens'],
    ['twilio', "Don't text me!!"],
  ];
  for (const [provider, text] of cases) {
    it(`${provider}: ${JSON.stringify(text)} opts the lead out without reaching the model`, async () => {
      const { leadId, phone } = await leadWithTemplate(provider);
      const modelCalls = h.chat.requests.length;
      await says(provider, phone, text);
      await h.settle();
      const lead = await leadRow(leadId);
      assert.ok(lead.opted_out_at, 'opted out');
      assert.equal(lead.status, 'unqualified');
      assert.match(lead.qualification_notes, /opted out/i);
      assert.equal(h.chat.requests.length, modelCalls, 'the model was not asked');
      assert.equal(sentTo(phone), 1, 'only the first-contact template');
    });
  }

  for (const text of ['please stop the music', 'Can you stop by on Tuesday?', 'stop']) {
    // The last one is a control: the keyword still works once the sentences above have been answered.
    it(`${JSON.stringify(text)} is ${text === 'stop' ? 'an opt-out' : 'a message for the model'}`, async () => {
      const { leadId, phone } = await leadWithTemplate();
      await says('twilio', phone, text);
      await h.settle();
      const lead = await leadRow(leadId);
      assert.equal(lead.opted_out_at !== null, text === 'stop');
      assert.equal(sentTo(phone), text === 'stop' ? 1 : 2);
    });
  }
});

describe('the optOut tool: the same path for the words the keywords do not know', () => {
  for (const provider of ['twilio', 'meta'] as const) {
    it(`${provider}: the model calls optOut; nothing more is sent, even after an operator's resume`, async () => {
      h.chat.setPolicy(modelDoing([() => call('optOut', { reason: 'Asked us never to write again.' })]));
      const { leadId, phone } = await leadWithTemplate(provider);
      await says(provider, phone, 'Please never write to me again, I have had enough of these messages.');
      await h.settle();
      const lead = await leadRow(leadId);
      assert.ok(lead.opted_out_at, 'opted out');
      assert.equal(lead.status, 'unqualified');
      assert.equal(sentTo(phone), 1, "the model's goodbye is not sent either");
      const events = await leadEvents(h.app.db.pool, leadId);
      assert.ok(events.some((e) => e.type === 'lead.opted_out' && e.data.via === 'agent'));
      // An operator takes the lead over and hands it back; the lead writes: still nothing is sent.
      const move = (to: 'needs_human' | 'in_conversation', type: string) =>
        transitionLead(h.app.db.pool, { leadId, to, actor: 'operator', event: { type } });
      assert.ok((await move('needs_human', 'lead.taken_over')).ok);
      assert.ok((await move('in_conversation', 'lead.resumed')).ok);
      h.chat.setPolicy(() => ({ content: 'Hello again!' }));
      await says(provider, phone, 'Hello?');
      await h.settle();
      assert.equal(sentTo(phone), 1);
    });
  }

  it('markUnqualified with "opted out" in its reason records no opt-out and closes nothing; hint: optOut', async () => {
    const reason = 'The lead opted out and asked us to stop messaging.';
    h.chat.setPolicy(modelDoing([() => call('markUnqualified', { reason })]));
    const { leadId, phone } = await leadWithTemplate();
    await says('twilio', phone, 'I said I do not want any of this, go away');
    await h.settle();
    const lead = await leadRow(leadId);
    assert.equal(lead.opted_out_at, null, 'only the opt-out path sets it');
    assert.equal(lead.status, 'in_conversation', 'not closed as a mere "unqualified"');
    const answer = h.chat.requests.at(-1)!.body as { messages: ChatMessage[] };
    assert.match(toolAnswers(answer.messages).at(-1)!, /call optOut/);
    assert.ok(!(await leadEvents(h.app.db.pool, leadId)).some((e) => e.type === 'lead.unqualified'));
  });

  it('the model that follows the hint opts the lead out through optOut', async () => {
    h.chat.setPolicy(
      modelDoing([() => call('markUnqualified', { reason: 'Lead opted out.' }), () => call('optOut', {})]),
    );
    const { leadId, phone } = await leadWithTemplate('meta');
    await says('meta', phone, 'I said I do not want any of this, go away');
    await h.settle();
    const lead = await leadRow(leadId);
    assert.ok(lead.opted_out_at);
    assert.equal(lead.status, 'unqualified');
    assert.equal(sentTo(phone), 1);
  });
});

describe('"Cancel" means the booking when there is one', () => {
  async function bookedLead(): Promise<{ leadId: string; phone: string }> {
    const lead = await leadWithTemplate();
    await h.app.db.pool.query(
      `UPDATE leads SET status = 'booked', booking_uid = $2, booking_start = now() + interval '2 days' WHERE id = $1`,
      [lead.leadId, `bk_${lead.leadId.slice(0, 8)}`],
    );
    return lead;
  }

  for (const text of ['Cancel', 'cancel!', 'Stornieren']) {
    it(`${JSON.stringify(text)} from a booked lead: no opt-out; a person gets the lead with the reason`, async () => {
      const { leadId, phone } = await bookedLead();
      await says('twilio', phone, text);
      await h.settle();
      const lead = await leadRow(leadId);
      assert.equal(lead.opted_out_at, null, 'the channel stays open for the person to answer');
      assert.equal(lead.status, 'needs_human');
      const events = await leadEvents(h.app.db.pool, leadId);
      assert.ok(events.some((e) => e.type === 'conversation.escalated' && e.data.reason === CANCEL_REASON));
      assert.ok(!events.some((e) => e.type === 'lead.opted_out'));
      const { rows } = await h.app.db.pool.query(
        `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound'`,
        [leadId],
      );
      assert.deepEqual(
        rows.map((r) => r.body),
        [text],
        'the message is there for the person',
      );
    });
  }

  it('"STOP" from a booked lead still opts out (the booking stays)', async () => {
    const { leadId, phone } = await bookedLead();
    await says('twilio', phone, 'STOP');
    await h.settle();
    const lead = await leadRow(leadId);
    assert.ok(lead.opted_out_at);
    assert.equal(lead.status, 'booked');
  });

  it('without a booking, "Cancel" stays the opt-out keyword it always was; "Stornieren" is a message', async () => {
    const a = await leadWithTemplate();
    await says('twilio', a.phone, 'Cancel');
    const b = await leadWithTemplate();
    await says('twilio', b.phone, 'Stornieren');
    await h.settle();
    assert.ok((await leadRow(a.leadId)).opted_out_at);
    assert.equal((await leadRow(b.leadId)).opted_out_at, null);
    assert.equal(sentTo(b.phone), 2, 'the agent answered');
  });
});

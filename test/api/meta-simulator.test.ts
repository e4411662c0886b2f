// The Meta WhatsApp simulator through the real Meta client: personas answer through signed webhooks,
// and the 24-hour window. Graph auth and validation are in test/api/meta-simulator-graph-api.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PERSONA_PHRASES, type LeadPersonaName } from '../../src/simulators/personas/lead-personas.ts';
import { MetaWhatsAppClient } from '../../src/whatsapp/meta/meta-client.ts';
import type { InboundEvent } from '../../src/whatsapp/messaging-provider.ts';
import { META_SIGNATURE_HEADER, verifyMetaSignature } from '../../src/whatsapp/meta/meta-signature.ts';
import { META_SIM } from '../../src/simulators/meta/meta-simulator.ts';
import { metaSimulatorSetup } from '../helpers/meta-simulator-setup.ts';
import { parseMetaWebhook } from '../../src/whatsapp/meta/meta-webhook-parse.ts';

const LEAD = '+14155550123';
const TEMPLATE_TEXT = 'Hi Ada, thanks for your enquiry! Could you answer a few quick questions here on WhatsApp?';

const meta = metaSimulatorSetup();

const client = () =>
  new MetaWhatsAppClient({
    baseUrl: meta.sim.graphBaseUrl,
    accessToken: META_SIM.accessToken,
    phoneNumberId: META_SIM.phoneNumberId,
    templateName: META_SIM.template.name,
    templateLanguage: META_SIM.template.language,
    timeoutMs: 2000,
  });
const sendTemplate = (to = LEAD) =>
  client().send({ to, content: { kind: 'template', variables: ['Ada'] }, idempotencyKey: 'k' });
const sendText = (text: string, to = LEAD) =>
  client().send({ to, content: { kind: 'text', text }, idempotencyKey: 'k' });

/** Every received webhook, signature checked with the app secret, parsed into events. */
function events(): InboundEvent[] {
  return meta.received.flatMap((r) => {
    assert.equal(r.headers['content-type'], 'application/json');
    assert.ok(
      verifyMetaSignature(META_SIM.appSecret, r.raw, r.headers[META_SIGNATURE_HEADER] as string),
      'signature verifies',
    );
    return parseMetaWebhook(r.raw);
  });
}
const replies = () =>
  events()
    .filter((e) => e.type === 'message')
    .map((e) => (e as { text: string }).text);

describe('Meta simulator: personas answer through signed webhooks', () => {
  it("posts sent, delivered, read, then the persona's reply, all signed, in order", async () => {
    meta.sim.setPersona(LEAD, 'books', { name: 'Ada Lovelace' });
    const sent = await sendTemplate();
    assert.ok(sent.ok);
    await meta.sim.idle();
    const all = events();
    assert.deepEqual(
      all.slice(0, 3),
      ['sent', 'delivered', 'read'].map((status) => ({
        type: 'status',
        providerMessageId: sent.providerMessageId,
        status,
        at: meta.clock,
      })),
    );
    assert.equal(all.length, 4);
    const reply = all[3]!;
    assert.ok(reply.type === 'message');
    assert.deepEqual(
      { ...reply, providerMessageId: 'x' },
      {
        type: 'message',
        providerMessageId: 'x',
        from: LEAD,
        to: META_SIM.phoneNumberId,
        text: PERSONA_PHRASES.answer,
        receivedAt: meta.clock,
      },
    );
    assert.match(reply.providerMessageId, /^wamid\./);
    // The answer carries an em dash: Meta escapes it, so only raw-byte verification works.
    const raw = meta.received[3]!.raw.toString('utf8');
    assert.ok(raw.includes('\\u2014'), raw);
    const body = JSON.parse(raw);
    assert.deepEqual(body.entry[0].changes[0].value.contacts, [
      { profile: { name: 'Ada Lovelace' }, wa_id: '14155550123' },
    ]);
    assert.equal(body.entry[0].id, META_SIM.wabaId);
    assert.equal(meta.sim.sends[0]!.text, TEMPLATE_TEXT);
  });

  it(
    'the reply opens the window: slots offered by text get the ' + 'first one picked, a confirmation gets silence',
    async () => {
      meta.sim.setPersona(LEAD, 'books');
      await sendTemplate();
      await meta.sim.idle();
      assert.ok((await sendText('Great. I can offer:\n1) Tue 4 Mar, 10:00\n2) Tue 4 Mar, 14:00')).ok);
      await meta.sim.idle();
      assert.ok((await sendText('You are booked for Tue 4 Mar, 10:00. See you then!')).ok);
      await meta.sim.idle();
      assert.deepEqual(replies(), [PERSONA_PHRASES.answer, PERSONA_PHRASES.pickFirstSlot]);
    },
  );

  const cases: Array<[LeadPersonaName, string[]]> = [
    ['not-a-fit', [PERSONA_PHRASES.notAFit]],
    ['wants-human', [PERSONA_PHRASES.wantsHuman]],
    ['opts-out', [PERSONA_PHRASES.optOut]],
    ['goes-quiet', []],
  ];
  for (const [persona, expected] of cases) {
    it(`persona ${persona}`, async () => {
      meta.sim.setPersona(LEAD, persona);
      await sendTemplate();
      await meta.sim.idle();
      assert.deepEqual(replies(), expected);
      assert.equal(events().filter((e) => e.type === 'status').length, 3);
    });
  }

  it("a persona's own webhook URL wins, and leadSays posts a message and reopens the window", async () => {
    meta.sim.setWebhookUrl(META_SIM.phoneNumberId, undefined);
    const delivery = await meta.sim.leadSays(LEAD, 'Hi, I filled in your form', {
      webhookUrl: meta.webhookUrl,
      name: 'Ada',
    });
    assert.equal(delivery.status, 200);
    assert.deepEqual(replies(), ['Hi, I filled in your form']);
    meta.sim.setPersona(LEAD, 'opts-out', { webhookUrl: meta.webhookUrl });
    assert.ok((await sendText('Thanks for writing!')).ok, 'text is allowed right after the lead wrote');
    await meta.sim.idle();
    assert.deepEqual(replies(), ['Hi, I filled in your form', 'STOP']);
  });

  it('without any webhook URL deliveries are recorded as not sent', async () => {
    meta.sim.setWebhookUrl(META_SIM.phoneNumberId, undefined);
    await sendTemplate();
    await meta.sim.idle();
    assert.equal(meta.received.length, 0);
    assert.deepEqual(
      meta.sim.deliveries.map((d) => [d.kind, d.error]),
      [
        ['status', 'no webhook URL configured'],
        ['status', 'no webhook URL configured'],
        ['status', 'no webhook URL configured'],
      ],
    );
  });

  it('idle() waits for delayed deliveries deterministically', async () => {
    await meta.restart({ delays: { statusMs: 5, replyMs: 5 } });
    meta.sim.setPersona(LEAD, 'wants-human');
    await sendTemplate();
    await meta.sim.idle();
    assert.equal(meta.received.length, 4);
  });
});

describe('Meta simulator: the 24-hour window', () => {
  const reEngagement = {
    message: '(#131047) Re-engagement message',
    type: 'OAuthException',
    code: 131047,
    error_data: {
      messaging_product: 'whatsapp',
      details:
        'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
    },
  };

  it("refuses free-form text before the lead ever wrote, with Graph's 400 body", async () => {
    const res = await fetch(`${meta.sim.graphBaseUrl}/${META_SIM.phoneNumberId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${META_SIM.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', to: '14155550123', type: 'text', text: { body: 'hi' } }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: Record<string, unknown> };
    assert.match(body.error.fbtrace_id as string, /^A[\w-]{22}$/);
    delete body.error.fbtrace_id;
    assert.deepEqual(body, { error: reEngagement });
    assert.equal(meta.sim.sends.length, 0);
  });

  it("allows text for 24 hours after the lead's last message, not a millisecond more", async () => {
    meta.sim.setPersona(LEAD, 'not-a-fit');
    await sendTemplate();
    await meta.sim.idle(); // the persona answered at `clock`
    const repliedAt = meta.clock.getTime();
    meta.clock = new Date(repliedAt + 24 * 3600_000 - 1);
    assert.ok((await sendText('Sorry to hear that.')).ok);
    meta.clock = new Date(repliedAt + 24 * 3600_000);
    const closed = await sendText('Anything else?');
    assert.ok(!closed.ok);
    assert.equal(closed.kind, 'window_closed');
    assert.ok((await sendTemplate()).ok, 'a template is always allowed');
  });

  it('windows are per recipient', async () => {
    meta.sim.openWindow(LEAD);
    assert.ok((await sendText('hello')).ok);
    assert.ok(!(await sendText('hello', '+14155550999')).ok);
  });

  it('async mode accepts the text and reports 131047 in a failed status', async () => {
    await meta.restart({ windowError: 'async' });
    meta.sim.setPersona(LEAD, 'books');
    const result = await sendText('Following up');
    assert.ok(result.ok);
    await meta.sim.idle();
    assert.deepEqual(events(), [
      {
        type: 'status',
        providerMessageId: result.providerMessageId,
        status: 'failed',
        errorCode: '131047',
        errorMessage:
          'Re-engagement message: Message failed to send because more than 24 hours ' +
          'have passed since the customer last replied to this number.',
        at: meta.clock,
      },
    ]);
  });

  it('failRecipient: accepted, then a failed status and no reply', async () => {
    meta.sim.setPersona(LEAD, 'books');
    meta.sim.failRecipient(LEAD, { code: 131026, title: 'Message undeliverable', details: 'Message Undeliverable.' });
    const result = await sendTemplate();
    assert.ok(result.ok);
    await meta.sim.idle();
    const all = events();
    assert.equal(all.length, 1);
    assert.deepEqual(all[0], {
      type: 'status',
      providerMessageId: result.providerMessageId,
      status: 'failed',
      errorCode: '131026',
      errorMessage: 'Message undeliverable: Message Undeliverable.',
      at: meta.clock,
    });
  });
});

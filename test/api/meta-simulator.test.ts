import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PERSONA_PHRASES, type LeadPersonaName } from '../../src/simulators/personas/lead-personas.ts';
import { MetaWhatsAppClient } from '../../src/whatsapp/meta/meta-client.ts';
import type { InboundEvent } from '../../src/whatsapp/messaging-provider.ts';
import { META_SIGNATURE_HEADER, verifyMetaSignature } from '../../src/whatsapp/meta/meta-signature.ts';
import {
  META_SIM,
  startMetaSimulator,
  type MetaSimulator,
  type MetaSimulatorOptions,
} from '../../src/simulators/meta/meta-simulator.ts';
import { parseMetaWebhook } from '../../src/whatsapp/meta/meta-webhook-parse.ts';

const LEAD = '+14155550123';
const TEMPLATE_TEXT = 'Hi Ada, thanks for your enquiry! Could you answer a few quick questions here on WhatsApp?';

/** A tiny webhook receiver: keeps the raw bytes and headers of every POST, answers 200. */
interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
}
let receiver: Server;
let received: Received[];
let webhookUrl: string;
let sim: MetaSimulator;
let clock: Date;

beforeEach(async () => {
  received = [];
  receiver = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
    res.writeHead(200).end();
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/whatsapp/meta/acme/webhook`;
  clock = new Date('2025-03-03T09:00:00Z');
  await restart();
});
afterEach(async () => {
  await sim.close();
  receiver.closeAllConnections();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
});

async function restart(opts: MetaSimulatorOptions = {}): Promise<void> {
  await sim?.close();
  sim = await startMetaSimulator({ now: () => clock, ...opts });
  sim.setWebhookUrl(META_SIM.phoneNumberId, webhookUrl);
}

const client = () =>
  new MetaWhatsAppClient({
    baseUrl: sim.graphBaseUrl,
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
  return received.flatMap((r) => {
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
    sim.setPersona(LEAD, 'books', { name: 'Ada Lovelace' });
    const sent = await sendTemplate();
    assert.ok(sent.ok);
    await sim.idle();
    const all = events();
    assert.deepEqual(
      all.slice(0, 3),
      ['sent', 'delivered', 'read'].map((status) => ({
        type: 'status',
        providerMessageId: sent.providerMessageId,
        status,
        at: clock,
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
        receivedAt: clock,
      },
    );
    assert.match(reply.providerMessageId, /^wamid\./);
    // The answer carries an em dash: Meta escapes it, so only raw-byte verification works.
    const raw = received[3]!.raw.toString('utf8');
    assert.ok(raw.includes('\\u2014'), raw);
    const body = JSON.parse(raw);
    assert.deepEqual(body.entry[0].changes[0].value.contacts, [
      { profile: { name: 'Ada Lovelace' }, wa_id: '14155550123' },
    ]);
    assert.equal(body.entry[0].id, META_SIM.wabaId);
    assert.equal(sim.sends[0]!.text, TEMPLATE_TEXT);
  });

  it('the reply opens the window: slots offered by text get the first one picked, a confirmation gets silence', async () => {
    sim.setPersona(LEAD, 'books');
    await sendTemplate();
    await sim.idle();
    assert.ok((await sendText('Great. I can offer:\n1) Tue 4 Mar, 10:00\n2) Tue 4 Mar, 14:00')).ok);
    await sim.idle();
    assert.ok((await sendText('You are booked for Tue 4 Mar, 10:00. See you then!')).ok);
    await sim.idle();
    assert.deepEqual(replies(), [PERSONA_PHRASES.answer, PERSONA_PHRASES.pickFirstSlot]);
  });

  const cases: Array<[LeadPersonaName, string[]]> = [
    ['not-a-fit', [PERSONA_PHRASES.notAFit]],
    ['wants-human', [PERSONA_PHRASES.wantsHuman]],
    ['opts-out', [PERSONA_PHRASES.optOut]],
    ['goes-quiet', []],
  ];
  for (const [persona, expected] of cases) {
    it(`persona ${persona}`, async () => {
      sim.setPersona(LEAD, persona);
      await sendTemplate();
      await sim.idle();
      assert.deepEqual(replies(), expected);
      assert.equal(events().filter((e) => e.type === 'status').length, 3);
    });
  }

  it("a persona's own webhook URL wins, and leadSays posts a message and reopens the window", async () => {
    sim.setWebhookUrl(META_SIM.phoneNumberId, undefined);
    const delivery = await sim.leadSays(LEAD, 'Hi, I filled in your form', { webhookUrl, name: 'Ada' });
    assert.equal(delivery.status, 200);
    assert.deepEqual(replies(), ['Hi, I filled in your form']);
    sim.setPersona(LEAD, 'opts-out', { webhookUrl });
    assert.ok((await sendText('Thanks for writing!')).ok, 'text is allowed right after the lead wrote');
    await sim.idle();
    assert.deepEqual(replies(), ['Hi, I filled in your form', 'STOP']);
  });

  it('without any webhook URL deliveries are recorded as not sent', async () => {
    sim.setWebhookUrl(META_SIM.phoneNumberId, undefined);
    await sendTemplate();
    await sim.idle();
    assert.equal(received.length, 0);
    assert.deepEqual(
      sim.deliveries.map((d) => [d.kind, d.error]),
      [
        ['status', 'no webhook URL configured'],
        ['status', 'no webhook URL configured'],
        ['status', 'no webhook URL configured'],
      ],
    );
  });

  it('idle() waits for delayed deliveries deterministically', async () => {
    await restart({ delays: { statusMs: 5, replyMs: 5 } });
    sim.setPersona(LEAD, 'wants-human');
    await sendTemplate();
    await sim.idle();
    assert.equal(received.length, 4);
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
    const res = await fetch(`${sim.graphBaseUrl}/${META_SIM.phoneNumberId}/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${META_SIM.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ messaging_product: 'whatsapp', to: '14155550123', type: 'text', text: { body: 'hi' } }),
    });
    assert.equal(res.status, 400);
    const body = (await res.json()) as { error: Record<string, unknown> };
    assert.match(body.error.fbtrace_id as string, /^A[\w-]{22}$/);
    delete body.error.fbtrace_id;
    assert.deepEqual(body, { error: reEngagement });
    assert.equal(sim.sends.length, 0);
  });

  it("allows text for 24 hours after the lead's last message, not a millisecond more", async () => {
    sim.setPersona(LEAD, 'not-a-fit');
    await sendTemplate();
    await sim.idle(); // the persona answered at `clock`
    const repliedAt = clock.getTime();
    clock = new Date(repliedAt + 24 * 3600_000 - 1);
    assert.ok((await sendText('Sorry to hear that.')).ok);
    clock = new Date(repliedAt + 24 * 3600_000);
    const closed = await sendText('Anything else?');
    assert.ok(!closed.ok);
    assert.equal(closed.kind, 'window_closed');
    assert.ok((await sendTemplate()).ok, 'a template is always allowed');
  });

  it('windows are per recipient', async () => {
    sim.openWindow(LEAD);
    assert.ok((await sendText('hello')).ok);
    assert.ok(!(await sendText('hello', '+14155550999')).ok);
  });

  it('async mode accepts the text and reports 131047 in a failed status', async () => {
    await restart({ windowError: 'async' });
    sim.setPersona(LEAD, 'books');
    const result = await sendText('Following up');
    assert.ok(result.ok);
    await sim.idle();
    assert.deepEqual(events(), [
      {
        type: 'status',
        providerMessageId: result.providerMessageId,
        status: 'failed',
        errorCode: '131047',
        errorMessage:
          'Re-engagement message: Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
        at: clock,
      },
    ]);
  });

  it('failRecipient: accepted, then a failed status and no reply', async () => {
    sim.setPersona(LEAD, 'books');
    sim.failRecipient(LEAD, { code: 131026, title: 'Message undeliverable', details: 'Message Undeliverable.' });
    const result = await sendTemplate();
    assert.ok(result.ok);
    await sim.idle();
    const all = events();
    assert.equal(all.length, 1);
    assert.deepEqual(all[0], {
      type: 'status',
      providerMessageId: result.providerMessageId,
      status: 'failed',
      errorCode: '131026',
      errorMessage: 'Message undeliverable: Message Undeliverable.',
      at: clock,
    });
  });
});

describe('Meta simulator: Graph auth and validation (direct HTTP)', () => {
  async function post(body: unknown, opts: { token?: string | null; phoneNumberId?: string; path?: string } = {}) {
    const token = opts.token === undefined ? META_SIM.accessToken : opts.token;
    const res = await fetch(
      `${sim.url}${opts.path ?? `/v23.0/${opts.phoneNumberId ?? META_SIM.phoneNumberId}/messages`}`,
      {
        method: 'POST',
        headers: {
          ...(token === null ? {} : { authorization: `Bearer ${token}` }),
          'content-type': 'application/json',
        },
        body: typeof body === 'string' ? body : JSON.stringify(body),
      },
    );
    const json = (await res.json()) as { error?: Record<string, unknown> };
    delete json.error?.fbtrace_id;
    return { status: res.status, json, authenticate: res.headers.get('www-authenticate') };
  }
  const valid = {
    messaging_product: 'whatsapp',
    recipient_type: 'individual',
    to: '14155550123',
    type: 'template',
    template: {
      name: 'lead_first_contact',
      language: { code: 'en_US' },
      components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }],
    },
  };
  const withTemplate = (t: Record<string, unknown>) => ({ ...valid, template: { ...valid.template, ...t } });

  it('answers a valid template send with contacts and an accepted message', async () => {
    const res = await post({ ...valid, to: '+1 (415) 555-0123' });
    assert.equal(res.status, 200);
    const json = res.json as { contacts: unknown; messages: Array<{ id: string; message_status: string }> };
    assert.deepEqual(json.contacts, [{ input: '+1 (415) 555-0123', wa_id: '14155550123' }]);
    assert.equal(json.messages[0]!.message_status, 'accepted');
    assert.deepEqual(Object.keys(res.json), ['messaging_product', 'contacts', 'messages']);
  });

  it("rejects missing and unknown tokens with 401 / 190, and another number's token with 100 / 33", async () => {
    const invalid = {
      status: 401,
      json: {
        error: { message: 'Invalid OAuth access token - Cannot parse access token', type: 'OAuthException', code: 190 },
      },
    };
    assert.deepEqual(
      { ...(await post(valid, { token: null })), authenticate: undefined },
      { ...invalid, authenticate: undefined },
    );
    assert.deepEqual((await post(valid, { token: 'nope' })).json, invalid.json);
    sim.addPhoneNumber({
      id: '777',
      displayPhoneNumber: '15550000777',
      wabaId: '1',
      accessToken: 'other',
      appSecret: 's',
      templates: [],
    });
    const res = await post(valid, { token: 'other' });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      error: {
        message: `Unsupported post request. Object with ID '${META_SIM.phoneNumberId}' does not exist, cannot be loaded due to missing permissions, or does not support this operation. Please read the Graph API documentation at https://developers.facebook.com/docs/graph-api`,
        type: 'GraphMethodException',
        code: 100,
        error_subcode: 33,
      },
    });
    assert.equal(sim.sends.length, 0);
  });

  it("answers body errors with Graph's (#100)-family errors", async () => {
    const expectations: Array<[unknown, number, number, string, string?]> = [
      ['not json', 400, 100, '(#100) The parameter messaging_product is required.'],
      [
        { ...valid, messaging_product: 'sms' },
        400,
        100,
        '(#100) Param messaging_product must be one of {WHATSAPP} - got "sms".',
      ],
      [{ ...valid, to: undefined }, 400, 100, '(#100) The parameter to is required.'],
      [
        { ...valid, to: 'abc' },
        400,
        131009,
        '(#131009) Parameter value is not valid',
        'Recipient phone number is not a valid phone number.',
      ],
      [
        { ...valid, to: META_SIM.displayPhoneNumber },
        400,
        131021,
        '(#131021) Recipient cannot be sender',
        'Sender and recipient phone number is the same.',
      ],
      [
        { ...valid, type: 'fax' },
        400,
        100,
        '(#100) Param type must be one of {AUDIO, CONTACTS, DOCUMENT, IMAGE, INTERACTIVE, LOCATION, REACTION, STICKER, TEMPLATE, TEXT, VIDEO} - got "fax".',
      ],
      [
        { ...valid, type: 'image' },
        400,
        131051,
        '(#131051) Unsupported message type',
        'The simulator models text and template messages only, not image.',
      ],
      [{ ...valid, type: 'text', text: {} }, 400, 100, "(#100) The parameter text['body'] is required."],
      [
        { ...valid, type: 'text', text: { body: 'x'.repeat(4097) } },
        400,
        100,
        '(#100) Invalid parameter',
        "Param text['body'] must be at most 4096 characters long.",
      ],
      [withTemplate({ language: undefined }), 400, 100, "(#100) The parameter template['language'] is required."],
      [
        withTemplate({ name: 'nope' }),
        404,
        132001,
        '(#132001) Template name does not exist in the translation',
        'template name (nope) does not exist in en_US',
      ],
      [
        withTemplate({ components: [] }),
        400,
        132000,
        '(#132000) Number of parameters does not match the expected number of params',
        'body: number of localizable_params (0) does not match the expected number of params (1)',
      ],
      [
        withTemplate({ components: [{ type: 'body', parameters: [{ type: 'text', text: '' }] }] }),
        400,
        100,
        '(#100) Invalid parameter',
        "Parameter 'text' is mandatory for component parameter type 'text'",
      ],
      [
        withTemplate({ components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada\nL' }] }] }),
        400,
        100,
        '(#100) Invalid parameter',
        'Param text cannot have new-line/tab characters or more than 4 consecutive spaces',
      ],
      [
        withTemplate({
          components: [
            { type: 'body', parameters: [{ type: 'text', text: 'Ada' }] },
            { type: 'header', parameters: [{ type: 'text', text: 'x' }] },
          ],
        }),
        400,
        132000,
        '(#132000) Number of parameters does not match the expected number of params',
        'header: number of localizable_params (1) does not match the expected number of params (0)',
      ],
    ];
    for (const [body, status, code, message, details] of expectations) {
      const res = await post(body);
      const error: Record<string, unknown> = { message, type: 'OAuthException', code };
      if (details) error.error_data = { messaging_product: 'whatsapp', details };
      assert.deepEqual(
        { status: res.status, json: res.json },
        { status, json: { error } },
        JSON.stringify(body).slice(0, 80),
      );
      assert.equal(res.authenticate, `OAuth "Facebook Platform" "invalid_request" "${message}"`);
    }
    assert.equal(sim.sends.length, 0);
  });

  it("answers unknown paths with Graph's unknown path error", async () => {
    const res = await post(valid, { path: `/v23.0/${META_SIM.phoneNumberId}/mesages` });
    assert.deepEqual(res, {
      status: 400,
      authenticate: res.authenticate,
      json: {
        error: {
          message: `Unknown path components: ${META_SIM.phoneNumberId}/mesages`,
          type: 'OAuthException',
          code: 2500,
        },
      },
    });
  });
});

describe('parseMetaWebhook', () => {
  const metadata = { display_phone_number: '15550783881', phone_number_id: '106540352242922' };
  const batch = {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: '1',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata,
              contacts: [{ profile: { name: 'A' }, wa_id: '16505551234' }],
              messages: [
                {
                  from: '16505551234',
                  id: 'wamid.A',
                  timestamp: '1749416383',
                  type: 'text',
                  text: { body: 'Does it come in another color?' },
                },
                {
                  from: '16505551234',
                  id: 'wamid.B',
                  timestamp: '1749416384',
                  type: 'image',
                  image: { id: 'm1', mime_type: 'image/jpeg', caption: 'my office' },
                },
                { from: '16505551234', id: 'wamid.C', timestamp: '1749416385', type: 'sticker', sticker: { id: 'm2' } },
                {
                  from: '16505551234',
                  id: 'wamid.D',
                  timestamp: '1749416386',
                  type: 'button',
                  button: { payload: 'YES', text: 'Yes please' },
                },
                {
                  from: '16505551234',
                  id: 'wamid.E',
                  timestamp: '1749416387',
                  type: 'system',
                  system: { body: 'changed number' },
                },
              ],
            },
          },
          { field: 'message_template_status_update', value: { event: 'APPROVED' } },
        ],
      },
      {
        id: '2',
        changes: [
          {
            field: 'messages',
            value: {
              messaging_product: 'whatsapp',
              metadata,
              statuses: [
                {
                  id: 'wamid.S',
                  status: 'delivered',
                  timestamp: '1749416390',
                  recipient_id: '16505551234',
                  pricing: { billable: true },
                },
                {
                  id: 'wamid.S',
                  status: 'failed',
                  timestamp: '1749416391',
                  recipient_id: '16505551234',
                  errors: [
                    {
                      code: 131026,
                      title: 'Receiver is incapable of receiving this message',
                      message: 'Receiver is incapable of receiving this message',
                      error_data: { details: 'Message Undeliverable.' },
                    },
                  ],
                },
                { id: 'wamid.S', status: 'deleted', timestamp: '1749416392', recipient_id: '16505551234' },
              ],
            },
          },
          {
            field: 'messages',
            value: { messaging_product: 'whatsapp', metadata, errors: [{ code: 130429, title: 'Rate limit hit' }] },
          },
        ],
      },
    ],
  };

  it('turns one body with several entries, changes, messages and statuses into events in order', () => {
    const at = (s: number) => new Date(s * 1000);
    const msg = (id: string, text: string, s: number) => ({
      type: 'message',
      providerMessageId: id,
      from: '+16505551234',
      to: '106540352242922',
      text,
      receivedAt: at(s),
    });
    assert.deepEqual(parseMetaWebhook(Buffer.from(JSON.stringify(batch))), [
      msg('wamid.A', 'Does it come in another color?', 1749416383),
      msg('wamid.B', '[image] my office', 1749416384),
      msg('wamid.C', '[sticker]', 1749416385),
      msg('wamid.D', 'Yes please', 1749416386),
      { type: 'status', providerMessageId: 'wamid.S', status: 'delivered', at: at(1749416390) },
      {
        type: 'status',
        providerMessageId: 'wamid.S',
        status: 'failed',
        errorCode: '131026',
        errorMessage: 'Receiver is incapable of receiving this message: Message Undeliverable.',
        at: at(1749416391),
      },
    ]);
  });

  it("rejects bodies that are not JSON or not Meta's shape", () => {
    assert.throws(() => parseMetaWebhook('{'), { code: 'invalid_json' });
    assert.throws(() => parseMetaWebhook(JSON.stringify({ ...batch, object: 'page' })), { code: 'validation_failed' });
    const noTimestamp = structuredClone(batch);
    delete (noTimestamp.entry[0]!.changes[0]!.value as { messages: Array<{ timestamp?: string }> }).messages[0]!
      .timestamp;
    assert.throws(
      () => parseMetaWebhook(JSON.stringify(noTimestamp)),
      (err: { code: string; details: { issues: Array<{ path: string[] }> } }) => {
        assert.equal(err.code, 'validation_failed');
        assert.deepEqual(err.details.issues[0]!.path, [
          'entry',
          '0',
          'changes',
          '0',
          'value',
          'messages',
          '0',
          'timestamp',
        ]);
        return true;
      },
    );
  });
});

// Text PostgreSQL cannot store (NUL, lone UTF-16 surrogates) through the real endpoints: the
// public API refuses it with a 400 naming the field; what providers send is stored repaired and
// noted on the lead's timeline. Property-based (fast-check): arbitrary Unicode in every string
// field of the public API and of each provider's webhook never gets a 5xx.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import fc from 'fast-check';
import { signCalcomBody, CALCOM_SIGNATURE_HEADER } from '../../src/scheduling/calcom/calcom-signature.ts';
import { META_SIM } from '../../src/simulators/meta/meta-simulator.ts';
import { serverSecretOf } from '../../src/voice/vapi/vapi-server-settings.ts';
import { META_SIGNATURE_HEADER, signMetaBody } from '../../src/whatsapp/meta/meta-signature.ts';
import { computeTwilioSignature } from '../../src/whatsapp/twilio/twilio-signature.ts';
import { insertLead, leadEvents } from '../helpers/agent-harness.ts';
import { getLead, postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { VAPI } from '../helpers/voice-harness.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

let h: WhatsappHarness;
let tw: { slug: string; apiKey: string; workspaceId: string };
let mt: { slug: string; apiKey: string; workspaceId: string };
let voice: { slug: string; workspaceId: string; secret: string };
const CAL_SECRET = 'whsec-bad-input-0123456789';

before(async () => {
  h = await startWhatsappHarness();
  tw = await h.workspace('twilio', {
    scheduling: { provider: 'calcom', apiKey: h.calcom.apiKey, eventTypeId: 1001, webhookSecret: CAL_SECRET },
  });
  mt = await h.workspace('meta');
  const v = await h.app.createWorkspace('voice', { voice: VAPI });
  voice = { slug: v.slug, workspaceId: v.workspaceId, secret: serverSecretOf(v.workspaceId, VAPI) };
});
after(() => h.close());

/** Arbitrary Unicode, with NUL and lone surrogates (high, low, and a pair cut in half) made likely. */
const hostileChar = fc.oneof(
  fc.constantFrom(
    '\u0000',
    '\ud800',
    '\udbff',
    '\udc00',
    '\udfff',
    '\ud83d',
    '\ude00',
    '😀',
    'é',
    '\u200b',
    '\ufeff',
    '\\',
    '"',
    '%',
  ),
  fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }),
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
);
const hostile = fc.string({ unit: hostileChar, minLength: 1, maxLength: 30 });
const RUNS = 25;

const NUL_MESSAGE = 'Text must not contain the NUL character (\\u0000).';
const SURROGATE_MESSAGE =
  'Text must be valid Unicode: a lone UTF-16 surrogate (\\uD800 to \\uDFFF without its pair) cannot be stored.';

describe('public API: text PostgreSQL cannot store is a 400 naming the field', () => {
  test("a lone surrogate in name (the outside review's 500) and anywhere else", async () => {
    const res = await postLead(h.app.http, tw.apiKey, {
      ...validLead(),
      name: '\ud800',
      goal: 'ok \udfff',
      metadata: { deep: { list: ['fine', 'a\ud83d'] }, 'k\ude00': 1 },
      formResponses: { q1: '\udbff' },
    });
    assert.equal(res.status, 400);
    assert.equal(res.body.error, 'Validation failed.');
    assert.deepEqual(res.body.issues, [
      { path: ['name'], message: SURROGATE_MESSAGE },
      { path: ['goal'], message: SURROGATE_MESSAGE },
      { path: ['metadata', 'deep', 'list', '1'], message: SURROGATE_MESSAGE },
      { path: ['metadata', 'k\ude00'], message: SURROGATE_MESSAGE },
      { path: ['formResponses', 'q1'], message: SURROGATE_MESSAGE },
    ]);
    const nul = await postLead(h.app.http, tw.apiKey, { ...validLead(), name: 'x\u0000y' });
    assert.deepEqual(nul.body.issues, [{ path: ['name'], message: NUL_MESSAGE }]);
  });

  test('a proper surrogate pair (an emoji) is stored and read back as sent', async () => {
    const res = await postLead(
      h.app.http,
      tw.apiKey,
      validLead({ name: 'Ada 😀', goal: '𝄞 music', metadata: { '😀': '😀' } }),
    );
    assert.equal(res.status, 201);
    const read = await getLead(h.app.http, tw.apiKey, res.body.leadId);
    assert.equal(read.body.lead.name, 'Ada 😀');
    assert.deepEqual(read.body.lead.metadata, { '😀': '😀' });
  });

  const fields: Array<[string, (s: string) => Record<string, unknown>]> = [
    ['name', (s) => ({ name: s })],
    ['phone', (s) => ({ phone: s })],
    ['email', (s) => ({ email: s })],
    ['goal', (s) => ({ goal: s })],
    ['metadata value', (s) => ({ metadata: { k: s } })],
    ['metadata key', (s) => ({ metadata: { [s]: 'v' } })],
    ['metadata, nested', (s) => ({ metadata: { a: [{ [s]: [s] }] } })],
    ['formResponses key', (s) => ({ formResponses: { [s]: 'answer' } })],
    ['formResponses value', (s) => ({ formResponses: { q1: s } })],
  ];
  for (const [field, body] of fields) {
    test(`arbitrary Unicode in ${field}: never a 5xx, and a 201's text reads back unchanged`, async () => {
      await fc.assert(
        fc.asyncProperty(hostile, async (s) => {
          const res = await postLead(h.app.http, tw.apiKey, validLead(body(s)));
          assert.ok([201, 400].includes(res.status), `${res.status} ${JSON.stringify(res.body)}`);
          if (res.status === 400) assert.equal(res.body.error, 'Validation failed.');
          if (res.status === 201 && field === 'name')
            assert.equal((await getLead(h.app.http, tw.apiKey, res.body.leadId)).body.lead.name, s);
        }),
        { numRuns: RUNS },
      );
    });
  }
});

/** A lead of `workspaceId` with a phone the providers will write from. */
async function knownLead(workspaceId: string): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const leadId = await insertLead(h.app.db.pool, workspaceId, { phone: raw, status: 'in_conversation' });
  return { leadId, phone: `+${raw.replace(/\D/g, '')}` };
}

const inboundTexts = async (leadId: string) =>
  (
    await h.app.db.pool.query(
      `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound' ORDER BY id`,
      [leadId],
    )
  ).rows.map((r) => r.body);
const repairs = async (leadId: string) =>
  (await leadEvents(h.app.db.pool, leadId)).filter((e) => e.type === 'text.repaired');

let sid = 0;
async function twilioInbound(fields: Record<string, string>): Promise<number> {
  const url = `${h.baseUrl}/api/whatsapp/twilio/${tw.slug}/inbound`;
  const wire = new URLSearchParams(fields).toString();
  // Twilio signs the parameters as they travel (UTF-8): sign what the service will decode.
  const signature = computeTwilioSignature(h.twilio.authToken, url, new URLSearchParams(wire));
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body: wire,
  });
  await res.arrayBuffer();
  return res.status;
}
const twilioMessage = (from: string, body: string, extra: Record<string, string> = {}) => {
  const id = `SM${String(++sid).padStart(32, '0')}`;
  return {
    MessageSid: id,
    AccountSid: h.twilio.accountSid,
    From: `whatsapp:${from}`,
    To: `whatsapp:${h.twilio.sender}`,
    Body: body,
    NumMedia: '0',
    ProfileName: 'Ada',
    ...extra,
  };
};

async function metaWebhook(body: unknown): Promise<number> {
  const text = JSON.stringify(body);
  const res = await fetch(`${h.baseUrl}/api/whatsapp/meta/${mt.slug}/webhook`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [META_SIGNATURE_HEADER]: signMetaBody(META_SIM.appSecret, text) },
    body: text,
  });
  await res.arrayBuffer();
  return res.status;
}
let wamid = 0;
const metaMessage = (from: string, text: string, profileName = 'Ada') => ({
  object: 'whatsapp_business_account',
  entry: [
    {
      id: 'WABA',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: { display_phone_number: '15550000000', phone_number_id: META_SIM.phoneNumberId },
            contacts: [{ profile: { name: profileName }, wa_id: from.slice(1) }],
            messages: [
              {
                from: from.slice(1),
                id: `wamid.bad-input-${++wamid}`,
                timestamp: '1790000000',
                type: 'text',
                text: { body: text },
              },
            ],
          },
        },
      ],
    },
  ],
});

describe("WhatsApp webhooks: a provider's text is stored repaired, never refused", () => {
  test(
    'Twilio: a signed message "x\\u0000y" from a known lead is 200, ' +
      'stored as "xy", and the repair is on the timeline',
    async () => {
      const { leadId, phone } = await knownLead(tw.workspaceId);
      assert.equal(await twilioInbound(twilioMessage(phone, 'x\u0000y', { ProfileName: 'A\u0000da' })), 200);
      assert.deepEqual(await inboundTexts(leadId), ['xy']);
      const [repair] = await repairs(leadId);
      assert.equal(repair?.data.provider, 'twilio');
      assert.equal(repair?.data.what, 'whatsapp message');
    },
  );

  test('Meta: the same, and a lone surrogate becomes U+FFFD', async () => {
    const { leadId, phone } = await knownLead(mt.workspaceId);
    assert.equal(await metaWebhook(metaMessage(phone, 'x\u0000y')), 200);
    assert.equal(await metaWebhook(metaMessage(phone, 'half \ud83d of an emoji', 'Ad\udc00a')), 200);
    assert.deepEqual(await inboundTexts(leadId), ['xy', 'half \ufffd of an emoji']);
    assert.equal((await repairs(leadId)).length, 2);
  });

  test('a clean message notes nothing', async () => {
    const { leadId, phone } = await knownLead(mt.workspaceId);
    assert.equal(await metaWebhook(metaMessage(phone, 'plain 😀')), 200);
    assert.deepEqual(await inboundTexts(leadId), ['plain 😀']);
    assert.equal((await repairs(leadId)).length, 0);
  });

  test('Twilio: arbitrary Unicode in every field never gets a 5xx', async () => {
    const { phone } = await knownLead(tw.workspaceId);
    const names = ['Body', 'ProfileName', 'ButtonText', 'MessageSid', 'From', 'To', 'NumMedia'] as const;
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...names), hostile, async (name, s) => {
        const status = await twilioInbound({ ...twilioMessage(phone, 'hello'), [name]: s });
        assert.ok(status < 500, `${name}: ${status}`);
      }),
      { numRuns: RUNS * 2 },
    );
  });

  test('Meta: arbitrary Unicode in every field never gets a 5xx', async () => {
    const { phone } = await knownLead(mt.workspaceId);
    type Body = ReturnType<typeof metaMessage>;
    const places: Array<(b: Body, s: string) => void> = [
      (b, s) => void (b.entry[0]!.changes[0]!.value.messages[0]!.text.body = s),
      (b, s) => void (b.entry[0]!.changes[0]!.value.contacts[0]!.profile.name = s),
      (b, s) => void (b.entry[0]!.changes[0]!.value.messages[0]!.id = s),
      (b, s) => void (b.entry[0]!.changes[0]!.value.messages[0]!.from = s),
      (b, s) => void (b.entry[0]!.changes[0]!.value.messages[0]!.type = s),
      (b, s) => void ((b.entry[0]!.changes[0]!.value.metadata as { phone_number_id: string }).phone_number_id = s),
      (b, s) => void (b.entry[0]!.changes[0]!.field = s),
      (b, s) => void ((b.entry[0]!.changes[0]!.value.messages[0] as Record<string, unknown>)[s] = s),
    ];
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: places.length - 1 }), hostile, async (i, s) => {
        const body = metaMessage(phone, 'hello');
        places[i]!(body, s);
        const status = await metaWebhook(body);
        assert.ok(status < 500, `place ${i}: ${status}`);
      }),
      { numRuns: RUNS * 2 },
    );
  });
});

async function vapi(body: unknown): Promise<number> {
  const res = await h.app.http.inject({
    method: 'POST',
    url: `/api/vapi/${voice.slug}/events`,
    headers: { 'content-type': 'application/json', 'x-vapi-secret': voice.secret },
    payload: JSON.stringify(body),
  });
  return res.statusCode;
}
let callNo = 0;
const report = (leadId: string, r: { summary: string; said: string; endedReason?: string }) => ({
  message: {
    type: 'end-of-call-report',
    timestamp: Date.parse('2026-11-22T10:05:00Z'),
    endedReason: r.endedReason ?? 'customer-ended-call',
    call: {
      id: `call-bad-input-${++callNo}`,
      assistantOverrides: { metadata: { leadId, workspaceId: voice.workspaceId } },
    },
    artifact: {
      messages: [
        { role: 'bot', message: 'Hello' },
        { role: 'user', message: r.said },
      ],
      transcript: `AI: Hello\nUser: ${r.said}`,
    },
    analysis: { summary: r.summary },
  },
});

describe('Vapi and Cal.com: stored repaired, never refused', () => {
  test(
    'Vapi: an end-of-call report with NUL and a lone surrogate is ' + 'applied; summary and transcript repaired; noted',
    async () => {
      const leadId = await insertLead(h.app.db.pool, voice.workspaceId, { status: 'in_conversation' });
      assert.equal(await vapi(report(leadId, { summary: 'x\u0000y', said: 'half \ud83d' })), 200);
      const { rows } = await h.app.db.pool.query('SELECT summary, transcript FROM call_sessions WHERE lead_id = $1', [
        leadId,
      ]);
      assert.equal(rows[0].summary, 'xy');
      assert.match(rows[0].transcript, /Lead: half \ufffd/);
      const [repair] = await repairs(leadId);
      assert.equal(repair?.data.provider, 'vapi');
    },
  );

  test('Vapi: arbitrary Unicode in summary, transcript, messages and ended reason never gets a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(hostile, hostile, hostile, async (summary, said, endedReason) => {
        const leadId = await insertLead(h.app.db.pool, voice.workspaceId, { status: 'in_conversation' });
        const status = await vapi(report(leadId, { summary, said, endedReason }));
        assert.ok(status < 500, String(status));
      }),
      { numRuns: RUNS },
    );
  });

  let booking = 0;
  async function cancel(reason: string): Promise<{ status: number; leadId: string }> {
    const leadId = await insertLead(h.app.db.pool, tw.workspaceId, { status: 'booked' });
    const uid = `bad-input-booking-${++booking}`;
    await h.app.db.pool.query('UPDATE leads SET booking_uid = $2, booking_start = now() WHERE id = $1', [leadId, uid]);
    const text = JSON.stringify({
      triggerEvent: 'BOOKING_CANCELLED',
      createdAt: new Date().toISOString(),
      payload: { uid, cancellationReason: reason, attendees: [{ name: reason }] },
    });
    const res = await h.app.http.inject({
      method: 'POST',
      url: `/api/webhooks/calcom/${tw.slug}`,
      headers: { 'content-type': 'application/json', [CALCOM_SIGNATURE_HEADER]: signCalcomBody(CAL_SECRET, text) },
      payload: text,
    });
    return { status: res.statusCode, leadId };
  }

  test('Cal.com: a cancellation reason with NUL is applied, stored as "xy", and noted', async () => {
    const { status, leadId } = await cancel('x\u0000y');
    assert.equal(status, 200);
    const events = await leadEvents(h.app.db.pool, leadId);
    assert.equal(events.find((e) => e.type === 'booking.cancelled')?.data.reason, 'xy');
    assert.equal(events.filter((e) => e.type === 'text.repaired').length, 1);
  });

  test('Cal.com: arbitrary Unicode in the reason never gets a 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(hostile, async (reason) => {
        const { status } = await cancel(reason);
        assert.ok(status < 500, String(status));
      }),
      { numRuns: RUNS },
    );
  });
});

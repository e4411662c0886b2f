// The Twilio simulator end to end: the real client sends, a tiny local HTTP server stands in for
// our webhook routes, and every callback must verify with twilio-signature against its URL.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { PERSONA_PHRASES, type LeadPersonaName } from '../../src/simulators/personas/lead-personas.ts';
import type { SendMessageRequest } from '../../src/whatsapp/messaging-provider.ts';
import { TWILIO_STATUS_KEY_PARAM, TwilioClient } from '../../src/whatsapp/twilio/twilio-client.ts';
import {
  TWILIO_SIGNATURE_HEADER,
  twilioWebhookUrl,
  verifyTwilioSignature,
} from '../../src/whatsapp/twilio/twilio-signature.ts';
import {
  startTwilioSimulator,
  WINDOW_MS,
  type TwilioSimulatorOptions,
} from '../../src/simulators/twilio/twilio-simulator.ts';
import {
  parseTwilioForm,
  parseTwilioInbound,
  parseTwilioStatus,
} from '../../src/whatsapp/twilio/twilio-webhook-parse.ts';
import { TestClock } from '../helpers/test-app.ts';

const LEAD = '+15550002222';
const EPOCH = new Date(0);

interface Hit {
  path: string;
  url: string;
  signature: string | undefined;
  contentType: string | undefined;
  params: URLSearchParams;
}

/** Our webhook routes' stand-in: records each POST; answers TwiML to inbound and 204 to statuses. */
async function startReceiver(t: TestContext) {
  const hits: Hit[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const signature = req.headers[TWILIO_SIGNATURE_HEADER];
      hits.push({
        path: new URL(req.url ?? '/', 'http://x').pathname,
        url: req.url ?? '/',
        contentType: req.headers['content-type'],
        signature: typeof signature === 'string' ? signature : undefined,
        params: parseTwilioForm(Buffer.concat(chunks)),
      });
      if (req.url?.includes('/inbound'))
        res.writeHead(200, { 'content-type': 'text/xml' }).end('<?xml version="1.0" encoding="UTF-8"?><Response/>');
      else res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    base,
    hits,
    inboundUrl: `${base}/api/whatsapp/twilio/acme/inbound`,
    statusUrl: `${base}/api/whatsapp/twilio/acme/status`,
    inbound: () => hits.filter((h) => h.path.endsWith('/inbound')),
    statuses: () => hits.filter((h) => h.path.endsWith('/status')),
  };
}

async function setup(t: TestContext, simOpts: TwilioSimulatorOptions = {}) {
  const receiver = await startReceiver(t);
  const clock = new TestClock();
  const sim = await startTwilioSimulator({ now: clock.read, ...simOpts });
  t.after(() => sim.close());
  const client = new TwilioClient({
    baseUrl: sim.url,
    accountSid: sim.accountSid,
    authToken: sim.authToken,
    from: sim.sender,
    templateContentSid: sim.templateSid,
    statusCallbackUrl: receiver.statusUrl,
    timeoutMs: 2000,
  });
  /** Verifies a hit the way our routes will: PUBLIC_BASE_URL (here the receiver) + path and query. */
  const verified = (hit: Hit) =>
    verifyTwilioSignature(sim.authToken, twilioWebhookUrl(receiver.base, hit.url), hit.params, hit.signature);
  return { sim, client, receiver, clock, verified };
}

const firstContact = (key = 'k0'): SendMessageRequest => ({
  to: LEAD,
  content: { kind: 'template', variables: ['Ada'] },
  idempotencyKey: key,
});
const say = (text: string, key = 'k1'): SendMessageRequest => ({
  to: LEAD,
  content: { kind: 'text', text },
  idempotencyKey: key,
});

test(
  'template first contact: signed queued → sent → delivered callbacks, ' +
    'then the persona answers on the signed inbound webhook',
  async (t) => {
    const { sim, client, receiver, verified } = await setup(t);
    sim.setPersona(LEAD, 'books', { inboundUrl: receiver.inboundUrl, profileName: 'Ada L.' });
    const sent = await client.send(firstContact());
    assert.ok(sent.ok);
    await sim.idle();
    assert.equal(sim.pending, 0);

    const statuses = receiver.statuses();
    assert.deepEqual(
      statuses.map((h) => h.params.get('MessageStatus')),
      ['queued', 'sent', 'delivered'],
    );
    for (const hit of statuses) {
      assert.ok(verified(hit), 'status callback signature verifies');
      assert.equal(hit.contentType, 'application/x-www-form-urlencoded; charset=utf-8');
      assert.equal(new URLSearchParams(hit.url.split('?')[1]).get(TWILIO_STATUS_KEY_PARAM), 'k0');
      const event = parseTwilioStatus(hit.params, EPOCH);
      assert.equal(event?.providerMessageId, sent.providerMessageId);
      assert.equal(event?.errorCode, undefined);
      assert.equal(hit.params.get('ChannelPrefix'), 'whatsapp');
      assert.equal(hit.params.get('To'), `whatsapp:${LEAD}`);
    }

    const [reply, ...more] = receiver.inbound();
    assert.equal(more.length, 0);
    assert.ok(reply && verified(reply), 'inbound webhook signature verifies');
    assert.equal(reply.params.get('ProfileName'), 'Ada L.');
    assert.equal(reply.params.get('WaId'), LEAD.slice(1));
    assert.equal(reply.params.get('NumMedia'), '0');
    assert.equal(reply.params.get('AccountSid'), sim.accountSid);
    assert.equal(reply.params.get('SmsStatus'), 'received');
    const event = parseTwilioInbound(reply.params, EPOCH);
    assert.equal(event.from, LEAD);
    assert.equal(event.to, sim.sender);
    assert.equal(event.text, PERSONA_PHRASES.answer);
    assert.match(event.providerMessageId, /^SM[0-9a-f]{32}$/);

    // A signature checked against another URL (a wrong PUBLIC_BASE_URL) or another token fails.
    assert.equal(
      verifyTwilioSignature(
        sim.authToken,
        twilioWebhookUrl('https://elsewhere.test', reply.url),
        reply.params,
        reply.signature,
      ),
      false,
    );
    assert.equal(
      verifyTwilioSignature('other-token', twilioWebhookUrl(receiver.base, reply.url), reply.params, reply.signature),
      false,
    );

    // The resource GET answers reflects the last status.
    assert.equal(sim.messages[0]!.resource.status, 'delivered');
    assert.deepEqual(sim.messages[0]!.statuses, ['queued', 'sent', 'delivered']);
  },
);

test('the "books" persona picks the first offered slot, then goes quiet after the confirmation', async (t) => {
  const { sim, client, receiver } = await setup(t);
  sim.setPersona(LEAD, 'books', { inboundUrl: receiver.inboundUrl });
  await client.send(firstContact());
  await sim.idle();
  await client.send(say('Great. I can offer:\n1) Tue 3 Dec, 10:00\n2) Wed 4 Dec, 14:00'));
  await sim.idle();
  await client.send(say('You are booked for Tue 3 Dec, 10:00. See you then!'));
  await sim.idle();
  assert.deepEqual(
    receiver.inbound().map((h) => h.params.get('Body')),
    [PERSONA_PHRASES.answer, PERSONA_PHRASES.pickFirstSlot],
  );
  assert.equal(sim.messages.length, 3);
  assert.ok(sim.messages.every((m) => m.statuses.at(-1) === 'delivered'));
});

test('every persona answers the first contact its own way; goes-quiet posts nothing', async (t) => {
  const { sim, client, receiver } = await setup(t);
  const expected: Record<LeadPersonaName, string | undefined> = {
    books: PERSONA_PHRASES.answer,
    'not-a-fit': PERSONA_PHRASES.notAFit,
    'wants-human': PERSONA_PHRASES.wantsHuman,
    'opts-out': 'STOP',
    'goes-quiet': undefined,
    'breaks-model': PERSONA_PHRASES.breaksModel,
  };
  for (const [i, [persona, reply]] of Object.entries(expected).entries()) {
    const phone = `+1555000300${i}`;
    sim.setPersona(phone, persona as LeadPersonaName, { inboundUrl: receiver.inboundUrl });
    assert.ok((await client.send({ ...firstContact(), to: phone })).ok);
    await sim.idle();
    const replies = receiver.inbound().filter((h) => h.params.get('From') === `whatsapp:${phone}`);
    assert.deepEqual(
      replies.map((h) => h.params.get('Body')),
      reply === undefined ? [] : [reply],
      persona,
    );
  }
});

test(
  '24-hour window: a free-form text without an inbound message is ' + 'accepted, then fails with 63016 in the callback',
  async (t) => {
    const { sim, client, receiver, clock, verified } = await setup(t);
    sim.setPersona(LEAD, 'books', { inboundUrl: receiver.inboundUrl });
    const result = await client.send(say('Hello, are you there?'));
    assert.ok(result.ok, 'Twilio accepts the create (201 queued) and fails the message later');
    await sim.idle();
    const statuses = receiver.statuses();
    assert.deepEqual(
      statuses.map((h) => h.params.get('MessageStatus')),
      ['queued', 'failed'],
    );
    const failed = statuses[1]!;
    assert.ok(verified(failed));
    assert.deepEqual(parseTwilioStatus(failed.params, EPOCH), {
      type: 'status',
      providerMessageId: result.providerMessageId,
      status: 'failed',
      at: EPOCH,
      errorCode: '63016',
      errorMessage:
        'Failed to send freeform message because you are outside the allowed ' +
        'window. If you are using WhatsApp, please use a Message Template.',
    });
    assert.equal(receiver.inbound().length, 0, 'a lead never sees a failed message, so the persona does not answer');
    assert.equal(sim.messages[0]!.resource.error_code, 63016);

    // The lead writes: the window opens; 24 hours later to the millisecond it is closed again. (No
    // persona meanwhile: its replies would reopen the window.)
    sim.clearPersona(LEAD);
    const delivery = await sim.leadSays(LEAD, 'Hi, I filled in your form', { inboundUrl: receiver.inboundUrl });
    assert.equal(delivery.httpStatus, 200);
    assert.ok(verified(receiver.inbound()[0]!));
    clock.advance(WINDOW_MS - 1);
    assert.ok((await client.send(say('Thanks for writing!'))).ok);
    await sim.idle();
    assert.equal(sim.messages[1]!.statuses.at(-1), 'delivered');
    clock.advance(1);
    await client.send(say('Still there?'));
    await sim.idle();
    assert.deepEqual(sim.messages[2]!.statuses, ['queued', 'failed']);
    // A template is always allowed, and the persona's reply reopens the window for free-form text.
    sim.setPersona(LEAD, 'books', { inboundUrl: receiver.inboundUrl });
    await client.send(firstContact());
    await sim.idle();
    await client.send(say('Thanks! Next question.'));
    await sim.idle();
    assert.equal(sim.messages[4]!.statuses.at(-1), 'delivered');
  },
);

test('injected delivery failures: undelivered after sent, with the error code; no reply', async (t) => {
  const { sim, client, receiver } = await setup(t);
  sim.setPersona(LEAD, 'books', { inboundUrl: receiver.inboundUrl });
  sim.failNextDeliveries(1, {
    status: 'undelivered',
    errorCode: 63003,
    errorMessage: 'Channel could not find To address',
  });
  await client.send(firstContact());
  await sim.idle();
  const events = receiver.statuses().map((h) => parseTwilioStatus(h.params, EPOCH));
  assert.deepEqual(
    events.map((e) => [e?.status, e?.errorCode]),
    [
      ['queued', undefined],
      ['sent', undefined],
      ['undelivered', '63003'],
    ],
  );
  assert.equal(receiver.inbound().length, 0);
  await client.send(firstContact());
  await sim.idle();
  assert.equal(receiver.inbound().length, 1, 'only the next send was failed');
});

test('idle() also awaits delayed callbacks and replies (no sleeping in the test)', async (t) => {
  const { sim, client, receiver } = await setup(t, { statusDelayMs: 5, replyDelayMs: 5 });
  sim.setPersona(LEAD, 'wants-human', { inboundUrl: receiver.inboundUrl });
  await client.send(firstContact());
  assert.ok(sim.pending > 0);
  await sim.idle();
  assert.equal(receiver.statuses().length, 3);
  assert.equal(receiver.inbound()[0]?.params.get('Body'), PERSONA_PHRASES.wantsHuman);
});

test('without a StatusCallback the message still moves through its statuses, silently', async (t) => {
  const { sim, receiver } = await setup(t);
  const client = new TwilioClient({
    baseUrl: sim.url,
    accountSid: sim.accountSid,
    authToken: sim.authToken,
    from: sim.sender,
    templateContentSid: sim.templateSid,
    timeoutMs: 2000,
  });
  await client.send(firstContact());
  await sim.idle();
  assert.equal(receiver.hits.length, 0);
  assert.deepEqual(sim.messages[0]!.statuses, ['queued', 'sent', 'delivered']);
});

test('setPersona needs an inbound URL; the simulator-wide default serves every persona', async (t) => {
  const receiver = await startReceiver(t);
  const bare = await startTwilioSimulator();
  t.after(() => bare.close());
  assert.throws(() => bare.setPersona(LEAD, 'books'), /no inboundUrl/);
  const sim = await startTwilioSimulator({ inboundUrl: receiver.inboundUrl });
  t.after(() => sim.close());
  sim.setPersona(LEAD, 'opts-out');
  const client = new TwilioClient({
    baseUrl: sim.url,
    accountSid: sim.accountSid,
    authToken: sim.authToken,
    from: sim.sender,
    templateContentSid: sim.templateSid,
    timeoutMs: 2000,
  });
  await client.send(firstContact());
  await sim.idle();
  assert.equal(receiver.inbound()[0]?.params.get('Body'), 'STOP');
});

test('close() while callbacks are queued returns promptly and posts nothing more', async (t) => {
  const receiver = await startReceiver(t);
  const sim = await startTwilioSimulator({ statusDelayMs: 60_000 });
  const client = new TwilioClient({
    baseUrl: sim.url,
    accountSid: sim.accountSid,
    authToken: sim.authToken,
    from: sim.sender,
    templateContentSid: sim.templateSid,
    statusCallbackUrl: receiver.statusUrl,
    timeoutMs: 2000,
  });
  await client.send(firstContact());
  assert.ok(sim.pending > 0);
  await sim.close();
  assert.equal(sim.pending, 0);
  assert.equal(receiver.hits.length, 0);
});

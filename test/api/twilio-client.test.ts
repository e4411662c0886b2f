// The real TwilioClient against the local Twilio simulator, over HTTP.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import type { SendMessageRequest } from '../../src/whatsapp/messaging-provider.ts';
import {
  TWILIO_STATUS_KEY_PARAM,
  TwilioClient,
  type TwilioClientOptions,
} from '../../src/whatsapp/twilio/twilio-client.ts';
import { classifyTwilioError } from '../../src/whatsapp/twilio/twilio-errors.ts';
import {
  SIM_TEMPLATE_SID,
  startTwilioSimulator,
  type TwilioSimulatorOptions,
} from '../../src/simulators/twilio/twilio-simulator.ts';

const LEAD = '+15550001111';
// A closed local port: the simulator's callbacks fail fast and never leave the machine.
const STATUS_URL = 'http://127.0.0.1:9/api/whatsapp/twilio/acme/status';

async function setup(
  t: TestContext,
  simOpts: TwilioSimulatorOptions = {},
  clientOpts: Partial<TwilioClientOptions> = {},
) {
  const sim = await startTwilioSimulator(simOpts);
  t.after(() => sim.close());
  const client = new TwilioClient({
    baseUrl: sim.url,
    accountSid: sim.accountSid,
    authToken: sim.authToken,
    from: sim.sender,
    templateContentSid: sim.templateSid,
    timeoutMs: 2000,
    ...clientOpts,
  });
  return { sim, client };
}

const template = (overrides: Partial<SendMessageRequest> = {}): SendMessageRequest => ({
  to: LEAD,
  content: { kind: 'template', variables: ['Ada'] },
  idempotencyKey: 'lead-1:0',
  ...overrides,
});
const text = (body: string): SendMessageRequest => ({
  to: LEAD,
  content: { kind: 'text', text: body },
  idempotencyKey: 'lead-1:1',
});

test('a template send posts the exact form with Basic auth and returns the message sid', async (t) => {
  const { sim, client } = await setup(t);
  const result = await client.send(template());
  assert.ok(result.ok, JSON.stringify(result));
  assert.match(result.providerMessageId, /^SM[0-9a-f]{32}$/);
  assert.equal(client.name, 'twilio');

  const req = sim.requests[0]!;
  assert.equal(req.method, 'POST');
  assert.equal(req.path, `/2010-04-01/Accounts/${sim.accountSid}/Messages.json`);
  assert.equal(req.authorization, `Basic ${Buffer.from(`${sim.accountSid}:${sim.authToken}`).toString('base64')}`);
  assert.deepEqual(req.params, {
    To: `whatsapp:${LEAD}`,
    From: `whatsapp:${sim.sender}`,
    ContentSid: SIM_TEMPLATE_SID,
    ContentVariables: '{"1":"Ada"}',
  });
  const message = sim.messages[0]!;
  assert.equal(message.sid, result.providerMessageId);
  assert.equal(message.text, 'Hi Ada, thanks for your enquiry! Do you have a minute for a few quick questions?');
});

test(
  'the StatusCallback carries the idempotency key as a query ' + 'parameter; several variables keep their positions',
  async (t) => {
    const { sim, client } = await setup(
      t,
      { templates: { [SIM_TEMPLATE_SID]: '{{1}} at {{2}}' } },
      { statusCallbackUrl: `${STATUS_URL}?v=1` },
    );
    const result = await client.send(
      template({
        content: { kind: 'template', variables: ['Ada', 'Acme & Co "quoted"'] },
        idempotencyKey: 'lead 7/turn:2',
      }),
    );
    assert.ok(result.ok);
    const params = sim.requests[0]!.params;
    assert.equal(params.ContentVariables, '{"1":"Ada","2":"Acme & Co \\"quoted\\""}');
    const callback = new URL(params.StatusCallback!);
    assert.equal(callback.origin + callback.pathname, STATUS_URL);
    assert.equal(callback.searchParams.get('v'), '1');
    assert.equal(callback.searchParams.get(TWILIO_STATUS_KEY_PARAM), 'lead 7/turn:2');
    assert.equal(sim.messages[0]!.text, 'Ada at Acme & Co "quoted"');
  },
);

test(
  'a free-form text inside the window sends Body; outside it the ' +
    'REST-mode simulator answers 63016 → window_closed',
  async (t) => {
    const { sim, client } = await setup(t, { windowError: 'rest' });
    const closed = await client.send(text('Are you still there?'));
    assert.deepEqual(closed, {
      ok: false,
      kind: 'window_closed',
      code: 63016,
      httpStatus: 400,
      message:
        'Failed to send freeform message because you are outside the allowed ' +
        'window. If you are using WhatsApp, please use a Message Template.',
    });
    sim.openWindow(LEAD);
    const open = await client.send(text('Thanks! One more question: how many people?'));
    assert.ok(open.ok);
    assert.deepEqual(sim.requests.at(-1)!.params, {
      To: `whatsapp:${LEAD}`,
      From: `whatsapp:${sim.sender}`,
      Body: 'Thanks! One more question: how many people?',
    });
  },
);

test("wrong credentials: configuration failure with Twilio's message, never the token", async (t) => {
  const { sim, client } = await setup(t, {}, { authToken: 'wrong-token-0123456789' });
  const result = await client.send(template());
  assert.deepEqual(result, { ok: false, kind: 'configuration', message: 'Authenticate', code: 20003, httpStatus: 401 });
  assert.doesNotMatch(JSON.stringify(result), /wrong-token|0123456789/);
  assert.equal(sim.messages.length, 0);
  // A wrong account SID in the URL is refused the same way (the credentials no longer match).
  const other = new TwilioClient({
    baseUrl: sim.url,
    accountSid: 'AC00000000000000000000000000000000',
    authToken: sim.authToken,
    from: sim.sender,
    templateContentSid: sim.templateSid,
    timeoutMs: 2000,
  });
  const r2 = await other.send(template());
  assert.ok(!r2.ok);
  assert.equal(r2.kind, 'configuration');
  assert.equal(r2.code, 20003);
});

test('settings errors are configuration: unknown sender (63007), unknown template (21655)', async (t) => {
  const { sim } = await setup(t);
  const base = { baseUrl: sim.url, accountSid: sim.accountSid, authToken: sim.authToken, timeoutMs: 2000 };
  const badSender = await new TwilioClient({ ...base, from: '+15559998888', templateContentSid: sim.templateSid }).send(
    template(),
  );
  assert.deepEqual(badSender, {
    ok: false,
    kind: 'configuration',
    code: 63007,
    httpStatus: 400,
    message: 'Twilio could not find a Channel with the specified From address',
  });
  const badTemplate = await new TwilioClient({
    ...base,
    from: sim.sender,
    templateContentSid: 'HX00000000000000000000000000000000',
  }).send(template());
  assert.deepEqual(badTemplate, {
    ok: false,
    kind: 'configuration',
    code: 21655,
    httpStatus: 400,
    message: 'The ContentSid is Invalid.',
  });
});

test('recipient errors: an invalid number (21211), an injected not-on-WhatsApp (63003)', async (t) => {
  const { sim, client } = await setup(t);
  const invalid = await client.send(template({ to: '+12' }));
  assert.deepEqual(invalid, {
    ok: false,
    kind: 'recipient',
    code: 21211,
    httpStatus: 400,
    message: "The 'To' number whatsapp:+12 is not a valid phone number.",
  });
  sim.failNextSends(1, { status: 400, code: 63003 });
  const notOnWhatsapp = await client.send(template());
  assert.ok(!notOnWhatsapp.ok);
  assert.equal(notOnWhatsapp.kind, 'recipient');
  assert.equal(notOnWhatsapp.code, 63003);
});

test(
  'transient: 429 (20429), 5xx, a dropped connection; the ' + 'simulator recovers after the injected count',
  async (t) => {
    const { sim, client } = await setup(t);
    sim.failNextSends(2, { status: 429, code: 20429 });
    assert.deepEqual(await client.send(template()), {
      ok: false,
      kind: 'transient',
      code: 20429,
      httpStatus: 429,
      message: 'Too Many Requests',
    });
    assert.equal((await client.send(template())).ok, false);
    assert.equal((await client.send(template())).ok, true);
    sim.failNextSends(1, { status: 503, code: 20503, message: 'Service Unavailable' });
    const unavailable = await client.send(template());
    assert.ok(!unavailable.ok);
    assert.equal(unavailable.kind, 'transient');
    sim.failNextSends(1, { hangUp: true });
    const dropped = await client.send(template());
    assert.ok(!dropped.ok);
    assert.equal(dropped.kind, 'transient');
    assert.match(dropped.message, /^Could not reach Twilio \(.+\)\.$/);
    assert.equal(dropped.httpStatus, undefined);
  },
);

test('a server that answers with non-JSON or not at all', async (t) => {
  let mode: 'html-502' | 'html-400' | 'no-sid' | 'silent' = 'html-502';
  const server = http.createServer((req, res) => {
    req.resume();
    if (mode === 'html-502')
      return void res.writeHead(502, { 'content-type': 'text/html' }).end('<html>Bad Gateway</html>');
    if (mode === 'html-400') return void res.writeHead(400, { 'content-type': 'text/html' }).end('<html>nope</html>');
    if (mode === 'no-sid')
      return void res.writeHead(201, { 'content-type': 'application/json' }).end('{"status":"queued"}');
    // silent: never answer
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  const client = new TwilioClient({
    baseUrl: `http://127.0.0.1:${port}/`,
    accountSid: 'AC1',
    authToken: 'secret-token',
    from: '+15550000000',
    templateContentSid: 'HX1',
    timeoutMs: 150,
  });

  assert.deepEqual(await client.send(template()), {
    ok: false,
    kind: 'transient',
    message: 'Twilio answered 502 with a body that is not JSON.',
    httpStatus: 502,
  });
  mode = 'html-400';
  assert.deepEqual(await client.send(template()), {
    ok: false,
    kind: 'configuration',
    message: 'Twilio answered 400 with a body that is not JSON.',
    httpStatus: 400,
  });
  mode = 'no-sid';
  assert.deepEqual(await client.send(template()), {
    ok: false,
    kind: 'transient',
    message: 'Twilio answered 201 without a message sid.',
    httpStatus: 201,
  });
  mode = 'silent';
  assert.deepEqual(await client.send(template()), {
    ok: false,
    kind: 'transient',
    message: 'Twilio did not answer within 150 ms.',
  });
});

test('a malformed statusCallbackUrl fails at construction', () => {
  assert.throws(
    () =>
      new TwilioClient({
        accountSid: 'AC1',
        authToken: 't',
        from: '+1',
        templateContentSid: 'HX1',
        timeoutMs: 1,
        statusCallbackUrl: 'not a url',
      }),
  );
});

test('classifyTwilioError: codes first, then the HTTP status', () => {
  assert.equal(classifyTwilioError(63016), 'window_closed');
  assert.equal(classifyTwilioError(63016, 400), 'window_closed');
  for (const code of [20003, 21606, 21655, 21656, 63007])
    assert.equal(classifyTwilioError(code, 400), 'configuration', String(code));
  for (const code of [21211, 21614, 63003, 63024])
    assert.equal(classifyTwilioError(code, 400), 'recipient', String(code));
  for (const code of [20429, 63018]) assert.equal(classifyTwilioError(code, 429), 'transient', String(code));
  assert.equal(classifyTwilioError(undefined, 429), 'transient');
  assert.equal(classifyTwilioError(undefined, 500), 'transient');
  assert.equal(classifyTwilioError(99999, 503), 'transient');
  assert.equal(classifyTwilioError(99999, 400), 'configuration');
  assert.equal(classifyTwilioError(undefined, 401), 'configuration');
  // An unknown code in a status callback (no HTTP status): the message did not go out to this lead.
  assert.equal(classifyTwilioError(30008), 'recipient');
});

// The Twilio simulator's REST surface over plain HTTP: Twilio's error bodies byte for byte, the
// form validation and the message resource shape.
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import {
  SIM_TEMPLATE_SID,
  startTwilioSimulator,
  type TwilioSimulator,
} from '../../src/simulators/twilio/twilio-simulator.ts';

// Written out literally (not imported) so a drift in the simulator makes these tests fail.
const AUTHENTICATE =
  '{"code":20003,"message":"Authenticate","more_info":"https://www.twilio.com/docs/errors/20003","status":401}';
const LEAD = 'whatsapp:+15550004444';

async function setup(t: TestContext): Promise<{
  sim: TwilioSimulator;
  post: (
    form: Record<string, string> | string,
    init?: RequestInit,
  ) => Promise<{ status: number; text: string; json: any; headers: Headers }>;
}> {
  const sim = await startTwilioSimulator();
  t.after(() => sim.close());
  const auth = `Basic ${Buffer.from(`${sim.accountSid}:${sim.authToken}`).toString('base64')}`;
  const post = async (form: Record<string, string> | string, init: RequestInit = {}) => {
    const res = await fetch(`${sim.url}/2010-04-01/Accounts/${sim.accountSid}/Messages.json`, {
      method: 'POST',
      headers: { authorization: auth, 'content-type': 'application/x-www-form-urlencoded' },
      body: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
      ...init,
    });
    const text = await res.text();
    return { status: res.status, text, json: JSON.parse(text), headers: res.headers };
  };
  return { sim, post };
}

const error = (status: number, code: number, message: string) => ({
  code,
  message,
  more_info: `https://www.twilio.com/docs/errors/${code}`,
  status,
});

test("Basic auth: missing, wrong token or wrong user get Twilio's exact 401 body", async (t) => {
  const { sim, post } = await setup(t);
  const valid = {
    To: LEAD,
    From: `whatsapp:${sim.sender}`,
    ContentSid: SIM_TEMPLATE_SID,
    ContentVariables: '{"1":"Ada"}',
  };
  for (const authorization of [
    undefined,
    `Basic ${Buffer.from(`${sim.accountSid}:nope`).toString('base64')}`,
    `Bearer ${sim.authToken}`,
    'Basic !!!',
  ]) {
    const headers: Record<string, string> = { 'content-type': 'application/x-www-form-urlencoded' };
    if (authorization) headers.authorization = authorization;
    const res = await post(valid, { headers });
    assert.equal(res.status, 401);
    assert.equal(res.text, AUTHENTICATE);
    assert.equal(res.headers.get('www-authenticate'), 'Basic realm="Twilio API"');
  }
  assert.equal(sim.messages.length, 0);
});

test('the 201 resource has the shape Twilio returns', async (t) => {
  const { sim, post } = await setup(t);
  const res = await post({
    To: LEAD,
    From: `whatsapp:${sim.sender}`,
    ContentSid: SIM_TEMPLATE_SID,
    ContentVariables: '{"1":"Ada"}',
  });
  assert.equal(res.status, 201);
  assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
  assert.match(res.headers.get('twilio-request-id') ?? '', /^RQ[0-9a-f]{32}$/);
  const m = res.json;
  assert.deepEqual(Object.keys(m), [
    'body',
    'num_segments',
    'direction',
    'from',
    'date_updated',
    'price',
    'error_message',
    'uri',
    'account_sid',
    'num_media',
    'to',
    'date_created',
    'status',
    'sid',
    'date_sent',
    'messaging_service_sid',
    'error_code',
    'price_unit',
    'api_version',
    'subresource_uris',
  ]);
  assert.match(m.sid, /^SM[0-9a-f]{32}$/);
  assert.equal(m.sid.length, 34);
  assert.equal(m.status, 'queued');
  assert.equal(m.direction, 'outbound-api');
  assert.equal(m.to, LEAD);
  assert.equal(m.from, `whatsapp:${sim.sender}`);
  assert.equal(m.body, 'Hi Ada, thanks for your enquiry! Do you have a minute for a few quick questions?');
  assert.equal(m.num_segments, '1');
  assert.equal(m.num_media, '0');
  assert.equal(m.error_code, null);
  assert.equal(m.account_sid, sim.accountSid);
  assert.equal(m.api_version, '2010-04-01');
  assert.match(m.date_created, /^(Mon|Tue|Wed|Thu|Fri|Sat|Sun), \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} \+0000$/);
  assert.equal(m.uri, `/2010-04-01/Accounts/${sim.accountSid}/Messages/${m.sid}.json`);
  assert.deepEqual(m.subresource_uris, {
    media: `/2010-04-01/Accounts/${sim.accountSid}/Messages/${m.sid}/Media.json`,
  });

  await sim.idle();
  const auth = { authorization: `Basic ${Buffer.from(`${sim.accountSid}:${sim.authToken}`).toString('base64')}` };
  const fetched = await fetch(`${sim.url}${m.uri}`, { headers: auth });
  assert.equal(fetched.status, 200);
  const now = (await fetched.json()) as Record<string, unknown>;
  assert.equal(now.status, 'delivered');
  assert.match(String(now.date_sent), /\+0000$/);
});

test('form validation answers Twilio codes and messages', async (t) => {
  const { sim, post } = await setup(t);
  const from = `whatsapp:${sim.sender}`;
  const cases: [Record<string, string> | string, ReturnType<typeof error>][] = [
    [{ From: from, Body: 'x' }, error(400, 21604, "A 'To' phone number is required.")],
    [
      { To: 'whatsapp:+12', From: from, Body: 'x' },
      error(400, 21211, "The 'To' number whatsapp:+12 is not a valid phone number."),
    ],
    [
      { To: 'whatsapp:15550004444', From: from, Body: 'x' },
      error(400, 21211, "The 'To' number whatsapp:15550004444 is not a valid phone number."),
    ],
    [{ To: LEAD, Body: 'x' }, error(400, 21603, "A 'From' phone number is required.")],
    [
      { To: '+15550004444', From: from, Body: 'x' },
      error(400, 21910, 'Invalid From and To pair. From and To should be of the same channel'),
    ],
    [
      { To: LEAD, From: sim.sender, Body: 'x' },
      error(400, 21910, 'Invalid From and To pair. From and To should be of the same channel'),
    ],
    [
      { To: LEAD, From: 'whatsapp:+15559990000', Body: 'x' },
      error(400, 63007, 'Twilio could not find a Channel with the specified From address'),
    ],
    [{ To: LEAD, From: from }, error(400, 21619, 'A text message body or media urls must be specified.')],
    [
      { To: LEAD, From: from, Body: 'é'.repeat(1601) },
      error(400, 21617, 'The concatenated message body exceeds the 1600 character limit.'),
    ],
    [{ To: LEAD, From: from, ContentSid: 'HX123' }, error(400, 21655, 'The ContentSid is Invalid.')],
    [
      { To: LEAD, From: from, ContentSid: 'HX00000000000000000000000000000000' },
      error(400, 21655, 'The ContentSid is Invalid.'),
    ],
    [
      { To: LEAD, From: from, ContentSid: SIM_TEMPLATE_SID, ContentVariables: '{"1":' },
      error(400, 21656, 'The ContentVariables Parameter is invalid.'),
    ],
    [
      { To: LEAD, From: from, ContentSid: SIM_TEMPLATE_SID, ContentVariables: '["Ada"]' },
      error(400, 21656, 'The ContentVariables Parameter is invalid.'),
    ],
    [
      { To: LEAD, From: from, ContentSid: SIM_TEMPLATE_SID, ContentVariables: '{"1":7}' },
      error(400, 21656, 'The ContentVariables Parameter is invalid.'),
    ],
    [
      { To: LEAD, From: from, ContentSid: SIM_TEMPLATE_SID },
      error(400, 21656, 'The ContentVariables Parameter is invalid.'),
    ],
    [
      { To: LEAD, From: from, Body: 'x', StatusCallback: 'ftp://x' },
      error(400, 21609, 'The StatusCallback URL ftp://x is not a valid URL.'),
    ],
  ];
  for (const [form, expected] of cases) {
    const res = await post(form);
    assert.equal(res.status, expected.status, JSON.stringify(form).slice(0, 120));
    assert.deepEqual(res.json, expected, JSON.stringify(form).slice(0, 120));
  }
  // 1600 characters (not bytes) is still fine; the window rule is asynchronous, so this is a 201.
  assert.equal((await post({ To: LEAD, From: from, Body: 'é'.repeat(1600) })).status, 201);
  assert.equal(sim.messages.length, 1);
});

test('a JSON body carries no parameters (Twilio reads forms only)', async (t) => {
  const { sim, post } = await setup(t);
  const res = await post(JSON.stringify({ To: LEAD, From: `whatsapp:${sim.sender}`, Body: 'hi' }), {
    headers: {
      authorization: `Basic ${Buffer.from(`${sim.accountSid}:${sim.authToken}`).toString('base64')}`,
      'content-type': 'application/json',
    },
  });
  assert.deepEqual(res.json, error(400, 21604, "A 'To' phone number is required."));
});

test('unknown routes, another account and unknown messages are 20404', async (t) => {
  const { sim } = await setup(t);
  const auth = { authorization: `Basic ${Buffer.from(`${sim.accountSid}:${sim.authToken}`).toString('base64')}` };
  const other = '/2010-04-01/Accounts/AC00000000000000000000000000000000/Messages.json';
  const res = await fetch(`${sim.url}${other}`, { method: 'POST', headers: auth });
  assert.equal(res.status, 404);
  assert.deepEqual(await res.json(), error(404, 20404, `The requested resource ${other} was not found`));
  const missing = `/2010-04-01/Accounts/${sim.accountSid}/Messages/SM00000000000000000000000000000000.json`;
  assert.deepEqual(
    await (await fetch(`${sim.url}${missing}`, { headers: auth })).json(),
    error(404, 20404, `The requested resource ${missing} was not found`),
  );
  assert.equal((await fetch(`${sim.url}/v1/Content`, { headers: auth })).status, 404);
});

test('failNextSends answers the injected error JSON, then recovers', async (t) => {
  const { sim, post } = await setup(t);
  sim.failNextSends(1, { status: 500, code: 20500 });
  const form = {
    To: LEAD,
    From: `whatsapp:${sim.sender}`,
    ContentSid: SIM_TEMPLATE_SID,
    ContentVariables: '{"1":"Ada"}',
  };
  const failed = await post(form);
  assert.equal(failed.status, 500);
  assert.deepEqual(failed.json, error(500, 20500, 'An internal server error has occurred'));
  assert.equal((await post(form)).status, 201);
});

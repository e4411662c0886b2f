import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  classifyMetaError,
  META_GRAPH_DEFAULT_BASE_URL,
  MetaWhatsAppClient,
  type MetaClientOptions,
} from '../../src/whatsapp/meta/meta-client.ts';
import { META_SIM, startMetaSimulator, type MetaSimulator } from '../../src/simulators/meta/meta-simulator.ts';

const LEAD = '+14155550123';

let sim: MetaSimulator;
beforeEach(async () => {
  sim = await startMetaSimulator();
});
afterEach(async () => {
  await sim.close();
});

function client(overrides: Partial<MetaClientOptions> = {}): MetaWhatsAppClient {
  return new MetaWhatsAppClient({
    baseUrl: sim.graphBaseUrl,
    accessToken: META_SIM.accessToken,
    phoneNumberId: META_SIM.phoneNumberId,
    templateName: META_SIM.template.name,
    templateLanguage: META_SIM.template.language,
    timeoutMs: 2000,
    ...overrides,
  });
}

describe('MetaWhatsAppClient requests', () => {
  it('sends the first-contact template with the first name as body parameter {{1}}', async () => {
    const result = await client().send({
      to: LEAD,
      content: { kind: 'template', variables: ['Ada'] },
      idempotencyKey: 'k1',
    });
    assert.ok(result.ok);
    assert.match(result.providerMessageId, /^wamid\.[A-Za-z0-9+/=]+$/);
    const request = sim.requests[0]!;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, `/v23.0/${META_SIM.phoneNumberId}/messages`);
    assert.equal(request.headers.authorization, `Bearer ${META_SIM.accessToken}`);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(request.body, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '14155550123',
      type: 'template',
      template: {
        name: 'lead_first_contact',
        language: { code: 'en_US' },
        components: [{ type: 'body', parameters: [{ type: 'text', text: 'Ada' }] }],
      },
    });
    assert.equal(
      sim.sends[0]!.text,
      'Hi Ada, thanks for your enquiry! Could you answer a few quick questions here on WhatsApp?',
    );
    assert.equal(sim.sends[0]!.wamid, result.providerMessageId);
  });

  it('collapses new-lines, tabs and runs of spaces in template parameters (Meta refuses them)', async () => {
    const result = await client().send({
      to: LEAD,
      content: { kind: 'template', variables: [' Ada\n\tMarie     Lovelace '] },
      idempotencyKey: 'k',
    });
    assert.ok(result.ok);
    const body = sim.requests[0]!.body as { template: { components: Array<{ parameters: Array<{ text: string }> }> } };
    assert.equal(body.template.components[0]!.parameters[0]!.text, 'Ada Marie Lovelace');
  });

  it('leaves components out of a template without variables', async () => {
    sim.addPhoneNumber({
      id: '200',
      displayPhoneNumber: '15550000200',
      wabaId: '9',
      accessToken: 'token-200',
      appSecret: 's',
      templates: [{ name: 'hello_world', language: 'en_US', body: 'Hello World' }],
    });
    const c = client({ phoneNumberId: '200', accessToken: 'token-200', templateName: 'hello_world' });
    assert.ok((await c.send({ to: LEAD, content: { kind: 'template', variables: [] }, idempotencyKey: 'k' })).ok);
    assert.deepEqual((sim.requests[0]!.body as { template: unknown }).template, {
      name: 'hello_world',
      language: { code: 'en_US' },
    });
  });

  it('sends free-form text inside the window', async () => {
    sim.openWindow(LEAD);
    const result = await client().send({
      to: LEAD,
      content: { kind: 'text', text: 'Thanks! When would suit you?' },
      idempotencyKey: 'k2',
    });
    assert.ok(result.ok);
    assert.deepEqual(sim.requests[0]!.body, {
      messaging_product: 'whatsapp',
      recipient_type: 'individual',
      to: '14155550123',
      type: 'text',
      text: { body: 'Thanks! When would suit you?' },
    });
  });

  it('defaults to graph.facebook.com v23.0', () => {
    assert.equal(META_GRAPH_DEFAULT_BASE_URL, 'https://graph.facebook.com/v23.0');
  });
});

describe('MetaWhatsAppClient failures', () => {
  const text = { to: LEAD, content: { kind: 'text' as const, text: 'Hello again' }, idempotencyKey: 'k' };
  const template = { to: LEAD, content: { kind: 'template' as const, variables: ['Ada'] }, idempotencyKey: 'k' };

  it("window closed: 131047 is window_closed, with Meta's details", async () => {
    const result = await client().send(text);
    assert.deepEqual(result, {
      ok: false,
      kind: 'window_closed',
      code: 131047,
      httpStatus: 400,
      message:
        '(#131047) Re-engagement message: Message failed to send because more than 24 ' +
        'hours have passed since the customer last replied to this number.',
    });
    assert.equal(sim.sends.length, 0);
  });

  it('a bad token is configuration and the message never carries the token', async () => {
    const token = 'EAAG-secret-token-value';
    const result = await client({ accessToken: token }).send(template);
    assert.deepEqual(result, {
      ok: false,
      kind: 'configuration',
      code: 190,
      httpStatus: 401,
      message: 'Invalid OAuth access token - Cannot parse access token',
    });
  });

  it('an unknown phone number id is configuration (100, subcode 33)', async () => {
    const result = await client({ phoneNumberId: '999' }).send(template);
    assert.ok(!result.ok);
    assert.equal(result.kind, 'configuration');
    assert.equal(result.code, 100);
    assert.match(result.message, /^Unsupported post request\. Object with ID '999' does not exist/);
  });

  it('an unknown template or language is configuration (132001)', async () => {
    const result = await client({ templateLanguage: 'de' }).send(template);
    assert.deepEqual(result, {
      ok: false,
      kind: 'configuration',
      code: 132001,
      httpStatus: 404,
      message:
        '(#132001) Template name does not exist in the translation: ' +
        'template name (lead_first_contact) does not exist in de',
    });
  });

  it('a variable count mismatch is configuration (132000)', async () => {
    const result = await client().send({ ...template, content: { kind: 'template', variables: ['Ada', 'extra'] } });
    assert.ok(!result.ok);
    assert.equal(result.kind, 'configuration');
    assert.equal(result.code, 132000);
  });

  it('rate limits, outages and pair limits are transient; undeliverable is recipient', async () => {
    sim.failNextSends(1, {
      status: 400,
      code: 130429,
      message: '(#130429) Rate limit hit',
      details: 'Cloud API message throughput has been reached.',
    });
    sim.failNextSends(1, { status: 503, code: 131016, message: '(#131016) Service unavailable', isTransient: true });
    sim.failNextSends(1, {
      status: 400,
      code: 131056,
      message: '(#131056) (Business Account, Consumer Account) pair rate limit hit',
    });
    sim.failNextSends(1, { status: 400, code: 131026, message: '(#131026) Message undeliverable' });
    sim.failNextSends(1, {
      status: 403,
      code: 10,
      message: '(#10) Application does not have permission for this action',
    });
    const kinds = [];
    for (let i = 0; i < 5; i += 1) {
      const r = await client().send(template);
      assert.ok(!r.ok);
      kinds.push([r.kind, r.code, r.httpStatus]);
    }
    assert.deepEqual(kinds, [
      ['transient', 130429, 400],
      ['transient', 131016, 503],
      ['transient', 131056, 400],
      ['recipient', 131026, 400],
      ['configuration', 10, 403],
    ]);
    assert.ok((await client().send(template)).ok, 'the simulator recovers after the injected failures');
  });

  it('a dropped connection is transient', async () => {
    sim.failNextSends(1, 'hang-up');
    const result = await client().send(template);
    assert.ok(!result.ok);
    assert.equal(result.kind, 'transient');
    assert.match(result.message, /^Could not reach WhatsApp Cloud API \(.+\)\.$/);
    assert.equal(result.httpStatus, undefined);
  });
});

describe('MetaWhatsAppClient against odd servers', () => {
  let server: Server | undefined;
  afterEach(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  });
  async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
    server = createServer(handler);
    await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v23.0`;
  }
  const request = { to: LEAD, content: { kind: 'text' as const, text: 'hi' }, idempotencyKey: 'k' };
  const options = { accessToken: 'tok-123', phoneNumberId: '1', templateName: 't', templateLanguage: 'en' };

  it('times out as transient', async () => {
    const baseUrl = await serve(() => {
      /* never answers */
    });
    const result = await new MetaWhatsAppClient({ ...options, baseUrl, timeoutMs: 100 }).send(request);
    assert.deepEqual(result, {
      ok: false,
      kind: 'transient',
      message: 'WhatsApp Cloud API did not answer within 100 ms.',
    });
  });

  it('a non-JSON 502 is transient; a non-JSON 400 is not retried', async () => {
    let status = 502;
    const baseUrl = await serve((_req, res) =>
      res.writeHead(status, { 'content-type': 'text/html' }).end('<html>Bad gateway</html>'),
    );
    const c = new MetaWhatsAppClient({ ...options, baseUrl });
    assert.deepEqual(await c.send(request), {
      ok: false,
      kind: 'transient',
      httpStatus: 502,
      message: 'WhatsApp Cloud API answered 502 with a body that is not JSON.',
    });
    status = 400;
    assert.equal(((await c.send(request)) as { kind: string }).kind, 'configuration');
  });

  it('removes the access token from any error text', async () => {
    const baseUrl = await serve((_req, res) =>
      res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(
          JSON.stringify({ error: { message: 'Malformed access token tok-123', type: 'OAuthException', code: 190 } }),
        ),
    );
    const result = await new MetaWhatsAppClient({ ...options, baseUrl }).send(request);
    assert.deepEqual(result, {
      ok: false,
      kind: 'configuration',
      code: 190,
      httpStatus: 400,
      message: 'Malformed access token [redacted]',
    });
  });

  it('a 200 without a message id is transient', async () => {
    const baseUrl = await serve((_req, res) =>
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"messaging_product":"whatsapp"}'),
    );
    const result = await new MetaWhatsAppClient({ ...options, baseUrl }).send(request);
    assert.deepEqual(result, {
      ok: false,
      kind: 'transient',
      httpStatus: 200,
      message: 'WhatsApp Cloud API answered 200 without a message id.',
    });
  });
});

describe('classifyMetaError', () => {
  it('goes by code first, then by HTTP status', () => {
    assert.equal(classifyMetaError(131047, 400), 'window_closed');
    assert.equal(classifyMetaError(190, 401), 'configuration');
    assert.equal(classifyMetaError(200, 403), 'configuration');
    assert.equal(classifyMetaError(294, 403), 'configuration');
    assert.equal(classifyMetaError(132001, 404), 'configuration');
    assert.equal(classifyMetaError(131026, 400), 'recipient');
    assert.equal(classifyMetaError(4, 400), 'transient');
    assert.equal(classifyMetaError(80007, 400), 'transient');
    assert.equal(classifyMetaError(999999, 500), 'transient');
    assert.equal(classifyMetaError(999999, 429), 'transient');
    assert.equal(classifyMetaError(999999, 400, true), 'transient');
    assert.equal(classifyMetaError(999999, 400), 'configuration');
    assert.equal(classifyMetaError(undefined, 401), 'configuration');
    assert.equal(classifyMetaError(undefined, 503), 'transient');
  });
});

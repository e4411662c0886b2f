import { afterEach, beforeEach, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VapiClient } from '../../src/voice/vapi/vapi-client.ts';
import type { PlaceCallRequest } from '../../src/voice/voice-provider.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';

// Written out literally (not imported) so a drift in the simulator's body makes these tests fail.
const INVALID_KEY_TEXT =
  '{"message":"Invalid Key. Hot tip, you may be using the private key instead of the ' +
  'public key, or vice versa.","error":"Unauthorized","statusCode":401}';
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

function request(overrides: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    apiKey: SIM_API_KEY,
    assistantId: SIM_ASSISTANT_ID,
    phoneNumberId: SIM_PHONE_NUMBER_ID,
    customer: { number: '+14155550123', name: 'Ada Lovelace' },
    variableValues: { firstName: 'Ada', company: 'Analytical Engines' },
    metadata: { leadId: 'lead-1', workspaceId: 'ws-1' },
    ...overrides,
  };
}

let sim: VapiSimulator;
let client: VapiClient;

beforeEach(async () => {
  sim = await startVapiSimulator();
  client = new VapiClient({ baseUrl: sim.url, timeoutMs: 2000 });
});
afterEach(async () => {
  await sim.close();
});

async function postCall(body: unknown, apiKey = SIM_API_KEY): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${sim.url}/call`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

describe('Vapi simulator through the real VapiClient', () => {
  it('accepts a call and records exactly what the client sent', async () => {
    const result = await client.placeCall(request());
    assert.equal(result.ok, true);
    assert.ok(result.ok);
    assert.match(result.providerCallId, UUID);
    assert.equal(result.status, 'queued');

    assert.equal(sim.requests.length, 1);
    const recorded = sim.requests[0]!;
    assert.equal(recorded.method, 'POST');
    assert.equal(recorded.path, '/call');
    assert.equal(recorded.headers.authorization, `Bearer ${SIM_API_KEY}`);
    assert.deepEqual(recorded.body, {
      assistantId: SIM_ASSISTANT_ID,
      phoneNumberId: SIM_PHONE_NUMBER_ID,
      customer: { number: '+14155550123', name: 'Ada Lovelace' },
      assistantOverrides: {
        variableValues: { firstName: 'Ada', company: 'Analytical Engines' },
        metadata: { leadId: 'lead-1', workspaceId: 'ws-1' },
      },
    });
    assert.equal(Object.hasOwn(recorded.body as object, 'metadata'), false);

    assert.equal(sim.calls.length, 1);
    const { call } = sim.calls[0]!;
    assert.equal(call.id, result.providerCallId);
    assert.equal(call.type, 'outboundPhoneCall');
    assert.equal(call.cost, 0);
    assert.deepEqual(call.subscriptionLimits, {
      concurrencyBlocked: false,
      concurrencyLimit: 10,
      remainingConcurrentCalls: 9,
    });

    const fetched = await fetch(`${sim.url}/call/${call.id}`, { headers: { authorization: `Bearer ${SIM_API_KEY}` } });
    assert.equal(fetched.status, 200);
    const body = (await fetched.json()) as Record<string, unknown>;
    assert.equal(body.id, call.id);
    assert.equal(body.status, 'queued');
    assert.deepEqual(body.assistantOverrides, {
      variableValues: { firstName: 'Ada', company: 'Analytical Engines' },
      metadata: { leadId: 'lead-1', workspaceId: 'ws-1' },
    });
    assert.ok(!Number.isNaN(Date.parse(body.createdAt as string)));
  });

  it("rejects an unknown key with Vapi's exact 401 body", async () => {
    const result = await client.placeCall(request({ apiKey: 'not-a-key' }));
    assert.deepEqual(result, { ok: false, message: INVALID_KEY_TEXT, httpStatus: 401 });
    assert.equal(sim.calls.length, 0);
  });

  it('bad-key mode rejects even the valid key', async () => {
    sim.setFailure('bad-key');
    assert.deepEqual(await client.placeCall(request()), { ok: false, message: INVALID_KEY_TEXT, httpStatus: 401 });
  });

  it('rejects an unknown assistant id', async () => {
    const id = '00000000-0000-4000-8000-000000000000';
    const result = await client.placeCall(request({ assistantId: id }));
    assert.equal(result.ok, false);
    assert.ok(!result.ok);
    assert.equal(result.httpStatus, 400);
    assert.deepEqual(JSON.parse(result.message), {
      message: `Couldn't Get Assistant. \`assistantId\` ${id} Does Not Exist.`,
      error: 'Bad Request',
      statusCode: 400,
    });
  });

  it('unknown-assistant mode rejects the known assistant; addAssistant makes a new id valid', async () => {
    sim.setFailure('unknown-assistant');
    const failed = await client.placeCall(request());
    assert.ok(!failed.ok);
    assert.match(failed.message, /Couldn't Get Assistant/);
    sim.setFailure('none');
    sim.addAssistant('assistant-2');
    assert.equal((await client.placeCall(request({ assistantId: 'assistant-2' }))).ok, true);
  });

  it('rejects an unknown phone number id', async () => {
    const result = await client.placeCall(request({ phoneNumberId: 'missing-number' }));
    assert.ok(!result.ok);
    assert.equal(result.httpStatus, 400);
    assert.deepEqual(JSON.parse(result.message), {
      message: "Couldn't Get Phone Number. `phoneNumberId` missing-number Does Not Exist.",
      error: 'Bad Request',
      statusCode: 400,
    });
    sim.setFailure('bad-phone-number');
    const forced = await client.placeCall(request());
    assert.ok(!forced.ok);
    assert.match(forced.message, /Couldn't Get Phone Number/);
  });

  it('passes a 500 through unchanged', async () => {
    sim.setFailure('server-error');
    const result = await client.placeCall(request());
    assert.deepEqual(result, {
      ok: false,
      message: '{"message":"Internal server error","statusCode":500}',
      httpStatus: 500,
    });
  });

  it('hang-up closes the connection without an answer', async () => {
    sim.setFailure('hang-up');
    const result = await client.placeCall(request());
    assert.ok(!result.ok);
    assert.match(result.message, /^Could not reach the voice provider \(.+\)\.$/);
    assert.equal(result.httpStatus, undefined);
    assert.equal(sim.calls.length, 0);
  });

  it('slow answers hit the client timeout', async () => {
    sim.setFailure('slow', 2000);
    const fast = new VapiClient({ baseUrl: sim.url, timeoutMs: 200 });
    const started = Date.now();
    const result = await fast.placeCall(request());
    assert.deepEqual(result, { ok: false, message: 'The voice provider did not answer within 200 ms.' });
    assert.ok(Date.now() - started < 1500, 'client should give up long before the simulator answers');
  });
});

describe('Vapi simulator validation (direct HTTP)', () => {
  const valid = {
    assistantId: SIM_ASSISTANT_ID,
    phoneNumberId: SIM_PHONE_NUMBER_ID,
    customer: { number: '+14155550123', name: 'Ada' },
  };

  it('rejects a top-level metadata property with the class-validator array message', async () => {
    const res = await postCall({ ...valid, metadata: { leadId: 'x' } });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      message: ['property metadata should not exist'],
      error: 'Bad Request',
      statusCode: 400,
    });
    assert.equal(sim.calls.length, 0);
  });

  it('prefixes nested unknown properties and reports wrong types', async () => {
    const res = await postCall({
      ...valid,
      customer: { number: 12, foo: 'bar' },
      assistantOverrides: { variableValues: 'x', metadata: { anything: 1 }, bogus: true },
    });
    assert.equal(res.status, 400);
    assert.deepEqual(res.json, {
      message: [
        'assistantOverrides.property bogus should not exist',
        'assistantOverrides.variableValues must be an object',
        'customer.property foo should not exist',
        'customer.number must be a string',
      ],
      error: 'Bad Request',
      statusCode: 400,
    });
  });

  it('checks customer.number length and E.164 form', async () => {
    const short = await postCall({ ...valid, customer: { number: '+1' } });
    assert.deepEqual((short.json as { message: string[] }).message, [
      'customer.number must be longer than or equal to 3 characters',
    ]);
    const local = await postCall({ ...valid, customer: { number: '0415555012' } });
    assert.equal(local.status, 400);
    assert.match(
      (local.json as { message: string[] }).message[0]!,
      /^customer\.number must be a valid phone number in the E\.164 format/,
    );
    const optedOut = await postCall({ ...valid, customer: { number: '0415555012', numberE164CheckEnabled: false } });
    assert.equal(optedOut.status, 201);
  });

  it('needs a phone number and a JSON body', async () => {
    const missing = await postCall({ assistantId: SIM_ASSISTANT_ID, customer: { number: '+14155550123' } });
    assert.deepEqual(missing.json, {
      message: "Couldn't Get Phone Number. Need Either `phoneNumberId` Or `phoneNumber`.",
      error: 'Bad Request',
      statusCode: 400,
    });
    const broken = await postCall('{not json');
    assert.equal(broken.status, 400);
    assert.equal((broken.json as { error: string }).error, 'Bad Request');
  });

  it('serves assistants, phone numbers and 404s behind the same key check', async () => {
    const auth = { authorization: `Bearer ${SIM_API_KEY}` };
    const assistant = await fetch(`${sim.url}/assistant/${SIM_ASSISTANT_ID}`, { headers: auth });
    assert.equal(assistant.status, 200);
    assert.equal(((await assistant.json()) as { id: string }).id, SIM_ASSISTANT_ID);
    const phone = await fetch(`${sim.url}/phone-number/${SIM_PHONE_NUMBER_ID}`, { headers: auth });
    assert.equal(phone.status, 200);
    await phone.body?.cancel();
    const unknownPhone = await fetch(`${sim.url}/phone-number/nope`, { headers: auth });
    assert.deepEqual(await unknownPhone.json(), { message: 'Not Found', error: 'Not Found', statusCode: 404 });
    const unknownCall = await fetch(`${sim.url}/call/nope`, { headers: auth });
    assert.equal(unknownCall.status, 404);
    await unknownCall.body?.cancel();
    const noKey = await fetch(`${sim.url}/assistant/${SIM_ASSISTANT_ID}`);
    assert.equal(noKey.status, 401);
    assert.equal(await noKey.text(), INVALID_KEY_TEXT);
    const noRoute = await fetch(`${sim.url}/nothing-here`, { method: 'DELETE', headers: auth });
    assert.deepEqual(await noRoute.json(), {
      message: 'Cannot DELETE /nothing-here',
      error: 'Not Found',
      statusCode: 404,
    });
  });

  it('close() is prompt while a slow request is pending', async () => {
    sim.setFailure('slow', 10_000);
    const pending = fetch(`${sim.url}/call`, { method: 'POST', body: '{}' }).then(
      () => 'answered',
      () => 'failed',
    );
    while (sim.requests.length === 0) await new Promise((r) => setImmediate(r));
    const started = Date.now();
    await sim.close();
    assert.equal(await pending, 'failed');
    assert.ok(Date.now() - started < 1000);
  });
});

// The Vapi simulator's personas of an unanswered call (no answer, busy, voicemail), placed through
// the real VapiClient with our voicemail and schedule options, their server messages delivered to
// a recording server; and the per-number call count a persona can be chosen by (the sandbox's
// "answers the third call").
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, test } from 'node:test';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { VapiClient } from '../../src/voice/vapi/vapi-client.ts';
import type { PlaceCallRequest } from '../../src/voice/voice-provider.ts';
import { startRecordingServer, type RecordingServer } from '../helpers/recording-server.ts';

const NOW = new Date('2050-09-01T10:00:00.000Z');
let events: RecordingServer;
let sim: VapiSimulator;
let client: VapiClient;

before(async () => {
  events = await startRecordingServer({ status: 200, body: '{}' });
});
after(() => events.close());
beforeEach(async () => {
  sim = await startVapiSimulator({ now: () => NOW });
  client = new VapiClient({ baseUrl: sim.url, timeoutMs: 2000 });
});
afterEach(() => sim.close());

function request(overrides: Partial<PlaceCallRequest> = {}): PlaceCallRequest {
  return {
    apiKey: SIM_API_KEY,
    assistantId: SIM_ASSISTANT_ID,
    phoneNumberId: SIM_PHONE_NUMBER_ID,
    customer: { number: '+14155550123', name: 'Ada Lovelace' },
    variableValues: { leadFirstName: 'Ada', leadName: 'Ada Lovelace' },
    metadata: { leadId: 'lead-1', workspaceId: 'ws-1' },
    server: { url: `${events.url}/events`, headers: { 'x-vapi-secret': 'secret' } },
    ...overrides,
  };
}

async function placed(overrides: Partial<PlaceCallRequest> = {}): Promise<{ callId: string; status: string }> {
  const result = await client.placeCall(request(overrides));
  assert.ok(result.ok, JSON.stringify(result));
  return { callId: result.providerCallId, status: result.status };
}

/** The server messages the simulator delivered for a call: `status-update:<status>` or the type. */
function delivered(callId: string): { kinds: string[]; report: Record<string, any> } {
  const mine = sim.deliveries.filter((d) => d.callId === callId);
  assert.ok(mine.every((d) => d.status === 200 && d.url === `${events.url}/events`));
  const bodies = mine.map((d) => JSON.parse(d.body).message);
  return {
    kinds: bodies.map((m) => (m.type === 'status-update' ? `status-update:${m.status}` : m.type)),
    report: bodies.find((m) => m.type === 'end-of-call-report'),
  };
}

describe('unanswered calls', () => {
  for (const [persona, endedReason] of [
    ['no-answer', 'customer-did-not-answer'],
    ['busy', 'customer-busy'],
  ] as const) {
    test(`${persona}: rings, never in progress, ends with ${endedReason}`, async () => {
      const { callId } = await placed();
      const played = await sim.play(callId, persona);
      assert.equal(played.endedReason, endedReason);
      const { kinds, report } = delivered(callId);
      assert.deepEqual(kinds, ['status-update:ringing', 'status-update:ended', 'end-of-call-report']);
      assert.equal(report.endedReason, endedReason);
      assert.equal(report.startedAt, undefined);
      assert.deepEqual(report.artifact.messages, []);
      assert.equal(report.artifact.recordingUrl, undefined);
      const ended = JSON.parse(sim.deliveries.find((d) => d.callId === callId && /"ended"/.test(d.body))!.body);
      assert.equal(ended.message.endedReason, endedReason);
    });
  }
});

describe('voicemail', () => {
  test("the call's voicemail message, its variables filled, is left once after the machine's greeting", async () => {
    const { callId } = await placed({
      voicemail: { message: 'Hi {{leadFirstName}}, this is Mia. Please call us back at 555-0100.' },
    });
    const overrides = (sim.requests[0]!.body as any).assistantOverrides;
    assert.deepEqual(overrides.voicemailDetection, { provider: 'vapi' });
    assert.equal(overrides.voicemailMessage, 'Hi {{leadFirstName}}, this is Mia. Please call us back at 555-0100.');
    await sim.play(callId, 'voicemail');
    const { kinds, report } = delivered(callId);
    assert.deepEqual(kinds, [
      'status-update:ringing',
      'status-update:in-progress',
      'status-update:ended',
      'end-of-call-report',
    ]);
    assert.equal(report.endedReason, 'voicemail');
    const spoken = report.artifact.messages.filter((m: any) => m.role === 'bot').map((m: any) => m.message);
    assert.deepEqual(spoken, ['Hi Ada, this is Mia. Please call us back at 555-0100.']);
    assert.match(report.artifact.transcript, /^User: Hi, you've reached my voicemail/);
    assert.equal(report.artifact.transcript.split('Please call us back at 555-0100.').length, 2);
  });

  test('without a message the assistant hangs up on the machine: nothing said, ended as voicemail', async () => {
    const { callId } = await placed({ voicemail: { message: null } });
    const overrides = (sim.requests[0]!.body as any).assistantOverrides;
    assert.deepEqual(overrides.voicemailDetection, { provider: 'vapi' });
    assert.equal(Object.hasOwn(overrides, 'voicemailMessage'), false);
    await sim.play(callId, 'voicemail');
    const { kinds, report } = delivered(callId);
    assert.ok(kinds.includes('status-update:in-progress'));
    assert.equal(report.endedReason, 'voicemail');
    assert.deepEqual(
      report.artifact.messages.filter((m: any) => m.role === 'bot'),
      [],
    );
  });

  test('a call without voicemail options sends none (the assistant talks to the machine as before)', async () => {
    const { callId } = await placed();
    const body = sim.requests[0]!.body as any;
    assert.equal(Object.hasOwn(body.assistantOverrides, 'voicemailDetection'), false);
    assert.equal(Object.hasOwn(body, 'schedulePlan'), false);
    await sim.play(callId, 'voicemail');
    assert.match(delivered(callId).report.artifact.transcript, /^AI: Hi Ada, this is Mia/);
  });
});

describe('scheduled calls', () => {
  test('earliestAt becomes schedulePlan; Vapi answers 201 scheduled and the call starts at that time', async () => {
    const earliestAt = new Date('2050-09-01T14:30:00.000Z');
    sim.setAutoPlay({ persona: 'no-answer' });
    const { callId, status } = await placed({ earliestAt });
    assert.equal(status, 'scheduled');
    assert.deepEqual((sim.requests[0]!.body as any).schedulePlan, { earliestAt: '2050-09-01T14:30:00.000Z' });
    await sim.settled();
    const { report } = delivered(callId);
    assert.equal(report.endedReason, 'customer-did-not-answer');
    assert.ok(Date.parse(report.endedAt) > earliestAt.getTime(), report.endedAt);
  });

  test('a schedulePlan without a valid earliestAt is refused like Vapi refuses it', async () => {
    const res = await fetch(`${sim.url}/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${SIM_API_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        assistantId: SIM_ASSISTANT_ID,
        phoneNumberId: SIM_PHONE_NUMBER_ID,
        customer: { number: '+14155550123' },
        schedulePlan: { earliestAt: 'tomorrow' },
        assistantOverrides: { voicemailDetection: { provider: 'answering-machine' } },
      }),
    });
    assert.equal(res.status, 400);
    assert.deepEqual(((await res.json()) as { message: string[] }).message, [
      'schedulePlan.earliestAt must be a valid ISO 8601 date string',
      'assistantOverrides.voicemailDetection.provider must be one of ' +
        'the following values: vapi, google, openai, twilio',
    ]);
  });
});

describe('a persona chosen by the attempt', () => {
  test('the chooser is told which call to the number this is', async () => {
    const seen: Array<[string, number]> = [];
    sim.setAutoPlay({
      persona: (call, nth) => {
        seen.push([(call.customer as { number: string }).number, nth]);
        return nth <= 2 ? 'no-answer' : 'busy';
      },
    });
    const other = { number: '+14155550999', name: 'Grace Hopper' };
    const ids = [];
    for (const customer of [undefined, undefined, other, undefined]) {
      ids.push((await placed(customer ? { customer } : {})).callId);
    }
    const results = await sim.settled();
    assert.deepEqual(seen, [
      ['+14155550123', 1],
      ['+14155550123', 2],
      ['+14155550999', 1],
      ['+14155550123', 3],
    ]);
    assert.deepEqual(
      ids.map((id) => results.find((r) => r.callId === id)?.endedReason),
      ['customer-did-not-answer', 'customer-did-not-answer', 'customer-did-not-answer', 'customer-busy'],
    );
  });
});

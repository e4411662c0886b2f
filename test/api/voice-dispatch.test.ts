import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, test } from 'node:test';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let sim: VapiSimulator;
let app: TestApp;
let key: string;
let workspaceId: string;
let apiKeyId: string;

const VAPI = {
  provider: 'vapi' as const,
  apiKey: SIM_API_KEY,
  assistantId: SIM_ASSISTANT_ID,
  phoneNumberId: SIM_PHONE_NUMBER_ID,
};

before(async () => {
  sim = await startVapiSimulator();
  app = await startTestApp({ env: { VAPI_BASE_URL: sim.url, VAPI_TIMEOUT_MS: '400' } });
  ({ apiKey: key, workspaceId, apiKeyId } = await app.createWorkspace('voice', { voice: VAPI }));
});
after(async () => {
  await app.close();
  await sim.close();
});
beforeEach(() => sim.setFailure('none'));

async function leadRowsFor(phone: string) {
  const { rows } = await app.db.pool.query(
    `SELECT (SELECT count(*)::int FROM leads WHERE phone = $1) AS leads,
            (SELECT count(*)::int FROM call_sessions c JOIN leads l ON l.id = c.lead_id WHERE l.phone = $1) AS calls,
            (SELECT count(*)::int FROM lead_events e JOIN leads l ON l.id = e.lead_id WHERE l.phone = $1) AS events`,
    [phone],
  );
  return rows[0];
}

describe('voice dispatch at submission', () => {
  test('accepted: 201 with the provider call id; call session stored; lead in conversation', async () => {
    const body = validLead({
      name: 'Ada King Lovelace',
      email: 'ada@example.com',
      goal: 'Automate follow-up',
      metadata: { budget: 5000, source: 'ads', empty: '', nothing: null },
      formResponses: { q_size: '11-50' },
    });
    const before = sim.calls.length;
    const res = await postLead(app.http, key, body);
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['ok', 'leadId', 'status', 'providerCallId', 'callQueued']);
    assert.equal(res.body.status, 'in_progress');
    assert.equal(res.body.callQueued, true);
    assert.equal(sim.calls.length, before + 1);
    const recorded = sim.calls.at(-1)!;
    assert.equal(res.body.providerCallId, recorded.call.id);
    const sent = recorded.requestBody as any;
    assert.equal('metadata' in sent, false, 'no top-level metadata');
    assert.equal(sent.assistantId, SIM_ASSISTANT_ID);
    assert.equal(sent.phoneNumberId, SIM_PHONE_NUMBER_ID);
    assert.deepEqual(sent.customer, { number: `+${String(body.phone).replace(/\D/g, '')}`, name: 'Ada King Lovelace' });
    assert.deepEqual(sent.assistantOverrides.metadata, { leadId: res.body.leadId, workspaceId });
    assert.deepEqual(sent.assistantOverrides.variableValues, {
      leadId: res.body.leadId,
      leadName: 'Ada King Lovelace',
      leadFirstName: 'Ada',
      leadEmail: 'ada@example.com',
      leadGoal: 'Automate follow-up',
      leadMetadata: '- budget: 5000\n- source: ads',
      // No form in this workspace: the answer is shown by its id, quoted after a label of ours.
      formResponses: 'Question id "q_size": 11-50',
    });
    const authHeader = sim.requests.filter((r) => r.path === '/call').at(-1)!.headers.authorization;
    assert.equal(authHeader, `Bearer ${SIM_API_KEY}`);

    const got = await getLead(app.http, key, res.body.leadId);
    assert.equal(got.body.lead.status, 'in_conversation');
    assert.equal(got.body.lead.channel, 'voice');
    assert.equal(got.body.voiceCall.status, 'queued');
    assert.equal(got.body.voiceCall.providerCallId, res.body.providerCallId);
    assert.equal(got.body.voiceCall.transcript, null);
    const events = await app.db.pool.query('SELECT type FROM lead_events WHERE lead_id = $1 ORDER BY id', [
      res.body.leadId,
    ]);
    assert.deepEqual(
      events.rows.map((r) => r.type),
      ['lead.created', 'call.dispatched'],
    );
    const createdBy = await app.db.pool.query('SELECT api_key_id FROM leads WHERE id = $1', [res.body.leadId]);
    assert.equal(createdBy.rows[0].api_key_id, apiKeyId, 'the lead records the key that submitted it');
  });

  const rejections: [string, () => void, (message: string) => void][] = [
    [
      'a bad provider key',
      () => sim.setFailure('bad-key'),
      (m) =>
        assert.equal(
          m,
          '{"message":"Invalid Key. Hot tip, you may be using the private key instead of the ' +
            'public key, or vice versa.","error":"Unauthorized","statusCode":401}',
        ),
    ],
    [
      'an unknown assistant',
      () => sim.setFailure('unknown-assistant'),
      (m) => assert.match(m, /Couldn't Get Assistant/),
    ],
    [
      'a bad phone-number id',
      () => sim.setFailure('bad-phone-number'),
      (m) => assert.match(m, /Couldn't Get Phone Number/),
    ],
    ['a provider 500', () => sim.setFailure('server-error'), (m) => assert.equal(JSON.parse(m).statusCode, 500)],
    ['a hang-up', () => sim.setFailure('hang-up'), (m) => assert.match(m, /^Could not reach the voice provider/)],
    [
      'no answer within VAPI_TIMEOUT_MS',
      () => sim.setFailure('slow', 5000),
      (m) => assert.equal(m, 'The voice provider did not answer within 400 ms.'),
    ],
  ];
  for (const [title, arrange, checkMessage] of rejections) {
    test(`rejected by ${title}: 502, nothing of the lead remains, the phone can be resubmitted`, async () => {
      arrange();
      const body = validLead();
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, 502);
      assert.deepEqual(Object.keys(res.body), ['ok', 'error', 'message']);
      assert.equal(res.body.error, 'voice_dispatch_failed');
      checkMessage(res.body.message);
      assert.deepEqual(await leadRowsFor(String(body.phone)), { leads: 0, calls: 0, events: 0 });

      sim.setFailure('none');
      const again = await postLead(app.http, key, body);
      assert.equal(again.status, 201);
      assert.deepEqual(await leadRowsFor(String(body.phone)), { leads: 1, calls: 1, events: 2 });
    });
  }

  test('a voice workspace without provider settings answers 502 and keeps nothing', async () => {
    const bare = await app.createWorkspace('voice');
    const body = validLead();
    const res = await postLead(app.http, bare.apiKey, body);
    assert.equal(res.status, 502);
    assert.equal(res.body.message, 'Voice provider is not configured for this workspace.');
    assert.deepEqual(await leadRowsFor(String(body.phone)), { leads: 0, calls: 0, events: 0 });
  });

  test('concurrent submissions of one phone place exactly one call', async () => {
    const body = validLead();
    const before = sim.calls.length;
    const answers = await Promise.all(Array.from({ length: 20 }, () => postLead(app.http, key, body)));
    assert.equal(answers.filter((a) => a.status === 201).length, 1);
    assert.equal(answers.filter((a) => a.status === 409).length, 19);
    assert.equal(sim.calls.length, before + 1);
  });

  test("a long name is cut to Vapi's 40-character customer.name; the full name is in the variables", async () => {
    const name = 'Maximilian Alexander Konstantin von Hohenzollern-Sigmaringen';
    const res = await postLead(app.http, key, validLead({ name }));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const sent = sim.calls.at(-1)!.requestBody as any;
    assert.equal(sent.customer.name, name.slice(0, 40));
    assert.equal(sent.assistantOverrides.variableValues.leadName, name);
  });
});

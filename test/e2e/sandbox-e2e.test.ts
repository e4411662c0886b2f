import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { freePort } from '../../src/db/embedded.ts';
import { SANDBOX_OUTCOME_TABLE } from '../../src/sandbox/sandbox-outcomes.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, postLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// Every row of the sandbox's outcome table, both channels, end to end through the public API: POST
// with a sandbox key → the real service with the simulated providers → GET shows the outcome. The
// workspaces have complete LIVE settings and every provider base URL of the config points at a trap
// that fails the test on any request: nothing in sandbox mode may reach a live provider.

let app: TestApp;
let worker: TurnWorker;
const trapped: string[] = [];
let closeTrap: () => Promise<void>;
let whatsapp: { sandboxKey: string; apiKey: string };
let voice: { sandboxKey: string; apiKey: string };

before(async () => {
  const trap = createServer((req, res) => {
    trapped.push(`${req.method} ${req.url}`);
    res.writeHead(500).end('a sandbox lead reached a live provider');
  });
  await new Promise<void>((resolve) => trap.listen(0, '127.0.0.1', resolve));
  const trapUrl = `http://127.0.0.1:${(trap.address() as AddressInfo).port}`;
  closeTrap = () =>
    new Promise((resolve) => {
      trap.closeAllConnections();
      trap.close(() => resolve());
    });
  const port = await freePort();
  app = await startTestApp({
    env: {
      PORT: String(port),
      PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
      VAPI_BASE_URL: trapUrl,
      TWILIO_BASE_URL: trapUrl,
      WHATSAPP_GRAPH_BASE_URL: trapUrl,
      OPENAI_BASE_URL: `${trapUrl}/v1`,
      OPENAI_API_KEY: 'sk-live-key-that-must-never-be-used',
      CALCOM_BASE_URL: trapUrl,
    },
  });
  await app.http.listen({ port, host: '127.0.0.1' });
  const live = {
    scheduling: { provider: 'calcom' as const, apiKey: 'cal_live_real', eventTypeId: 7 },
    llm: { baseUrl: `${trapUrl}/v1`, apiKey: 'sk-workspace-live', model: 'gpt-live' },
    agent: SOLAR_AGENT,
  };
  whatsapp = await app.createWorkspace('whatsapp', {
    ...live,
    whatsapp: {
      provider: 'twilio',
      accountSid: `AC${'a'.repeat(32)}`,
      authToken: 'live-token',
      from: '+15550009999',
      templateContentSid: `HX${'b'.repeat(32)}`,
    },
  });
  voice = await app.createWorkspace('voice', {
    ...live,
    voice: { provider: 'vapi', apiKey: 'vapi-live-key', assistantId: 'live-assistant', phoneNumberId: 'live-number' },
  });
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: () => new Date(),
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
  });
  worker = new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 4 });
});

after(async () => {
  if (process.env.SANDBOX_TEST_LOGS) console.log(app.logs.filter((l) => /"level":(40|50)/.test(l)).join(''));
  await app?.close();
  await closeTrap?.();
});

let settling: Promise<unknown> = Promise.resolve();
/** Relays, runs turn jobs and waits for the simulators until nothing is left (bounded). */
function settle(): Promise<void> {
  const run = settling.then(async () => {
    for (let round = 0; round < 100; round++) {
      await app.relay.drain();
      // A retry's back-off (a send that timed out on a loaded machine) is not waited for.
      const ran = await worker.drainOnce({ ignoreBackoff: true });
      await app.sandbox.settled();
      const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM outbox');
      if (ran === 0 && rows[0].n === 0) return;
    }
    throw new Error('the sandbox did not settle within 100 rounds');
  });
  settling = run.catch(() => {});
  return run;
}

let n = 0;
/** A phone ending in `suffix`, new in this file. */
const phone = (suffix: string) => `+1 555 ${String(100 + ++n).padStart(3, '0')} ${suffix}`;

const WHATSAPP_EXPECTED: Record<string, { status: string; notes?: RegExp }> = {
  '0001': { status: 'booked' },
  '0002': { status: 'unqualified', notes: /no budget/i },
  '0003': { status: 'needs_human' },
  '0004': { status: 'in_conversation' },
  '0005': { status: 'unqualified', notes: /opted out/i },
  '0006': { status: 'booked' }, // voice-only row: on WhatsApp it books like any other number
  '0007': { status: 'needs_human' }, // the simulated model fails; the lead gets the holding message
  // Silent to the first template: answers only the 2nd follow-up, which the plan sends a while later.
  '0011': { status: 'in_conversation' },
  '4242': { status: 'booked' },
};
const VOICE_EXPECTED: Record<string, { status: string; endedReason?: string }> = {
  '0001': { status: 'booked', endedReason: 'assistant-ended-call' },
  '0002': { status: 'unqualified', endedReason: 'assistant-ended-call' },
  '0003': { status: 'needs_human', endedReason: 'assistant-ended-call' },
  '0004': { status: 'in_conversation', endedReason: 'customer-did-not-answer' },
  '0005': { status: 'unqualified', endedReason: 'assistant-ended-call' },
  // The first call of the rows that are called again (their later calls: test/api/voice-retries.test.ts,
  // test/api/sandbox-retry-outcomes.test.ts): the plan waits for its next step.
  '0008': { status: 'in_conversation', endedReason: 'customer-did-not-answer' },
  '0009': { status: 'in_conversation', endedReason: 'customer-busy' },
  '0010': { status: 'in_conversation', endedReason: 'voicemail' },
  '0012': { status: 'in_conversation', endedReason: 'customer-did-not-answer' },
  '4242': { status: 'booked', endedReason: 'assistant-ended-call' },
};

describe('the outcome table covers what the tests check', () => {
  it('every row is tested on each of its channels', () => {
    for (const row of SANDBOX_OUTCOME_TABLE) {
      if (row.channels.includes('whatsapp')) assert.ok(WHATSAPP_EXPECTED[row.suffix], row.suffix);
      if (row.channels.includes('voice') && row.outcome !== 'call-rejected')
        assert.ok(VOICE_EXPECTED[row.suffix], row.suffix);
    }
  });
});

describe('sandbox WhatsApp leads, row by row', { concurrency: true }, () => {
  for (const [suffix, expected] of Object.entries(WHATSAPP_EXPECTED)) {
    it(`…${suffix} → ${expected.status}`, async () => {
      const created = await postLead(app.http, whatsapp.sandboxKey, {
        name: 'Ada Sandbox',
        phone: phone(suffix),
        email: 'ada@example.com',
        consent: true,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.deepEqual(created.body, { ok: true, leadId: created.body.leadId, status: 'new', messageQueued: true });
      await settle();
      const got = await getLead(app.http, whatsapp.sandboxKey, created.body.leadId);
      assert.equal(got.status, 200);
      assert.equal(got.body.lead.status, expected.status, JSON.stringify(got.body));
      assert.equal(got.body.lead.livemode, false);
      if (expected.notes) assert.match(got.body.lead.qualificationNotes, expected.notes);
      if (expected.status === 'booked') assert.match(got.body.lead.bookingUid, /\w+/);
      // The model failed: the lead was told a person will answer (src/whatsapp/hand-over.ts).
      if (suffix === '0007') {
        const { rows } = await app.db.pool.query(
          `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound' ORDER BY id`,
          [created.body.leadId],
        );
        assert.equal(rows.at(-1)?.body, 'Thanks — a colleague will reply shortly.');
      }
      // The workspace's own agent config ran the conversation: its questions were asked.
      if (suffix === '0001') {
        const { rows } = await app.db.pool.query(
          `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'outbound' ORDER BY id`,
          [created.body.leadId],
        );
        assert.ok(
          rows.some((r) => r.body.includes('Monthly electricity bill')),
          rows.map((r) => r.body).join(' | '),
        );
      }
    });
  }
});

describe('sandbox voice leads, row by row', { concurrency: true }, () => {
  for (const [suffix, expected] of Object.entries(VOICE_EXPECTED)) {
    it(`…${suffix} → ${expected.status}, ${expected.endedReason}`, async () => {
      const created = await postLead(app.http, voice.sandboxKey, {
        name: 'Ada Sandbox',
        phone: phone(suffix),
        email: 'ada@example.com',
        consent: true,
      });
      assert.equal(created.status, 201, JSON.stringify(created.body));
      assert.equal(created.body.status, 'in_progress');
      await settle();
      const got = await getLead(app.http, voice.sandboxKey, created.body.leadId);
      assert.equal(got.body.lead.status, expected.status, JSON.stringify(got.body));
      assert.equal(got.body.lead.livemode, false);
      const call = got.body.voiceCall;
      const again = ['0004', '0008', '0009', '0010', '0012'].includes(suffix);
      if (again) {
        // Called again later (the contact plan): GET shows that call, `scheduled`; the first call's
        // end is in its session.
        assert.equal(call.status, 'scheduled');
        assert.ok(Date.parse(call.scheduledAt) > Date.parse(got.body.lead.createdAt), call.scheduledAt);
        const { rows } = await app.db.pool.query('SELECT ended_reason FROM call_sessions WHERE provider_call_id = $1', [
          created.body.providerCallId,
        ]);
        assert.equal(rows[0].ended_reason, expected.endedReason);
        return;
      }
      assert.equal(call.providerCallId, created.body.providerCallId);
      assert.equal(call.status, 'ended');
      assert.equal(call.endedReason, expected.endedReason);
      assert.match(call.summary, /\w/);
      assert.match(call.transcript, /^Assistant: Hi Ada/m);
      assert.match(call.recordingUrl, /^https:\/\//);
      assert.ok(call.durationSeconds > 0);
    });
  }

  it('…0006 → the provider refuses the call: 502 voice_dispatch_failed, nothing stored', async () => {
    const number = phone('0006');
    const res = await postLead(app.http, voice.sandboxKey, { name: 'Ada Sandbox', phone: number, consent: true });
    assert.equal(res.status, 502);
    assert.equal(res.body.error, 'voice_dispatch_failed');
    assert.match(res.body.message, /Couldn't Create Call/);
    const { rows } = await app.db.pool.query(`SELECT count(*)::int AS n FROM leads WHERE phone_normalized = $1`, [
      `+${number.replace(/\D/g, '')}`,
    ]);
    assert.equal(rows[0].n, 0);
  });
});

describe('isolation from live providers', () => {
  it('no request of any sandbox lead reached a live provider base URL', async () => {
    await settle();
    assert.deepEqual(trapped, []);
  });

  it('the trap works: a live WhatsApp lead of the same workspace does reach it', async () => {
    const created = await postLead(app.http, whatsapp.apiKey, {
      name: 'Ada Live',
      phone: phone('0001'),
      consent: true,
    });
    assert.equal(created.status, 201);
    await app.relay.drain();
    await worker.drainOnce();
    assert.ok(
      trapped.some((r) => r.startsWith('POST /2010-04-01/Accounts/')),
      trapped.join(', '),
    );
  });
});

// The sandbox rows that play differently attempt by attempt (docs/SANDBOX.md, 0008–0011), through
// the public API with sandbox keys. The simulators count what they sent to a number in this
// process, so the same phone submitted in several workspaces is the 1st, 2nd, 3rd attempt.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../src/db/embedded.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, postLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let worker: TurnWorker;

before(async () => {
  const port = await freePort();
  app = await startTestApp({ env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
  await app.http.listen({ port, host: '127.0.0.1' });
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: () => new Date(),
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
  });
  worker = new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 2 });
});
after(() => app?.close());

/** Relays, runs turn jobs and waits for the simulators until nothing is left (bounded). */
async function settle(): Promise<void> {
  for (let round = 0; round < 100; round++) {
    await app.relay.drain();
    const ran = await worker.drainOnce({ ignoreBackoff: true });
    await app.sandbox.settled();
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM outbox');
    if (ran === 0 && rows[0].n === 0) return;
  }
  throw new Error('the sandbox did not settle within 100 rounds');
}

/** Submits `phone` once per attempt, each in a workspace of its own (a phone is unique per workspace). */
async function attempts(channel: 'voice' | 'whatsapp', phone: string, n: number): Promise<any[]> {
  const got = [];
  for (let i = 0; i < n; i++) {
    const ws = await app.createWorkspace(channel, { agent: SOLAR_AGENT } as WorkspaceConfig);
    const created = await postLead(app.http, ws.sandboxKey, {
      name: 'Ada Sandbox',
      phone,
      email: 'ada@example.com',
      consent: true,
    });
    assert.equal(created.status, 201, JSON.stringify(created.body));
    await settle();
    const read = (await getLead(app.http, ws.sandboxKey, created.body.leadId)).body;
    if (channel === 'voice') {
      // A lead that will be called again shows that call, `scheduled` (docs/API.md, "Reading a
      // lead"); how the call went is the latest session's.
      const { rows } = await app.db.pool.query(
        'SELECT ended_reason FROM call_sessions WHERE lead_id = $1 ORDER BY created_at DESC LIMIT 1',
        [created.body.leadId],
      );
      const pending = await app.db.pool.query(
        "SELECT 1 FROM contact_plans WHERE lead_id = $1 AND ended_at IS NULL AND next_kind IN ('call', 'callback')",
        [created.body.leadId],
      );
      assert.equal(read.voiceCall.status, pending.rows.length > 0 ? 'scheduled' : 'ended');
      read.endedReason = rows[0].ended_reason;
    }
    got.push(read);
  }
  return got;
}

describe('voice rows that change call by call', () => {
  test('…0008: no answer twice, then the 3rd call answers and books', async () => {
    const got = await attempts('voice', '+1 555 201 0008', 3);
    assert.deepEqual(
      got.map((g) => [g.lead.status, g.endedReason]),
      [
        ['in_conversation', 'customer-did-not-answer'],
        ['in_conversation', 'customer-did-not-answer'],
        ['booked', 'assistant-ended-call'],
      ],
    );
  });

  test('…0009: busy, then the next call answers and books', async () => {
    const got = await attempts('voice', '+1 555 202 0009', 2);
    assert.deepEqual(
      got.map((g) => [g.lead.status, g.endedReason]),
      [
        ['in_conversation', 'customer-busy'],
        ['booked', 'assistant-ended-call'],
      ],
    );
  });

  test('…0010: voicemail on every call', async () => {
    const got = await attempts('voice', '+1 555 203 0010', 2);
    for (const g of got) {
      assert.equal(g.lead.status, 'in_conversation');
      assert.equal(g.endedReason, 'voicemail');
    }
  });

  test('…0004: never answers, whichever call', async () => {
    const got = await attempts('voice', '+1 555 204 0004', 3);
    assert.deepEqual(
      got.map((g) => g.endedReason),
      ['customer-did-not-answer', 'customer-did-not-answer', 'customer-did-not-answer'],
    );
  });
});

describe('WhatsApp row that changes template by template', () => {
  test('…0011: silent to the 1st and 2nd template to the number, answers the 3rd and books', async () => {
    const got = await attempts('whatsapp', '+1 555 205 0011', 3);
    assert.deepEqual(
      got.map((g) => g.lead.status),
      ['in_conversation', 'in_conversation', 'booked'],
    );
  });
});

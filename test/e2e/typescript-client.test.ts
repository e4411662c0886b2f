import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { LeadIntakeClient, LeadIntakeError, type LeadResponse } from '../../clients/typescript/src/index.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { CLIENT_DIR, CLIENT_OPENAPI, CLIENT_SCHEMA, generateClientFiles } from '../../scripts/client-types.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The client of clients/typescript/ against the real service over HTTP (no mock): the only
// things injected are the clock the service counts its hourly window with, the client's sleep
// (recorded, and moving that clock), and a fetch that loses one answer on purpose.

let app: TestApp;
let sim: VapiSimulator;
let base: string;
const VAPI = {
  voice: {
    provider: 'vapi' as const,
    apiKey: SIM_API_KEY,
    assistantId: SIM_ASSISTANT_ID,
    phoneNumberId: SIM_PHONE_NUMBER_ID,
  },
};
const clock = new TestClock(Date.parse('2026-11-23T10:59:58.000Z'));

before(async () => {
  sim = await startVapiSimulator();
  app = await startTestApp({ clock, env: { VAPI_BASE_URL: sim.url } });
  base = await app.http.listen({ host: '127.0.0.1', port: 0 });
});
after(async () => {
  await app.close();
  await sim.close();
});

function client(apiKey: string, extra: { fetch?: typeof fetch; onSleep?: (ms: number) => Promise<void> | void } = {}) {
  const sleeps: number[] = [];
  const requests: string[] = [];
  const c = new LeadIntakeClient({
    baseUrl: base,
    apiKey,
    random: () => 0.5,
    fetch: async (input, init) => {
      requests.push(`${init?.method} ${String(input).slice(base.length)}`);
      return (extra.fetch ?? fetch)(input, init);
    },
    sleep: async (ms, signal) => {
      signal?.throwIfAborted();
      sleeps.push(ms);
      clock.advance(ms);
      await extra.onSleep?.(ms);
    },
  });
  return { c, sleeps, requests };
}

const lead = () => ({ name: 'Ada Lovelace', phone: uniquePhone(), consent: true as const });

describe('submitLead follows the API retry rules against the real service', () => {
  test('201: the body, typed', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const { c, requests } = client(apiKey);
    const r = await c.submitLead(lead());
    assert.equal(r.accepted?.status, 'new');
    assert.equal(r.leadId, r.accepted?.leadId);
    assert.equal(requests.length, 1);
  });

  test('400 is not retried; the error carries status, error, issues and the request id', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const { c, requests, sleeps } = client(apiKey);
    const err = await c.submitLead({ ...lead(), phone: 'call me' }).catch((e: unknown) => e);
    assert.ok(err instanceof LeadIntakeError);
    assert.equal(err.status, 400);
    assert.equal(err.error, 'Validation failed.');
    assert.deepEqual(err.issues, [{ path: ['phone'], message: 'Phone must be a valid E.164-style number.' }]);
    assert.match(err.requestId ?? '', /^[0-9a-f-]{36}$/);
    assert.deepEqual([requests.length, sleeps.length], [1, 0]);
  });

  test('409 on a first attempt is an error carrying the existing lead id', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const { c } = client(apiKey);
    const body = lead();
    const first = await c.submitLead(body);
    const err = await c.submitLead(body).catch((e: unknown) => e);
    assert.ok(err instanceof LeadIntakeError);
    assert.deepEqual([err.status, err.error, err.leadId], [409, 'duplicate_phone', first.leadId]);
  });

  test('429 waits the Retry-After the service gave, then succeeds in the next window', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 1 });
    const { c, sleeps, requests } = client(key!.key);
    clock.now = Date.parse('2026-11-23T11:59:58.000Z');
    await c.submitLead(lead());
    const r = await c.submitLead(lead());
    assert.equal(r.accepted?.status, 'new');
    assert.equal(requests.length, 3);
    assert.equal(sleeps.length, 1);
    assert.ok(sleeps[0]! >= 1000 && sleeps[0]! <= 3000, `waited ${sleeps[0]} ms for a window ending in 2 s`);
  });

  test('a 429 asking for longer than maxRetryAfterMs is thrown with its Retry-After', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 1 });
    clock.now = Date.parse('2026-11-23T12:00:00.000Z');
    const { c, sleeps } = client(key!.key);
    await c.submitLead(lead());
    const err = await c.submitLead(lead()).catch((e: unknown) => e);
    assert.ok(err instanceof LeadIntakeError);
    assert.equal(err.status, 429);
    assert.ok(err.retryAfterSeconds! > 60);
    assert.deepEqual(sleeps, []);
  });

  test('502 voice_dispatch_failed is retried twice with growing backoff, then thrown', async () => {
    const { apiKey } = await app.createWorkspace('voice', VAPI);
    sim.setFailure('bad-key');
    const { c, sleeps, requests } = client(apiKey);
    const err = await c.submitLead(lead()).catch((e: unknown) => e);
    sim.setFailure('none');
    assert.ok(err instanceof LeadIntakeError, String(err));
    assert.deepEqual([err.status, err.error], [502, 'voice_dispatch_failed']);
    assert.equal(requests.length, 3);
    assert.deepEqual(sleeps, [750, 1500]); // 1 s then 2 s, each half fixed and half jitter (random 0.5)
  });

  test('a 502 followed by an accepted call: the voice 201', async () => {
    const { apiKey } = await app.createWorkspace('voice', VAPI);
    sim.setFailure('server-error');
    const { c, sleeps } = client(apiKey, { onSleep: () => sim.setFailure('none') });
    const r = await c.submitLead(lead());
    assert.equal(r.accepted?.status, 'in_progress');
    assert.ok(r.accepted && 'providerCallId' in r.accepted && r.accepted.providerCallId);
    assert.deepEqual(sleeps, [750]);
  });

  test('500 is retried with exponential backoff until the service recovers', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    // The service's lead table goes away for two attempts: the real handler answers 500.
    await app.db.pool.query('ALTER TABLE leads RENAME TO leads_away');
    const { c, sleeps, requests } = client(apiKey, {
      onSleep: async () => {
        if (sleeps.length === 2) await app.db.pool.query('ALTER TABLE leads_away RENAME TO leads');
      },
    });
    const r = await c
      .submitLead(lead())
      .finally(() => app.db.pool.query('ALTER TABLE IF EXISTS leads_away RENAME TO leads'));
    assert.equal(r.accepted?.status, 'new');
    assert.equal(requests.length, 3);
    assert.deepEqual(sleeps, [750, 1500]);
  });

  test('a lost answer, then 409 on the retry: success with the lead the first attempt created', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    let calls = 0;
    const { c, requests } = client(apiKey, {
      fetch: async (input, init) => {
        const res = await fetch(input, init);
        if (++calls === 1) throw new TypeError('fetch failed'); // the service answered; the answer is lost
        return res;
      },
    });
    const r = await c.submitLead(lead());
    assert.equal(r.accepted, null);
    assert.equal(requests.length, 2);
    const stored = await app.db.pool.query('SELECT id FROM leads WHERE id = $1', [r.leadId]);
    assert.equal(stored.rowCount, 1);
  });

  test('an abort ends a retry wait at once', async () => {
    const { apiKey } = await app.createWorkspace('voice', VAPI);
    sim.setFailure('bad-key');
    const controller = new AbortController();
    const c = new LeadIntakeClient({
      baseUrl: base,
      apiKey,
      sleep: (_ms, signal) =>
        new Promise((_r, reject) => {
          controller.abort(new Error('stop'));
          reject(signal!.reason);
        }),
    });
    await assert.rejects(c.submitLead(lead(), { signal: controller.signal }), /stop/);
    sim.setFailure('none');
  });
});

describe('getLead and waitForOutcome', () => {
  test('getLead: typed lead; 404 as a typed error', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const { c } = client(apiKey);
    const { leadId } = await c.submitLead(lead());
    const read = await c.getLead(leadId);
    assert.equal(read.lead.status, 'new');
    assert.equal(read.voiceCall, null);
    const err = await c.getLead(crypto.randomUUID()).catch((e: unknown) => e);
    assert.ok(err instanceof LeadIntakeError);
    assert.deepEqual([err.status, err.error], [404, 'Lead not found.']);
  });

  test('polls every 10–30 s until the agent books the lead', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const polls: LeadResponse[] = [];
    const { c, sleeps, requests } = client(apiKey, {
      onSleep: async () => {
        if (sleeps.length === 1)
          await transitionLead(app.db.pool, {
            leadId: polls[0]!.lead.id,
            to: 'in_conversation',
            actor: 'agent',
            event: { type: 'test' },
          });
        if (sleeps.length === 3) {
          await transitionLead(app.db.pool, {
            leadId: polls[0]!.lead.id,
            to: 'booked',
            actor: 'agent',
            event: { type: 'test' },
            set: { bookingUid: 'bk_1', bookingStart: new Date('2026-11-24T15:00:00Z') },
          });
        }
      },
    });
    const { leadId } = await c.submitLead(lead());
    const read = await c.waitForOutcome(leadId, { onPoll: (r) => polls.push(r) });
    assert.equal(read.lead.status, 'booked');
    assert.equal(read.lead.bookingStart, '2026-11-24T15:00:00.000Z');
    assert.deepEqual(
      polls.map((p) => p.lead.status),
      ['new', 'in_conversation', 'in_conversation'],
    );
    assert.deepEqual(sleeps, [20_000, 20_000, 20_000]);
    assert.equal(requests.filter((r) => r.startsWith('GET')).length, 4);
  });

  test('stops when the voice call has ended; never polls faster than every 5 s; aborts', async () => {
    const { apiKey } = await app.createWorkspace('voice', VAPI);
    let leadId = '';
    const { c, sleeps } = client(apiKey, {
      onSleep: async () => {
        // What the end-of-call report leaves behind.
        if (sleeps.length === 2)
          await app.db.pool.query(
            `UPDATE call_sessions SET status = 'ended',
              transcript = 'Assistant: Hi.\n\nLead: Hello.' WHERE lead_id = $1`,
            [leadId],
          );
      },
    });
    ({ leadId } = await c.submitLead(lead()));
    const controller = new AbortController();
    const read = await c.waitForOutcome(leadId, { intervalMs: { min: 100, max: 200 }, signal: controller.signal });
    assert.equal(read.lead.status, 'in_conversation');
    assert.equal(read.voiceCall?.status, 'ended');
    assert.equal(read.voiceCall?.transcript, 'Assistant: Hi.\n\nLead: Hello.');
    assert.deepEqual(sleeps, [5_000, 5_000]);
    controller.abort(new Error('gave up'));
    await assert.rejects(c.waitForOutcome(leadId, { signal: controller.signal }), /gave up/);
  });
});

describe('the generated types', () => {
  test('the checked-in openapi.json and src/schema.ts are what the current document generates', () => {
    const fresh = generateClientFiles();
    assert.equal(
      fs.readFileSync(CLIENT_OPENAPI, 'utf8'),
      fresh.openapi,
      'clients/typescript/openapi.json is stale: npm run client:generate',
    );
    assert.equal(
      fs.readFileSync(CLIENT_SCHEMA, 'utf8'),
      fresh.schema,
      'clients/typescript/src/schema.ts is stale: npm run client:generate',
    );
  });

  test(
    'a program reading lead.status and voiceCall.transcript type-checks with ' +
      "the client package's TypeScript; a wrong field does not",
    () => {
      const tsc = path.join(CLIENT_DIR, 'node_modules/typescript/bin/tsc');
      const ok = spawnSync(process.execPath, [tsc, '-p', path.join(CLIENT_DIR, 'tsconfig.check.json')], {
        encoding: 'utf8',
      });
      assert.equal(ok.status, 0, ok.stdout + ok.stderr);
      const wrong = path.join(CLIENT_DIR, 'examples/wrong-field.ts');
      fs.writeFileSync(
        wrong,
        "import type { LeadResponse } from '../src/index.ts';\n" +
          "export const f = (r: LeadResponse): string => r.lead.statuz + (r.voiceCall?.transcript ?? '');\n",
      );
      try {
        const bad = spawnSync(process.execPath, [tsc, '-p', path.join(CLIENT_DIR, 'tsconfig.check.json')], {
          encoding: 'utf8',
        });
        assert.notEqual(bad.status, 0);
        assert.match(bad.stdout, /Property 'statuz' does not exist/);
      } finally {
        fs.rmSync(wrong);
      }
    },
  );
});

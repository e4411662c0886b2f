// The integration log on a real database: what is stored (secrets redacted, big payloads cut),
// how it is read back, and how retention prunes it.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import {
  listIntegrationEvents,
  MAX_PAYLOAD_CHARS,
  pruneIntegrationEvents,
  recordIntegrationEvent,
  recordIntegrationEventSafely,
  type IntegrationEventInput,
} from '../../src/integration-log/integration-log.ts';
import type { Pool } from '../../src/db/pool.ts';
import { startMaintenance } from '../../src/maintenance.ts';
import { IntegrationLogWriter } from '../../src/integration-log/integration-log-writer.ts';
import { redactSecrets } from '../../src/integration-log/redact.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

let db: TestDatabase;
const logs: string[] = [];
const log = createLogger('info', { write: (line: string) => void logs.push(line) });

before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db.drop();
});

async function workspace(): Promise<string> {
  const id = crypto.randomUUID();
  await db.pool.query(`INSERT INTO workspaces (id, slug, name, channel) VALUES ($1, $2, 'W', 'voice')`, [
    id,
    `log-${id.slice(0, 8)}`,
  ]);
  return id;
}

const entry = (workspaceId: string | null, over: Partial<IntegrationEventInput> = {}): IntegrationEventInput => ({
  provider: 'vapi',
  workspaceId,
  direction: 'in',
  kind: 'status-update',
  httpStatus: 200,
  outcome: 'applied',
  payload: { n: 1 },
  ...over,
});

describe('redaction', () => {
  test('values under secret-looking keys go, at any depth; ids and token counts stay', () => {
    const payload = {
      request: {
        headers: { 'X-Vapi-Secret': 'abc', Authorization: 'Bearer xyz', 'x-signature': 'sig' },
        body: {
          apiKey: 'k',
          api_key: 'k2',
          webhookSecret: 'w',
          hmac: { secretKey: 's', credentialId: 'cred-1' },
          accessToken: 't',
          auth_token: 'a',
        },
      },
      response: {
        usage: { prompt_tokens: 12, total_tokens: 30 },
        list: [{ password: 'p' }, { empty: '', secret: null }],
      },
    };
    assert.deepEqual(redactSecrets(payload), {
      request: {
        headers: { 'X-Vapi-Secret': '[redacted]', Authorization: '[redacted]', 'x-signature': '[redacted]' },
        body: {
          apiKey: '[redacted]',
          api_key: '[redacted]',
          webhookSecret: '[redacted]',
          hmac: { secretKey: '[redacted]', credentialId: 'cred-1' },
          accessToken: '[redacted]',
          auth_token: '[redacted]',
        },
      },
      response: {
        usage: { prompt_tokens: 12, total_tokens: 30 },
        list: [{ password: '[redacted]' }, { empty: '', secret: null }],
      },
    });
  });

  test('known secret values and Bearer credentials are masked inside text; NUL characters dropped', () => {
    const out = redactSecrets(
      { note: 'key vapi-live-0123456789 echoed, auth Bearer abcdefgh12345678, short 1234567 kept\u0000' },
      ['vapi-live-0123456789', '1234567'],
    );
    assert.deepEqual(out, { note: 'key [redacted] echoed, auth Bearer [redacted], short 1234567 kept' });
  });

  test('the input is not changed', () => {
    const input = { apiKey: 'k' };
    redactSecrets(input);
    assert.deepEqual(input, { apiKey: 'k' });
  });
});

describe('recording and reading', () => {
  test('entries come back newest first, redacted, filtered by lead or provider, paged by id', async () => {
    const ws = await workspace();
    const leadId = crypto.randomUUID();
    await recordIntegrationEvent(
      db.pool,
      entry(ws, {
        direction: 'out',
        kind: 'POST /call',
        httpStatus: 201,
        outcome: 'accepted',
        leadId,
        payload: { request: { body: { apiKey: 'secret-key-1234' } } },
      }),
    );
    await recordIntegrationEvent(
      db.pool,
      entry(ws, { leadId, payload: { note: 'says secret-key-1234' }, secrets: ['secret-key-1234'] }),
    );
    await recordIntegrationEvent(db.pool, entry(ws, { provider: 'twilio', kind: 'inbound-message' }));
    const all = await listIntegrationEvents(db.pool, ws);
    assert.deepEqual(
      all.map((e) => `${e.provider} ${e.direction} ${e.kind} ${e.httpStatus} ${e.outcome}`),
      [
        'twilio in inbound-message 200 applied',
        'vapi in status-update 200 applied',
        'vapi out POST /call 201 accepted',
      ],
    );
    assert.deepEqual(all[2]!.payload, { request: { body: { apiKey: '[redacted]' } } });
    assert.deepEqual(all[1]!.payload, { note: 'says [redacted]' });
    assert.ok(all[0]!.createdAt instanceof Date);
    assert.deepEqual(
      (await listIntegrationEvents(db.pool, ws, { leadId })).map((e) => e.kind),
      ['status-update', 'POST /call'],
    );
    assert.deepEqual(
      (await listIntegrationEvents(db.pool, ws, { provider: 'twilio' })).map((e) => e.kind),
      ['inbound-message'],
    );
    assert.deepEqual(
      (await listIntegrationEvents(db.pool, ws, { beforeId: all[1]!.id })).map((e) => e.kind),
      ['POST /call'],
    );
    assert.deepEqual((await listIntegrationEvents(db.pool, ws, { limit: 1 })).length, 1);
    assert.deepEqual(await listIntegrationEvents(db.pool, await workspace()), [], 'per workspace');
  });

  test('a payload over the limit is stored cut and marked', async () => {
    const ws = await workspace();
    await recordIntegrationEvent(db.pool, entry(ws, { payload: { text: 'x'.repeat(MAX_PAYLOAD_CHARS) } }));
    const [e] = await listIntegrationEvents(db.pool, ws);
    const p = e!.payload as { truncated: boolean; chars: number; head: string };
    assert.equal(p.truncated, true);
    assert.equal(p.chars, MAX_PAYLOAD_CHARS + '{"text":""}'.length);
    assert.equal(p.head.length, MAX_PAYLOAD_CHARS);
  });

  test('the safe variant turns a failed write into a warning', async () => {
    await recordIntegrationEventSafely(db.pool, log, entry(crypto.randomUUID())); // no such workspace: foreign key
    assert.ok(logs.some((l) => l.includes('integration log entry not written')));
  });
});

describe('retention', () => {
  async function count(ws: string | null): Promise<number> {
    const { rows } = await db.pool.query(
      'SELECT count(*)::int AS n FROM integration_events WHERE workspace_id IS NOT DISTINCT FROM $1',
      [ws],
    );
    return rows[0].n;
  }

  test(
    'entries older than the age limit go; beyond the cap, a ' + "workspace's oldest go; others are untouched",
    async () => {
      const [a, b] = [await workspace(), await workspace()];
      const old = new Date(Date.now() - 15 * 86_400_000);
      for (const ws of [a, b, null]) await recordIntegrationEvent(db.pool, entry(ws, { kind: 'old', at: old }));
      for (let i = 0; i < 5; i++) await recordIntegrationEvent(db.pool, entry(a, { kind: `a${i}` }));
      for (let i = 0; i < 2; i++) await recordIntegrationEvent(db.pool, entry(b, { kind: `b${i}` }));
      const nullBefore = await count(null);
      const deleted = await pruneIntegrationEvents(db.pool, { maxAgeDays: 14, maxPerWorkspace: 3 });
      assert.ok(deleted >= 3 + 2);
      assert.deepEqual(
        (await listIntegrationEvents(db.pool, a)).map((e) => e.kind),
        ['a4', 'a3', 'a2'],
      );
      assert.deepEqual(
        (await listIntegrationEvents(db.pool, b)).map((e) => e.kind),
        ['b1', 'b0'],
      );
      assert.equal(await count(null), nullBefore - 1, 'rows without a workspace are pruned by age only');
    },
  );

  test(
    'the maintenance pass (src/maintenance.ts): one pass prunes the ' +
      'log and runs the tasks given; stop() waits for it',
    async () => {
      const ws = await workspace();
      await recordIntegrationEvent(db.pool, entry(ws, { at: new Date(Date.now() - 40 * 86_400_000) }));
      const ages: number[] = [];
      const pruner = startMaintenance({
        pool: db.pool,
        log,
        policy: { maxAgeDays: 30, maxPerWorkspace: 1000 },
        intervalMs: 3_600_000,
        tasks: [async (_pool, maxAgeDays) => (ages.push(maxAgeDays), 2)],
      });
      const pass = pruner.runOnce();
      assert.equal(pruner.runOnce(), pass, 'one pass at a time');
      assert.ok((await pass) >= 3);
      assert.deepEqual(ages, [30]);
      assert.equal(await count(ws), 0);
      await pruner.stop();
    },
  );

  // `serve` starts the maintenance with the app and stops it in close() (src/serve.ts); what that
  // relies on: the timer runs a pass each interval, does not keep the process alive, and once
  // stopped runs no more, stop() having waited for the pass in progress.
  test(
    'the maintenance timer: a pass each interval, not holding the ' + 'process; stop() ends it and waits for the pass',
    async (t) => {
      const ws = await workspace();
      await recordIntegrationEvent(db.pool, entry(ws, { at: new Date(Date.now() - 40 * 86_400_000) }));
      const timeouts = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
      const policy = { maxAgeDays: 30, maxPerWorkspace: 1000 };

      const before = timeouts();
      const idle = startMaintenance({ pool: db.pool, log, policy, intervalMs: 3_600_000, tasks: [] });
      assert.equal(timeouts(), before, 'the timer does not keep the process alive');
      await idle.stop();

      t.mock.timers.enable({ apis: ['setInterval'] });
      // The pool counts the statements it is given: a pass starts with one, synchronously.
      let statements = 0;
      const pool = {
        query: (...args: Parameters<Pool['query']>) => {
          statements += 1;
          return db.pool.query(...args);
        },
      } as unknown as Pool;
      let passes = 0;
      let passStarted!: () => void;
      const started = new Promise<void>((resolve) => (passStarted = resolve));
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let passEnded = false;
      const pruner = startMaintenance({
        pool,
        log,
        policy,
        intervalMs: 60_000,
        tasks: [
          async () => {
            passes += 1;
            passStarted();
            await gate;
            passEnded = true;
            return 0;
          },
        ],
      });
      t.mock.timers.tick(59_999);
      assert.equal(statements, 0, 'no pass before the interval');
      t.mock.timers.tick(1);
      assert.equal(statements, 1, 'the interval started a pass');
      await started;
      assert.equal(passes, 1, 'the interval ran a pass');
      assert.equal(await count(ws), 0, 'the pass pruned the old entry');

      let stopped = false;
      const stopping = pruner.stop().then(() => {
        stopped = true;
      });
      await new Promise<void>((resolve) => setImmediate(resolve));
      assert.equal(stopped, false, 'stop() waits while a pass is in progress');
      release();
      await stopping;
      assert.equal(passEnded, true, 'stop() resolved after the pass in progress ended');
      const statementsAtStop = statements;
      t.mock.timers.tick(10 * 60_000);
      assert.equal(statements, statementsAtStop, 'no pass after stop()');
      assert.equal(passes, 1);
    },
  );
});

describe('batched writer (src/integration-log/integration-log-writer.ts)', () => {
  test(
    'entries recorded together are one insert, in the order ' +
      'recorded; each record() resolves once its entry is stored',
    async () => {
      const ws = await workspace();
      const writer = new IntegrationLogWriter(db.pool, log);
      await Promise.all(
        Array.from({ length: 12 }, (_, i) =>
          writer.record(
            entry(ws, { kind: `kind-${i}`, latencyMs: i + 0.4, payload: { i, authToken: 'secret-token' } }),
          ),
        ),
      );
      const rows = (await listIntegrationEvents(db.pool, ws, { limit: 50 })).reverse();
      assert.deepEqual(
        rows.map((r) => r.kind),
        Array.from({ length: 12 }, (_, i) => `kind-${i}`),
      );
      assert.deepEqual(
        rows.map((r) => r.latencyMs),
        Array.from({ length: 12 }, (_, i) => i),
      );
      assert.deepEqual(rows[3]!.payload, { i: 3, authToken: '[redacted]' });
    },
  );

  test('an entry the database refuses is a warning line; the others of its insert are stored', async () => {
    const ws = await workspace();
    const writer = new IntegrationLogWriter(db.pool, log);
    const before = logs.length;
    await Promise.all([
      writer.record(entry(ws, { kind: 'first' })),
      writer.record(entry(crypto.randomUUID(), { kind: 'no-such-workspace' })),
      writer.record(entry(ws, { kind: 'third' })),
    ]);
    assert.deepEqual((await listIntegrationEvents(db.pool, ws)).map((r) => r.kind).reverse(), ['first', 'third']);
    assert.ok(logs.slice(before).some((l) => l.includes('integration log entry not written')));
  });
});

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { buildApp } from '../../src/app.ts';
import { compose } from '../../src/composition.ts';
import { RateLimiter } from '../../src/auth/rate-limiter.ts';
import { createPool } from '../../src/db/pool.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import {
  e164Phone as phone,
  newLead,
  recordingBatches,
  recordingLimiter as recordingOn,
} from '../helpers/lead-batch.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The public API's requests in flight in one process are batched across keys and workspaces:
// one statement counts them (src/auth/rate-limiter.ts), one inserts the admitted WhatsApp leads
// and one reads the GETs' leads (src/leads/lead-batch-statement.ts). Every guarantee of a key's
// own requests still holds: exact counts, from any number of processes; each lead in its own
// workspace; a bad lead failing alone.

let app: TestApp;
const clock = new TestClock(Date.parse('2026-11-23T10:15:00.000Z'));

before(async () => {
  app = await startTestApp({ clock });
});
after(() => app.close());

const recordingLimiter = () => recordingOn(app.db.pool, clock.read);
const counter = async (keyId: string) =>
  (
    await app.db.pool.query(`SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_counters WHERE api_key_id = $1`, [
      keyId,
    ])
  ).rows[0].n as number;
const remainingOf = (res: { headers: Record<string, unknown> }) =>
  Number(/r=(\d+)/.exec(String(res.headers.ratelimit))![1]);

describe('one statement for the requests of many keys', () => {
  test('counts of three keys in one pass: one statement, each key counted on its own', async () => {
    const [a, b, c] = await Promise.all([
      app.createWorkspace('whatsapp'),
      app.createWorkspace('whatsapp'),
      app.createWorkspace('whatsapp'),
    ]);
    const { statements, limiter } = recordingLimiter();
    const answers = await Promise.all([
      limiter.admit(a.apiKeyId, 100),
      limiter.admit(b.apiKeyId, 100),
      limiter.admit(c.apiKeyId, 1),
      limiter.admit(a.apiKeyId, 100),
      limiter.admit(b.apiKeyId, 100),
      limiter.admit(c.apiKeyId, 1),
    ]);
    assert.deepEqual(statements, ['rate-limit-count']);
    assert.deepEqual(
      answers.map((x) => [x.allowed, x.remaining]),
      [
        [true, 99],
        [true, 99],
        [true, 0],
        [true, 98],
        [true, 98],
        [false, 0],
      ],
    );
  });

  test(
    'leads of several workspaces inserted by one statement, each with its ' +
      'event and first turn; duplicates decided per workspace',
    async () => {
      const [a, b] = await Promise.all([app.createWorkspace('whatsapp'), app.createWorkspace('whatsapp')]);
      const shared = phone();
      const onlyA = phone();
      const { statements, batches } = recordingBatches(app.db.pool);
      const answers = await Promise.all([
        batches.insert(newLead(a.workspaceId, shared)),
        batches.insert(newLead(b.workspaceId, shared)),
        batches.insert(newLead(a.workspaceId, shared)),
        batches.insert(newLead(a.workspaceId, onlyA)),
      ]);
      assert.deepEqual(statements, ['lead-insert']);
      assert.deepEqual(
        answers.map((x) => x.kind),
        ['inserted', 'inserted', 'duplicate', 'inserted'],
      );
      assert.equal(answers[2]!.leadId, answers[0]!.leadId, 'the duplicate names the lead its batch created');
      assert.notEqual(answers[0]!.leadId, answers[1]!.leadId);
      const { rows } = await app.db.pool.query(
        `SELECT l.workspace_id, l.phone_normalized, (SELECT count(*)::int
              FROM lead_events e WHERE e.lead_id = l.id) AS events,
              (SELECT count(*)::int FROM outbox o WHERE o.payload->>'leadId' = l.id::text
              AND o.payload->>'workspaceId' = l.workspace_id::text) AS turns
         FROM leads l WHERE l.phone_normalized = ANY($1) ORDER BY l.workspace_id = $2 DESC, l.phone_normalized`,
        [[shared, onlyA], a.workspaceId],
      );
      const row = (ws: string, p: string) => ({ workspace_id: ws, phone_normalized: p, events: 1, turns: 1 });
      assert.deepEqual(rows, [...[shared, onlyA].sort().map((p) => row(a.workspaceId, p)), row(b.workspaceId, shared)]);
      // A phone already stored before the batch: a duplicate without an id (the service looks it up).
      assert.deepEqual(await batches.insert(newLead(b.workspaceId, shared)), { kind: 'duplicate', leadId: null });
      await app.relay.drain();
    },
  );

  test('a lead is read only for its own workspace, also when its owner asks for it in the same statement', async () => {
    const [a, b] = await Promise.all([app.createWorkspace('whatsapp'), app.createWorkspace('whatsapp')]);
    const mine = await postLead(app.http, a.apiKey, validLead());
    assert.equal(mine.status, 201);
    const id = mine.body.leadId as string;
    const { statements, batches } = recordingBatches(app.db.pool);
    const read = (workspaceId: string, livemode = true) =>
      batches.read({ leadId: id, workspaceId, livemode, withCall: false });
    const [foreign, own, otherMode] = await Promise.all([
      read(b.workspaceId),
      read(a.workspaceId),
      read(a.workspaceId, false),
    ]);
    assert.deepEqual(statements, ['lead-read']);
    assert.equal(foreign, null);
    assert.equal(own?.lead.id, id);
    assert.equal(otherMode, null, 'a sandbox key does not read a live lead');
    await app.relay.drain();
  });
});

describe('through the API, many keys at once', () => {
  test('exact per key: three keys with a quota of 4 each, 15 concurrent requests of each', async () => {
    const keys = await Promise.all(
      Array.from({ length: 3 }, async () => {
        const ws = await app.createWorkspace('whatsapp');
        return (await app.workspaces.createKey(ws.slug, { hourlyLimit: 4 }))!.key;
      }),
    );
    const asks = Array.from({ length: 45 }, (_, i) => ({ key: keys[i % 3]!, post: i % 2 === 0 }));
    const answers = await Promise.all(
      asks.map((a) =>
        a.post ? postLead(app.http, a.key, validLead()) : getLead(app.http, a.key, crypto.randomUUID()),
      ),
    );
    for (const key of keys) {
      const mine = answers.filter((_, i) => asks[i]!.key === key);
      assert.equal(mine.filter((a) => a.status !== 429).length, 4);
      assert.deepEqual(
        mine
          .filter((a) => a.status !== 429)
          .map(remainingOf)
          .sort(),
        [0, 1, 2, 3],
      );
    }
    await app.relay.drain();
  });

  test('one lead the database refuses fails alone among the leads of five workspaces', async () => {
    const keys = await Promise.all(
      Array.from({ length: 5 }, async () => (await app.createWorkspace('whatsapp')).apiKey),
    );
    await app.db.pool.query("ALTER TABLE leads ADD CONSTRAINT test_poison CHECK (name <> 'Poison')");
    try {
      const answers = await Promise.all(
        Array.from({ length: 25 }, (_, i) =>
          postLead(app.http, keys[i % 5]!, { ...validLead(), name: i === 12 ? 'Poison' : `Lead ${i}` }),
        ),
      );
      answers.forEach((res, i) => assert.equal(res.status, i === 12 ? 500 : 201, `request ${i}`));
    } finally {
      await app.db.pool.query('ALTER TABLE leads DROP CONSTRAINT test_poison');
      await app.relay.drain();
    }
  });
});

describe('two processes counting one key', () => {
  test('their statements in flight at once: of 12 requests with 5 left, exactly 5 are admitted', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = (await app.workspaces.createKey(ws.slug, { hourlyLimit: 5 }))!;
    // Each process's statement waits at a gate until both have been sent.
    const gates: Array<() => void> = [];
    const gated = {
      query: (async (config: never, values?: never) => {
        await new Promise<void>((open) => gates.push(open));
        return app.db.pool.query(config, values);
      }) as unknown as typeof app.db.pool.query,
    };
    const [one, two] = [new RateLimiter(gated, clock.read), new RateLimiter(gated, clock.read)];
    const answers = Array.from({ length: 12 }, (_, i) => (i % 2 ? one : two).admit(key.id, 5));
    while (gates.length < 2) await new Promise((r) => setImmediate(r));
    gates.splice(0).forEach((open) => open());
    const decided = await Promise.all(answers);
    assert.equal(decided.filter((d) => d.allowed).length, 5);
    assert.deepEqual(
      decided
        .filter((d) => d.allowed)
        .map((d) => d.remaining)
        .sort(),
      [0, 1, 2, 3, 4],
    );
  });

  test(
    'two app instances serve a key of 1,000 an hour: exactly 1,000 ' +
      'admitted, none refused below the limit, every request counted',
    async () => {
      const ws = await app.createWorkspace('whatsapp');
      const limit = 1000;
      const key = (await app.workspaces.createKey(ws.slug, { hourlyLimit: limit }))!;
      // A second process: its own pool, its own rate limiter and lead batches, the same database.
      const pool = createPool(app.db.url, 4);
      const log = createLogger('silent');
      const second = buildApp(compose({ config: app.config, log, clock: app.clock, pool, boss: app.boss }));
      try {
        const ask = (via: TestApp['http'], i: number) =>
          i % 3 === 0 ? postLead(via, key.key, validLead()) : getLead(via, key.key, crypto.randomUUID());
        // Both instances at once, a round at a time; then the second alone, past the limit. A
        // process that kept positions of the count for itself (as leases did) would strand them
        // when its requests stop, and the other would be refused below the limit.
        const answers = [];
        for (let round = 0; round < 4; round++) {
          answers.push(
            ...(await Promise.all(Array.from({ length: 40 }, (_, i) => ask(i % 2 ? second.http : app.http, i)))),
          );
        }
        assert.ok(
          answers.every((a) => a.status !== 429),
          'nothing refused while far below the limit',
        );
        for (let round = 0; round < 9; round++) {
          answers.push(
            ...(await Promise.all(
              Array.from({ length: 100 }, () => getLead(second.http, key.key, crypto.randomUUID())),
            )),
          );
        }
        const admitted = answers.filter((a) => a.status !== 429);
        assert.equal(admitted.length, limit);
        assert.deepEqual(
          admitted.map(remainingOf).sort((x, y) => x - y),
          Array.from({ length: limit }, (_, i) => i),
          'each admitted request its own position',
        );
        assert.equal(await counter(key.id), answers.length, 'every request counted, nothing reserved ahead');
      } finally {
        await second.http.close();
        await pool.end();
        await app.relay.drain();
      }
    },
  );
});

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { leaseSize, RateLimiter } from '../src/auth/rate-limiter.ts';
import { leadBatchStatement, type LeadOp } from '../src/leads/lead-batch-statement.ts';
import { getLead, postLead, validLead } from './helpers/http.ts';
import { e164Phone, insertOp, newLead, recordingLimiter as recordingOn } from './helpers/lead-batch.ts';
import { startTestApp, TestClock, type TestApp } from './helpers/test-app.ts';

// Issue 15: the requests in flight in one process are batched across keys and workspaces (one
// statement per pass of the event loop), and every guarantee of the per-key batches still holds
// per key: exact counts, each lead in its own workspace, a bad lead failing alone.

let app: TestApp;
const clock = new TestClock(Date.parse('2026-11-23T10:15:00.000Z'));

before(async () => {
  app = await startTestApp({ clock });
});
after(() => app.close());

/** Every request may be admitted from a lease, as src/app.ts sets up the public API's limiter. */
const leaseAll = () => true;

const recordingLimiter = (leases = false) => recordingOn(app.db.pool, clock.read, leases);

/** A new WhatsApp workspace and a second key of it with the given hourly limit. */
async function workspaceWithKey(hourlyLimit: number) {
  const ws = await app.createWorkspace('whatsapp');
  return { ws, key: (await app.workspaces.createKey(ws.slug, { hourlyLimit }))! };
}

const insert = insertOp;
const phone = e164Phone;

describe('one statement for the requests of many keys', () => {
  test('counts of three keys in one pass: one statement, each key counted on its own', async () => {
    const [a, b, c] = await Promise.all([app.createWorkspace('whatsapp'), app.createWorkspace('whatsapp'), app.createWorkspace('whatsapp')]);
    const { statements, limiter } = recordingLimiter();
    const answers = await Promise.all([
      limiter.admit(a.apiKeyId, 100), limiter.admit(b.apiKeyId, 100), limiter.admit(c.apiKeyId, 1),
      limiter.admit(a.apiKeyId, 100), limiter.admit(b.apiKeyId, 100), limiter.admit(c.apiKeyId, 1),
    ]);
    assert.deepEqual(statements, ['rate-limit-count']);
    assert.deepEqual(answers.map((x) => [x.decision.allowed, x.decision.remaining]), [
      [true, 99], [true, 99], [true, 0],
      [true, 98], [true, 98], [false, 0],
    ]);
  });

  test('leads of several workspaces inserted by one statement; duplicates decided per workspace; a refused request inserts nothing', async () => {
    const [a, b] = await Promise.all([app.createWorkspace('whatsapp'), app.createWorkspace('whatsapp')]);
    const shared = phone();
    const onlyA = phone();
    const refused = phone();
    const { statements, limiter } = recordingLimiter();
    const answers = await Promise.all([
      limiter.admit(a.apiKeyId, 100, insert(a.workspaceId, shared)),
      limiter.admit(b.apiKeyId, 2, insert(b.workspaceId, shared)),
      limiter.admit(a.apiKeyId, 100, insert(a.workspaceId, shared)),
      limiter.admit(a.apiKeyId, 100, insert(a.workspaceId, onlyA)),
      limiter.admit(b.apiKeyId, 2, { kind: 'read', leadId: crypto.randomUUID(), workspaceId: b.workspaceId, livemode: true, withCall: false }),
      limiter.admit(b.apiKeyId, 2, insert(b.workspaceId, refused)),
    ]);
    assert.deepEqual(statements, ['lead-batch-ir']);
    const kinds = answers.map((x) => (x.output as { kind?: string } | undefined)?.kind ?? (x.decision.allowed ? 'none' : 'refused'));
    assert.deepEqual(kinds, ['inserted', 'inserted', 'duplicate', 'inserted', 'read', 'refused']);
    const out = answers.map((x) => x.output as { leadId?: string } | undefined);
    assert.equal(out[2]!.leadId, out[0]!.leadId, 'the duplicate names the lead its batch created');
    assert.notEqual(out[0]!.leadId, out[1]!.leadId);
    const { rows } = await app.db.pool.query(
      `SELECT l.workspace_id, l.phone_normalized, (SELECT count(*)::int FROM lead_events e WHERE e.lead_id = l.id) AS events,
              (SELECT count(*)::int FROM outbox o WHERE o.payload->>'leadId' = l.id::text AND o.payload->>'workspaceId' = l.workspace_id::text) AS turns
         FROM leads l WHERE l.phone_normalized = ANY($1) ORDER BY l.workspace_id = $2 DESC, l.phone_normalized`,
      [[shared, onlyA, refused], a.workspaceId],
    );
    const row = (ws: string, p: string) => ({ workspace_id: ws, phone_normalized: p, events: 1, turns: 1 });
    const expected = [...[shared, onlyA].sort().map((p) => row(a.workspaceId, p)), row(b.workspaceId, shared)];
    assert.deepEqual(rows, expected);
    await app.relay.drain();
  });

  test('a refused request never takes the lead an admitted request of another key of its workspace creates', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const second = (await app.workspaces.createKey(ws.slug, { hourlyLimit: 1 }))!;
    const p = phone();
    const { statements, limiter } = recordingLimiter();
    const [spent, refused, admitted] = await Promise.all([
      limiter.admit(second.id, 1),
      limiter.admit(second.id, 1, insert(ws.workspaceId, p)),
      limiter.admit(ws.apiKeyId, 100, insert(ws.workspaceId, p)),
    ]);
    assert.deepEqual(statements, ['lead-batch-i']);
    assert.equal(spent.decision.allowed, true);
    assert.deepEqual([refused.decision.allowed, refused.output], [false, undefined]);
    assert.equal((admitted.output as { kind: string }).kind, 'inserted');
    await app.relay.drain();
  });

  test('a lead is read only for its own workspace, also when its owner asks for it in the same statement', async () => {
    const [a, b] = await Promise.all([app.createWorkspace('whatsapp'), app.createWorkspace('whatsapp')]);
    const mine = await postLead(app.http, a.apiKey, validLead());
    assert.equal(mine.status, 201);
    const id = mine.body.leadId as string;
    const { statements, limiter } = recordingLimiter();
    const read = (workspaceId: string): LeadOp => ({ kind: 'read', leadId: id, workspaceId, livemode: true, withCall: false });
    const [foreign, own] = await Promise.all([limiter.admit(b.apiKeyId, 100, read(b.workspaceId)), limiter.admit(a.apiKeyId, 100, read(a.workspaceId))]);
    assert.deepEqual(statements, ['lead-batch-r']);
    assert.deepEqual(foreign.output, { kind: 'read', lead: null });
    assert.equal(own.output?.kind === 'read' ? own.output.lead?.lead.id : 'not a read', id);
    await app.relay.drain();
  });
});

describe("requests admitted from a lease of the key's count", () => {
  const counter = async (keyId: string) =>
    (await app.db.pool.query(`SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_counters WHERE api_key_id = $1`, [keyId])).rows[0].n as number;
  const read = (workspaceId: string): LeadOp => ({ kind: 'read', leadId: crypto.randomUUID(), workspaceId, livemode: true, withCall: false });

  test('no lease below a limit of 1,000 an hour; one position per 500 of the limit, at most 32', () => {
    assert.deepEqual([1, 100, 999, 1000, 5000, 16_000, 1_000_000].map(leaseSize), [0, 0, 0, 2, 10, 32, 32]);
  });

  test('a busy key with a high limit: its count is written once per lease, and each read still gets its own position', async () => {
    const { ws, key } = await workspaceWithKey(100_000);
    const { statements, limiter } = recordingLimiter(true);
    const remaining: number[] = [];
    // One at a time: the first read is counted alone, the second also reserves 32 positions.
    for (let i = 0; i < 2; i++) remaining.push((await limiter.admit(key.id, 100_000, read(ws.workspaceId))).decision.remaining);
    assert.equal(await counter(key.id), 2 + 32);
    for (let i = 0; i < 32; i++) remaining.push((await limiter.admit(key.id, 100_000, read(ws.workspaceId))).decision.remaining);
    assert.equal(await counter(key.id), 34, 'the leased reads wrote nothing');
    assert.equal(statements.length, 34, 'each read still ran its own statement (the lead is read)');
    assert.deepEqual(remaining, Array.from({ length: 34 }, (_, i) => 100_000 - 1 - i));
    // The lease used up: the next read is counted again, with a new lease after it.
    await limiter.admit(key.id, 100_000, read(ws.workspaceId));
    assert.equal(await counter(key.id), 34 + 1 + 32);
    // A POST takes the lease's next position like a read, and its lead is inserted all the same.
    const posted = await limiter.admit(key.id, 100_000, insert(ws.workspaceId, phone()));
    assert.equal(posted.decision.remaining, 100_000 - 36);
    assert.equal((posted.output as { kind: string }).kind, 'inserted');
    assert.equal((await limiter.admit(key.id, 100_000, read(ws.workspaceId))).decision.remaining, 100_000 - 37);
    assert.equal(await counter(key.id), 67, 'the leased POST and read wrote no count');
    await app.relay.drain();
  });

  test('a request with nothing to do in the statement (a voice lead is inserted after it) needs no statement when leased', async () => {
    const { ws, key } = await workspaceWithKey(100_000);
    const { statements, limiter } = recordingLimiter(true);
    for (let i = 0; i < 2; i++) await limiter.admit(key.id, 100_000);
    assert.equal(statements.length, 2);
    const remaining: number[] = [];
    for (let i = 0; i < 32; i++) remaining.push((await limiter.admit(key.id, 100_000)).decision.remaining);
    assert.equal(statements.length, 2, 'admitted from the lease without a round trip');
    assert.deepEqual(remaining, Array.from({ length: 32 }, (_, i) => 100_000 - 3 - i));
    assert.equal(await counter(key.id), 34);
  });

  test('a batch split after a failed statement keeps the positions its requests took from the lease', async () => {
    const { ws, key } = await workspaceWithKey(100_000);
    const { limiter } = recordingLimiter(true);
    for (let i = 0; i < 2; i++) await limiter.admit(key.id, 100_000, read(ws.workspaceId)); // lease: positions 3–34
    const poisoned = (name: string): LeadOp => ({ kind: 'insert', lead: { ...newLead(ws.workspaceId, phone()), name } });
    await app.db.pool.query("ALTER TABLE leads ADD CONSTRAINT test_poison_lease CHECK (name <> 'Poison')");
    let answers;
    try {
      // One pass: one statement for the four, which fails; the halves (and the poisoned one's
      // half again) run with the positions taken the first time.
      answers = await Promise.allSettled(['A', 'B', 'Poison', 'C'].map((n) => limiter.admit(key.id, 100_000, poisoned(n))));
    } finally {
      await app.db.pool.query('ALTER TABLE leads DROP CONSTRAINT test_poison_lease');
    }
    assert.deepEqual(answers.map((a) => a.status), ['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    const fulfilled = answers.flatMap((a) => (a.status === 'fulfilled' ? [a.value] : []));
    assert.deepEqual(fulfilled.map((a) => a.decision.remaining), [100_000 - 3, 100_000 - 4, 100_000 - 6]);
    assert.deepEqual(fulfilled.map((a) => (a.output as { kind: string }).kind), ['inserted', 'inserted', 'inserted']);
    // Positions 3–6 were spent once each: the next request takes 7.
    assert.equal((await limiter.admit(key.id, 100_000, read(ws.workspaceId))).decision.remaining, 100_000 - 7);
    assert.equal(await counter(key.id), 34, 'nothing counted beyond the lease');
    await app.relay.drain();
  });

  test('near the limit nothing is leased: concurrent reads admit exactly what is left', async () => {
    const { ws, key } = await workspaceWithKey(1000);
    const { limiter } = recordingLimiter(true);
    // 980 of the hour's 1,000 spent (by other processes, say).
    const hour = new Date(Math.floor(clock.read().getTime() / 3_600_000) * 3_600_000);
    await app.db.pool.query(`INSERT INTO rate_limit_counters (api_key_id, window_start, count) VALUES ($1, $2, 980)`, [key.id, hour]);
    assert.equal((await limiter.admit(key.id, 1000, read(ws.workspaceId))).decision.remaining, 19);
    const answers = await Promise.all(Array.from({ length: 30 }, () => limiter.admit(key.id, 1000, read(ws.workspaceId))));
    assert.equal(answers.filter((a) => a.decision.allowed).length, 19);
    assert.equal(await counter(key.id), 1011, 'every request counted, no position reserved');
  });
});

describe('through the API, many keys at once', () => {
  test('exact per key: three keys with a quota of 4 each, 15 concurrent requests of each', async () => {
    const keys = await Promise.all(Array.from({ length: 3 }, async () => {
      const ws = await app.createWorkspace('whatsapp');
      return (await app.workspaces.createKey(ws.slug, { hourlyLimit: 4 }))!.key;
    }));
    const asks = Array.from({ length: 45 }, (_, i) => ({ key: keys[i % 3]!, post: i % 2 === 0 }));
    const answers = await Promise.all(asks.map((a) => (a.post ? postLead(app.http, a.key, validLead()) : getLead(app.http, a.key, crypto.randomUUID()))));
    for (const key of keys) {
      const mine = answers.filter((_, i) => asks[i]!.key === key);
      assert.equal(mine.filter((a) => a.status !== 429).length, 4);
      const remaining = mine.filter((a) => a.status !== 429).map((a) => Number(/r=(\d+)/.exec(String(a.headers['ratelimit']))![1]));
      assert.deepEqual(remaining.sort(), [0, 1, 2, 3]);
    }
    await app.relay.drain();
  });

  test("a busy key's POSTs are admitted from a lease: each lead stored, each answer its own position, the count written once per lease", async () => {
    const { ws, key } = await workspaceWithKey(100_000);
    const remaining: number[] = [];
    for (let i = 0; i < 12; i++) {
      const res = await postLead(app.http, key.key, validLead());
      assert.equal(res.status, 201);
      remaining.push(Number(/r=(\d+)/.exec(String(res.headers['ratelimit']))![1]));
    }
    assert.deepEqual(remaining, Array.from({ length: 12 }, (_, i) => 100_000 - 1 - i));
    const counted = await app.db.pool.query(`SELECT sum(count)::int AS n FROM rate_limit_counters WHERE api_key_id = $1`, [key.id]);
    assert.equal(counted.rows[0].n, 2 + 32, 'two counted, the second reserving 32; ten taken from the lease');
    const stored = await app.db.pool.query(`SELECT count(*)::int AS n FROM leads WHERE api_key_id = $1`, [key.id]);
    assert.equal(stored.rows[0].n, 12);
    await app.relay.drain();
  });

  test('one lead the database refuses fails alone among the leads of five workspaces', async () => {
    const keys = await Promise.all(Array.from({ length: 5 }, async () => (await app.createWorkspace('whatsapp')).apiKey));
    await app.db.pool.query("ALTER TABLE leads ADD CONSTRAINT test_poison CHECK (name <> 'Poison')");
    try {
      const answers = await Promise.all(Array.from({ length: 25 }, (_, i) =>
        postLead(app.http, keys[i % 5]!, { ...validLead(), name: i === 12 ? 'Poison' : `Lead ${i}` })));
      answers.forEach((res, i) => assert.equal(res.status, i === 12 ? 500 : 201, `request ${i}`));
    } finally {
      await app.db.pool.query('ALTER TABLE leads DROP CONSTRAINT test_poison');
      await app.relay.drain();
    }
  });
});

describe('two statements in flight', () => {
  /** A limiter whose statements wait at a gate until the test opens it. */
  function gatedLimiter(leases = false) {
    const started: string[] = [];
    const gates: Array<() => void> = [];
    const db = { query: (async (config: { name?: string }, values?: unknown[]) => {
      started.push(config.name ?? 'unnamed');
      await new Promise<void>((open) => gates.push(open));
      return app.db.pool.query(config as never, values as never);
    }) as unknown as typeof app.db.pool.query };
    const limiter = new RateLimiter<LeadOp, unknown>(db, clock.read, leadBatchStatement as never, leases ? leaseAll : undefined);
    const pass = () => new Promise((r) => setImmediate(r));
    return { started, limiter, pass, openAll: () => gates.splice(0).forEach((open) => open()) };
  }

  test('requests that arrive while one statement runs start a second; later ones wait for either to end', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const { started, limiter, pass, openAll } = gatedLimiter();
    const first = [limiter.admit(ws.apiKeyId, 100), limiter.admit(ws.apiKeyId, 100)];
    await pass();
    await pass();
    const second = [limiter.admit(ws.apiKeyId, 100)];
    await pass();
    await pass();
    const third = [limiter.admit(ws.apiKeyId, 100), limiter.admit(ws.apiKeyId, 100)];
    await pass();
    await pass();
    assert.equal(started.length, 2, 'two statements in flight, the third batch waits');
    openAll();
    await Promise.all([...first, ...second]);
    for (let i = 0; i < 20 && started.length < 3; i++) await pass();
    assert.equal(started.length, 3, 'the waiting requests went in one statement');
    openAll();
    const answers = await Promise.all([...first, ...second, ...third]);
    assert.deepEqual(answers.map((a) => a.decision.remaining).sort((x, y) => y - x), [99, 98, 97, 96, 95], 'each request its own position');
  });

  test('exact at the limit with two statements in flight: of 12 requests with 5 left, 5 are admitted', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = (await app.workspaces.createKey(ws.slug, { hourlyLimit: 5 }))!;
    const { limiter, pass, openAll } = gatedLimiter();
    const a = Array.from({ length: 6 }, () => limiter.admit(key.id, 5, insert(ws.workspaceId, phone())));
    await pass();
    await pass();
    const b = Array.from({ length: 6 }, () => limiter.admit(key.id, 5, insert(ws.workspaceId, phone())));
    await pass();
    await pass();
    openAll();
    const answers = await Promise.all([...a, ...b]);
    assert.equal(answers.filter((x) => x.decision.allowed).length, 5);
    assert.equal(answers.filter((x) => (x.output as { kind?: string } | undefined)?.kind === 'inserted').length, 5);
    await app.relay.drain();
  });

  test('one lease at a time per key: a second statement does not reserve another while the first reserves one', async () => {
    const { ws, key } = await workspaceWithKey(100_000);
    const { limiter, pass, openAll } = gatedLimiter(true);
    const read = (): LeadOp => ({ kind: 'read', leadId: crypto.randomUUID(), workspaceId: ws.workspaceId, livemode: true, withCall: false });
    const counter = async () => (await app.db.pool.query(`SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_counters WHERE api_key_id = $1`, [key.id])).rows[0].n as number;
    // The first read only counts (no count seen yet); after it the key may lease.
    const warm = limiter.admit(key.id, 100_000, read());
    await pass();
    openAll();
    await warm;
    const first = limiter.admit(key.id, 100_000, read()); // counted, reserves 32
    await pass();
    await pass();
    const second = limiter.admit(key.id, 100_000, read()); // counted while the first is in flight: no second lease
    await pass();
    await pass();
    openAll();
    await Promise.all([first, second]);
    assert.equal(await counter(), 3 + 32);
  });
});

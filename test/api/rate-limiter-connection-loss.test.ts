import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { connectionFault, createPool, type Pool } from '../../src/db/pool.ts';
import { e164Phone, newLead, recordingBatches, recordingLimiter as recordingOn } from '../helpers/lead-batch.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// A batch statement of the public API (the count, src/auth/rate-limiter.ts; the leads' inserts and
// reads, src/leads/lead-batch-statement.ts) whose connection is lost is run again on another
// connection (docs/RELIABILITY.md "Database faults"). The loss is made
// by a TCP proxy in front of PostgreSQL that closes a connection when the batch statement is
// sent on it, before PostgreSQL sees it: what a pooled connection whose backend was just
// terminated does, without the race of a real termination.

let app: TestApp;
let proxy: net.Server;
let pool: Pool;
/** How many more statements whose name matches `cutting` the proxy cuts. */
let cuts = 0;
const BATCHES = /lead-insert|lead-read|rate-limit-count/;
let cutting = BATCHES;
/** While set, the proxy accepts connections and never answers (a host that drops packets). */
let blackhole = false;
const clock = new TestClock(Date.parse('2026-11-26T10:15:00.000Z'));

before(async () => {
  app = await startTestApp({ clock });
  const target = new URL(app.db.url);
  proxy = net.createServer((client) => {
    if (blackhole) {
      client.on('error', () => {});
      return;
    }
    const server = net.connect(Number(target.port || 5432), target.hostname);
    client.on('error', () => server.destroy());
    server.on('error', () => client.destroy());
    server.pipe(client);
    client.on('data', (chunk: Buffer) => {
      // Parse (a new connection) and Bind (a prepared one) both carry the statement's name.
      if (cuts > 0 && cutting.test(chunk.toString('latin1'))) {
        cuts -= 1;
        client.destroy();
        server.destroy();
        return;
      }
      server.write(chunk);
    });
    client.on('close', () => server.destroy());
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const via = new URL(app.db.url);
  via.hostname = '127.0.0.1';
  via.port = String((proxy.address() as net.AddressInfo).port);
  pool = createPool(via.toString(), 2);
});
after(async () => {
  await pool.end();
  proxy.close();
  await app.close();
});

/** A limiter through the proxy (or `through`) that records the name of every statement it sends. */
const recordingLimiter = (through: Pool = pool) => recordingOn(through, clock.read);
/** The lead batches through the proxy (or `through`), recording likewise. */
const recording = (through: Pool = pool) => recordingBatches(through);
const phone = e164Phone;
const leadsWith = async (phones: string[]) =>
  (await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE phone_normalized = ANY($1)', [phones])).rows[0]
    .n as number;

describe('a batch statement whose connection is lost', () => {
  test('an insert alone: run once more on a fresh connection, and its lead is inserted once', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const p = phone();
    const { statements, batches } = recording();
    await pool.query('SELECT 1'); // a pooled connection for the statement to be sent on
    cuts = 1;
    const answer = await batches.insert(newLead(ws.workspaceId, p));
    assert.equal(cuts, 0, 'the proxy cut the first statement');
    assert.equal(answer.kind, 'inserted');
    assert.deepEqual(statements, ['lead-insert', 'lead-insert']);
    assert.equal(await leadsWith([p]), 1);
  });

  test('a count alone: run once more, and counted once (the lost statement did nothing)', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const { statements, limiter } = recordingLimiter();
    await pool.query('SELECT 1');
    cuts = 1;
    const decision = await limiter.admit(ws.apiKeyId, 100);
    assert.equal(cuts, 0, 'the proxy cut the first statement');
    assert.deepEqual(statements, ['rate-limit-count', 'rate-limit-count']);
    assert.deepEqual([decision.allowed, decision.remaining], [true, 99]);
  });

  test('a read: run once more, and the lead found', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const { batches } = recording(app.db.pool);
    const inserted = await batches.insert(newLead(ws.workspaceId, phone()));
    const { statements, batches: viaProxy } = recording();
    await pool.query('SELECT 1');
    cuts = 1;
    const found = await viaProxy.read({
      leadId: inserted.leadId!,
      workspaceId: ws.workspaceId,
      livemode: true,
      withCall: false,
    });
    assert.equal(found?.lead.id, inserted.leadId);
    assert.deepEqual(statements, ['lead-read', 'lead-read']);
  });

  test('a batch of several: run whole once more, not split request by request', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const phones = [phone(), phone(), phone(), phone()];
    const { statements, batches } = recording();
    cuts = 1;
    const answers = await Promise.all(phones.map((p) => batches.insert(newLead(ws.workspaceId, p))));
    assert.deepEqual(
      answers.map((a) => a.kind),
      ['inserted', 'inserted', 'inserted', 'inserted'],
    );
    assert.deepEqual(statements, ['lead-insert', 'lead-insert']);
    assert.equal(await leadsWith(phones), 4);
  });

  test(
    'several dead connections in a row (a failover kills them all at ' +
      'once): tried until one works, three tries more at most',
    async () => {
      const ws = await app.createWorkspace('whatsapp');
      const phones = [phone(), phone()];
      const { statements, batches } = recording();
      cuts = 3;
      const answers = await Promise.all(phones.map((p) => batches.insert(newLead(ws.workspaceId, p))));
      assert.deepEqual(
        answers.map((a) => a.kind),
        ['inserted', 'inserted'],
      );
      assert.deepEqual(statements, ['lead-insert', 'lead-insert', 'lead-insert', 'lead-insert']);
      assert.equal(await leadsWith(phones), 2);
    },
  );

  test('lost on every try: every request of the batch gets the error at once, after four statements', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const phones = [phone(), phone(), phone()];
    const { statements, batches } = recording();
    cuts = 4;
    const answers = await Promise.allSettled(phones.map((p) => batches.insert(newLead(ws.workspaceId, p))));
    for (const a of answers) {
      assert.equal(a.status, 'rejected');
      assert.equal(connectionFault(a.reason), 'lost', String(a.reason));
    }
    assert.equal(statements.length, 4);
    assert.equal(await leadsWith(phones), 0);
    // The pool carries on: the next request is done on a fresh connection.
    const next = await batches.insert(newLead(ws.workspaceId, phones[0]!));
    assert.equal(next.kind, 'inserted');
  });
});

describe('an API key looked up on a connection that is lost', () => {
  test('is looked up again on another connection, not answered with an error', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const authenticator = new Authenticator({ pool, clock: clock.read, log: app.log, cacheTtlMs: 60_000 });
    await pool.query('SELECT 1');
    cuts = 1;
    cutting = /find-api-key-by-hash/;
    try {
      const outcome = await authenticator.authenticate(`Bearer ${ws.apiKey}`);
      assert.equal(cuts, 0, 'the proxy cut the first lookup');
      assert.equal(outcome.ok, true);
    } finally {
      cutting = BATCHES;
      cuts = 0;
    }
  });
});

describe('a database host that does not answer', () => {
  test(
    'a batch whose connection cannot be made: every request gets the error ' +
      'after one statement (not split request by request, not retried)',
    async () => {
      const ws = await app.createWorkspace('whatsapp');
      // A pool of its own with no connection open yet, and a short connect timeout (the service's
      // is 5 s): split request by request, eight requests would wait for fifteen timeouts in a row.
      const url = new URL(app.db.url);
      url.hostname = '127.0.0.1';
      url.port = String((proxy.address() as net.AddressInfo).port);
      const fresh = new pg.Pool({ connectionString: url.toString(), max: 2, connectionTimeoutMillis: 200 });
      fresh.on('error', () => {});
      blackhole = true;
      try {
        const { statements, batches } = recording(fresh);
        const phones = Array.from({ length: 8 }, phone);
        const answers = await Promise.allSettled(phones.map((p) => batches.insert(newLead(ws.workspaceId, p))));
        for (const a of answers) {
          assert.equal(a.status, 'rejected');
          assert.equal(connectionFault(a.reason), 'unreachable', String(a.reason));
        }
        assert.deepEqual(statements, ['lead-insert']);
        // The count likewise: one statement for the eight.
        const counting = recordingLimiter(fresh);
        const counts = await Promise.allSettled(phones.map(() => counting.limiter.admit(ws.apiKeyId, 100)));
        assert.ok(counts.every((a) => a.status === 'rejected' && connectionFault(a.reason) === 'unreachable'));
        assert.deepEqual(counting.statements, ['rate-limit-count']);
      } finally {
        blackhole = false;
        await fresh.end();
      }
    },
  );
});

describe('which failures are a lost connection', () => {
  test(
    'a backend terminated under a query (57P01) and a closed socket are lost, a ' +
      "refused connection unreachable; the query's own errors neither",
    async () => {
      const client = new pg.Client({ connectionString: app.db.url });
      await client.connect();
      client.on('error', () => {});
      const pid = (await client.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;
      const sleeping = client.query('SELECT pg_sleep(30)').then(
        () => undefined,
        (err: unknown) => err,
      );
      await app.db.pool.query('SELECT pg_terminate_backend($1)', [pid]);
      const terminated = await sleeping;
      assert.equal((terminated as { code?: string }).code, '57P01');
      assert.equal(connectionFault(terminated), 'lost');
      assert.equal(connectionFault(new Error('Connection terminated unexpectedly')), 'lost');
      await client.end().catch(() => {});

      // A port nothing listens on: a closed server, refused at once.
      const closed = net.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as net.AddressInfo).port;
      await new Promise((resolve) => closed.close(resolve));
      const refused = await new pg.Client({ host: '127.0.0.1', port, user: 'postgres' }).connect().then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.equal(connectionFault(refused), 'unreachable', String(refused));

      const bad = await app.db.pool.query("SELECT 'x'::uuid").then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.equal((bad as { code?: string }).code, '22P02');
      assert.equal(connectionFault(bad), null);
      const division = await app.db.pool.query('SELECT 1/0').then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.equal(connectionFault(division), null);
    },
  );
});

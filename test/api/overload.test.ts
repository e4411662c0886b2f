// Load shedding (src/http/overload-guard.ts), deterministically: a bound of 2 requests in flight,
// two requests held in the database by a lock this test owns, and then a third (no waiting line
// here; the line has its own app below). No timing. Over real HTTP: the guard sits on the
// server's request listener, which inject() does not pass.
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import type { PoolClient } from 'pg';
import { validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;
let base: string;

before(async () => {
  app = await startTestApp({
    env: {
      MAX_REQUESTS_IN_FLIGHT: '2',
      MAX_REQUESTS_WAITING: '0',
      MAX_EVENT_LOOP_DELAY_MS: '0',
      BUSY_RETRY_AFTER_SECONDS: '3',
    },
  });
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`;
  ({ apiKey: key } = await app.createWorkspace('whatsapp'));
  // Authenticated once, so the held requests below wait in their counting statement, not on the key.
  assert.equal((await post(validLead())).status, 201);
});

async function post(body: unknown, to = { base, key }): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(`${to.base}/api/public/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${to.key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json(), headers: res.headers };
}
after(() => app.close());

/** Holds every request's counting statement until `release` (the rate-limit counters are locked). */
async function holdCounters(of: TestApp = app): Promise<{ release: () => Promise<void> }> {
  const client: PoolClient = await of.db.pool.connect();
  await client.query('BEGIN');
  await client.query('LOCK TABLE rate_limit_counters IN ACCESS EXCLUSIVE MODE');
  return {
    async release() {
      await client.query('COMMIT');
      client.release();
    },
  };
}

async function untilInFlight(n: number, of: TestApp = app): Promise<void> {
  // Bounded by the test runner's timeout; each round yields to the event loop.
  while (of.pressure().inFlight < n) await new Promise((resolve) => setImmediate(resolve));
}

async function untilWaiting(n: number, of: TestApp): Promise<void> {
  while (of.pressure().waiting < n) await new Promise((resolve) => setImmediate(resolve));
}

const health = async (path: string) => {
  const res = await fetch(`${base}${path}`);
  return { status: res.status, body: (await res.json()) as any };
};

describe('past the bound of requests in flight', () => {
  test(
    'the next request is answered at once: 503 `Service is busy; retry ' +
      'shortly.` with Retry-After; the held ones complete',
    async () => {
      const hold = await holdCounters();
      const held = [post(validLead()), post(validLead())];
      await untilInFlight(2);

      const shed = await post(validLead());
      assert.equal(shed.status, 503);
      assert.deepEqual(shed.body, { ok: false, error: 'Service is busy; retry shortly.' });
      assert.equal(shed.headers.get('retry-after'), '3');
      assert.equal(shed.headers.get('content-type'), 'application/json; charset=utf-8');
      const get = await fetch(`${base}/api/public/leads/00000000-0000-0000-0000-000000000000`, {
        headers: { authorization: `Bearer ${key}` },
      });
      assert.equal(get.status, 503, 'reads are shed too');
      await get.arrayBuffer();

      // Health checks are never shed, and report the pressure.
      const live = await health('/healthz');
      assert.equal(live.status, 200);
      assert.equal(live.body.pressure.underPressure, true);
      assert.equal(live.body.pressure.inFlight, 2);
      assert.equal(live.body.pressure.maxInFlight, 2);
      assert.equal(live.body.pressure.shed, 2);
      // The memory figures are read when the report is rendered (getters), and are real.
      assert.ok(
        live.body.pressure.rssBytes > 10e6 && live.body.pressure.heapUsedBytes > 1e6,
        JSON.stringify(live.body.pressure),
      );
      const ready = await health('/readyz');
      assert.equal(ready.status, 503);
      assert.equal(ready.body.error, 'Service is busy; retry shortly.');

      await hold.release();
      assert.deepEqual(
        (await Promise.all(held)).map((r) => r.status),
        [201, 201],
      );
      assert.equal(app.pressure().inFlight, 0);
      assert.equal((await post(validLead())).status, 201, 'served again once below the bound');
      const after = await health('/readyz');
      assert.equal(after.status, 200);
      assert.equal(after.body.pressure.underPressure, false);
    },
  );

  test('a shed request stores nothing and is not counted against the key', async () => {
    const hold = await holdCounters();
    const held = [post(validLead()), post(validLead())];
    await untilInFlight(2);
    const lead = validLead();
    assert.equal((await post(lead)).status, 503);
    await hold.release();
    await Promise.all(held);
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE phone = $1', [lead.phone]);
    assert.equal(rows[0].n, 0);
    assert.equal((await post(lead)).status, 201, 'the same lead, retried, is accepted');
  });

  test('provider webhooks are not shed', async () => {
    const hold = await holdCounters();
    const held = [post(validLead()), post(validLead())];
    await untilInFlight(2);
    // An unknown workspace: the webhook route answers (404), it is not refused as busy.
    const res = await fetch(`${base}/api/webhooks/calcom/no-such-workspace`, {
      method: 'POST',
      body: '{}',
      headers: { 'content-type': 'application/json' },
    });
    assert.equal(res.status, 404);
    await res.arrayBuffer();
    await hold.release();
    await Promise.all(held);
  });
});

describe('the waiting line past the bound', () => {
  // One slot, a line of one, and a wait limit far beyond the test's own steps (60 s) for the
  // first test; the second uses a limit of 1 ms (the request is refused by the line's sweep).
  const lineApp = async (waitMs: string) => {
    const a = await startTestApp({
      env: {
        MAX_REQUESTS_IN_FLIGHT: '1',
        MAX_REQUESTS_WAITING: '1',
        MAX_REQUEST_WAIT_MS: waitMs,
        MAX_EVENT_LOOP_DELAY_MS: '0',
      },
    });
    await a.http.listen({ port: 0, host: '127.0.0.1' });
    const to = {
      base: `http://127.0.0.1:${(a.http.server.address() as AddressInfo).port}`,
      key: (await a.createWorkspace('whatsapp')).apiKey,
    };
    assert.equal((await post(validLead(), to)).status, 201);
    return { a, to };
  };

  test(
    'a request past the bound waits for a slot and is served; ' + 'one the line cannot take is refused at once',
    async () => {
      const { a, to } = await lineApp('60000');
      try {
        const hold = await holdCounters(a);
        const held = post(validLead(), to);
        await untilInFlight(1, a);
        const waiting = post(validLead(), to);
        await untilWaiting(1, a);
        const refused = await post(validLead(), to);
        assert.equal(refused.status, 503, 'the line is full');
        assert.deepEqual(refused.body, { ok: false, error: 'Service is busy; retry shortly.' });
        assert.equal(a.pressure().waiting, 1);
        await hold.release();
        assert.deepEqual(
          [(await held).status, (await waiting).status],
          [201, 201],
          'the waiting request is let in when the slot frees',
        );
        assert.equal(a.pressure().waiting, 0);
      } finally {
        await a.close();
      }
    },
  );

  test('a request that waited its limit is answered 503, and the line empties', async () => {
    const { a, to } = await lineApp('1');
    try {
      const hold = await holdCounters(a);
      const held = post(validLead(), to);
      await untilInFlight(1, a);
      const waited = await post(validLead(), to);
      assert.equal(waited.status, 503);
      assert.deepEqual(waited.body, { ok: false, error: 'Service is busy; retry shortly.' });
      assert.equal(a.pressure().waiting, 0);
      await hold.release();
      assert.equal((await held).status, 201);
    } finally {
      await a.close();
    }
  });
});

/** An app listening on a free port, with its URL. */
async function listening(env: Record<string, string>) {
  const app = await startTestApp({ env });
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}` };
}

/**
 * Blocks the event loop for 300 ms, then waits (bounded) for @fastify/under-pressure's next sample
 * to show it. A sample taken just before the delay registers misses it, so callers try a few
 * times. True when the sample shows it.
 */
async function blockUntilSampled(app: TestApp): Promise<boolean> {
  const until = Date.now() + 300;
  while (Date.now() < until) {
    /* busy: the event loop is blocked */
  }
  for (let i = 0; i < 40 && app.pressure().eventLoopDelayMs <= 1; i++)
    await new Promise((resolve) => setTimeout(resolve, 50));
  return app.pressure().eventLoopDelayMs > 1;
}

const postEmpty = (url: string) =>
  fetch(`${url}/api/public/leads`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });

describe('a lagging event loop', () => {
  test(
    'while the sampled delay is over MAX_EVENT_LOOP_DELAY_MS, the ' + 'public API is refused and health still answers',
    async () => {
      const { app: lagging, url } = await listening({ MAX_EVENT_LOOP_DELAY_MS: '1', EVENT_LOOP_GRACE_MS: '0' });
      try {
        // A sample after the request could clear the delay first, so a few attempts; one refusal is the proof.
        let refused = false;
        for (let attempt = 0; attempt < 5 && !refused; attempt++) {
          await blockUntilSampled(lagging);
          const res = await postEmpty(url);
          const body = await res.json();
          if (res.status === 503) {
            refused = true;
            assert.deepEqual(body, { ok: false, error: 'Service is busy; retry shortly.' });
            assert.equal((await fetch(`${url}/healthz`)).status, 200);
          } else {
            assert.equal(res.status, 401, 'not refused: answered as usual');
          }
        }
        assert.ok(refused, 'a lagging loop must shed the public API');
      } finally {
        await lagging.close();
      }
    },
  );
});

describe('a process just started', () => {
  test(
    "the start's own work in the delay samples sheds nothing: " + 'the first requests after listening are served',
    async () => {
      // The grace is longer than this test can take, so it holds whatever the machine's speed.
      const { app: started, url } = await listening({ MAX_EVENT_LOOP_DELAY_MS: '1', EVENT_LOOP_GRACE_MS: '600000' });
      try {
        // The loop kept busy as by a start's route and schema compilation, until a sample shows it.
        let seen = false;
        for (let attempt = 0; attempt < 5 && !seen; attempt++) {
          if (!(await blockUntilSampled(started))) continue;
          seen = true;
          assert.equal((await postEmpty(url)).status, 401, 'served (no key), not refused');
        }
        assert.ok(seen, 'a sample showed the delay');
      } finally {
        await started.close();
      }
    },
  );
});

describe('shutting down', () => {
  test('a request that arrives while the server closes gets the same 503 in our shape', async () => {
    const other = await startTestApp();
    try {
      await other.http.listen({ port: 0, host: '127.0.0.1' });
      const { port } = other.http.server.address() as AddressInfo;
      const socket = net.connect(port, '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      let answer = '';
      socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
      const ended = new Promise((resolve) => socket.once('close', resolve));
      // A request begun before the close (so the connection is not idle), finished after it.
      socket.write('GET /healthz HTTP/1.1\r\n');
      await untilParsing(other);
      const closing = other.http.close();
      while (!other.pressure().underPressure) await new Promise((resolve) => setImmediate(resolve));
      socket.write('Host: x\r\n\r\n');
      await ended;
      await closing;
      assert.match(answer, /^HTTP\/1\.1 503 /);
      assert.match(answer, /content-type: application\/json; charset=utf-8/i);
      assert.ok(answer.endsWith('{"ok":false,"error":"Service is busy; retry shortly."}'), answer);
    } finally {
      await other.close().catch(() => {});
    }
  });
});

/** Until the server has started parsing a request (the connection is then active, not idle). */
async function untilParsing(a: TestApp): Promise<void> {
  // Node counts the connection as active from the first byte of a request on.
  for (;;) {
    const n = await new Promise<number>((resolve, reject) =>
      a.http.server.getConnections((err, count) => (err ? reject(err) : resolve(count))),
    );
    if (n > 0) break;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

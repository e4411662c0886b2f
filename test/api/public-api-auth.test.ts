import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { revokeApiKey } from '../../src/workspaces/api-key-queries.ts';
import { Authenticator } from '../../src/auth/authenticator.ts';
import { RateLimiter } from '../../src/auth/rate-limiter.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
const clock = new TestClock(Date.parse('2026-11-22T10:59:00.250Z'));

before(async () => {
  // Cache TTL 0: revocations and deletions made in the database apply to the next request.
  app = await startTestApp({ clock, env: { API_KEY_CACHE_TTL_MS: '0' } });
});
after(() => app.close());

describe('authentication', () => {
  test(
    'concurrent requests of a key nobody looked up yet share one lookup ' +
      '(a flood after a start does not queue one per request)',
    async () => {
      const { apiKey } = await app.createWorkspace('whatsapp');
      let lookups = 0;
      const counting = {
        query: (...args: unknown[]) => {
          lookups += 1;
          return (app.db.pool.query as (...a: unknown[]) => unknown)(...args);
        },
      } as unknown as typeof app.db.pool;
      const auth = new Authenticator({ pool: counting, clock: clock.read, log: app.log, cacheTtlMs: 60_000 });
      const outcomes = await Promise.all(Array.from({ length: 50 }, () => auth.authenticate(`Bearer ${apiKey}`)));
      assert.ok(outcomes.every((o) => o.ok));
      // One lookup, and the background write of the key's last use.
      assert.equal(lookups, 2);
      await auth.authenticate(`Bearer ${apiKey}`);
      assert.equal(lookups, 2, 'then served from the cache');
    },
  );

  test('the three 401 bodies, on both endpoints', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const cases: [Record<string, string>, string][] = [
      [{}, 'Missing Authorization header.'],
      [{ authorization: '' }, 'Missing Authorization header.'],
      [{ authorization: `Basic ${apiKey}` }, 'Authorization header must use the `Bearer <api key>` scheme.'],
      [{ authorization: apiKey }, 'Authorization header must use the `Bearer <api key>` scheme.'],
      [{ authorization: 'Bearer' }, 'Authorization header must use the `Bearer <api key>` scheme.'],
      [{ authorization: 'Bearer li_live_doesnotexist' }, 'API key is invalid or revoked.'],
      [{ authorization: `Bearer ${apiKey}x` }, 'API key is invalid or revoked.'],
    ];
    for (const [headers, error] of cases) {
      const post = await postLead(app.http, null, validLead(), { 'content-type': 'application/json', ...headers });
      const get = await getLead(app.http, null, crypto.randomUUID(), headers);
      for (const res of [post, get]) {
        assert.equal(res.status, 401, JSON.stringify(headers));
        assert.deepEqual(res.body, { ok: false, error });
      }
    }
  });

  test('a revoked key → 401; a key of a deleted workspace → 404 Workspace not found.', async () => {
    const a = await app.createWorkspace('whatsapp');
    assert.equal((await postLead(app.http, a.apiKey, validLead())).status, 201);
    await revokeApiKey(app.db.pool, a.apiKeyId);
    const revoked = await postLead(app.http, a.apiKey, validLead());
    assert.equal(revoked.status, 401);
    assert.deepEqual(revoked.body, { ok: false, error: 'API key is invalid or revoked.' });

    const b = await app.createWorkspace('whatsapp');
    const created = await postLead(app.http, b.apiKey, validLead());
    await app.workspaces.delete(b.slug);
    for (const res of [
      await postLead(app.http, b.apiKey, validLead()),
      await getLead(app.http, b.apiKey, created.body.leadId),
    ]) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { ok: false, error: 'Workspace not found.' });
    }
  });

  test('last_used_at is recorded without a write per request', async () => {
    const a = await app.createWorkspace('whatsapp');
    await getLead(app.http, a.apiKey, crypto.randomUUID());
    await getLead(app.http, a.apiKey, crypto.randomUUID());
    const read = async () =>
      (await app.db.pool.query('SELECT last_used_at FROM api_keys WHERE id = $1', [a.apiKeyId])).rows[0].last_used_at;
    const deadline = Date.now() + 5000;
    while ((await read()) === null && Date.now() < deadline) await new Promise((r) => setImmediate(r));
    assert.equal((await read()).toISOString(), new Date(clock.now).toISOString());
  });
});

describe('GET /api/public/leads/:id', () => {
  test('returns the spec lead object with nulls for absent fields and voiceCall null for messaging', async () => {
    const { apiKey } = await app.createWorkspace('whatsapp');
    const created = await postLead(
      app.http,
      apiKey,
      validLead({ name: 'Grace Hopper', phone: '+1 555 300 0001', metadata: { a: 1 } }),
    );
    const res = await getLead(app.http, apiKey, created.body.leadId);
    assert.equal(res.status, 200);
    const { lead, voiceCall, ok } = res.body;
    assert.equal(ok, true);
    assert.equal(voiceCall, null);
    assert.deepEqual(
      { ...lead, createdAt: undefined, updatedAt: undefined },
      {
        id: created.body.leadId,
        channel: 'whatsapp',
        name: 'Grace Hopper',
        phone: '+1 555 300 0001',
        email: null,
        goal: null,
        status: 'new',
        qualificationNotes: null,
        bookingUid: null,
        bookingStart: null,
        metadata: { a: 1 },
        formResponses: {},
        createdAt: undefined,
        updatedAt: undefined,
        livemode: true,
      },
    );
    assert.match(lead.createdAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    assert.match(lead.updatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  test("another workspace's lead, an unknown id and a non-UUID give identical 404s", async () => {
    const a = await app.createWorkspace('whatsapp');
    const b = await app.createWorkspace('whatsapp');
    const theirs = await postLead(app.http, b.apiKey, validLead());
    const answers = await Promise.all([
      getLead(app.http, a.apiKey, theirs.body.leadId),
      getLead(app.http, a.apiKey, crypto.randomUUID()),
      getLead(app.http, a.apiKey, 'not-a-uuid'),
      getLead(app.http, a.apiKey, "1' OR '1'='1"),
    ]);
    for (const res of answers) {
      assert.equal(res.status, 404);
      assert.deepEqual(res.body, { ok: false, error: 'Lead not found.' });
    }
    assert.equal((await getLead(app.http, b.apiKey, theirs.body.leadId)).status, 200);
  });
});

describe('GET reads batched across requests', () => {
  test('concurrent GETs of one key each get their own lead, scoped to the workspace', async () => {
    const ours = await app.createWorkspace('whatsapp');
    const theirs = await app.createWorkspace('whatsapp');
    const mine = await Promise.all(Array.from({ length: 6 }, () => postLead(app.http, ours.apiKey, validLead())));
    const foreign = await postLead(app.http, theirs.apiKey, validLead());
    const asks = [
      ...mine.map((m) => ({ id: m.body.leadId as string, expect: 200 })),
      ...mine.map((m) => ({ id: m.body.leadId as string, expect: 200 })),
      { id: foreign.body.leadId as string, expect: 404 },
      { id: crypto.randomUUID(), expect: 404 },
      { id: 'not-a-uuid', expect: 404 },
    ];
    const answers = await Promise.all(asks.map((a) => getLead(app.http, ours.apiKey, a.id)));
    answers.forEach((res, i) => {
      assert.equal(res.status, asks[i]!.expect, `request ${i}`);
      if (res.status === 200) assert.equal(res.body.lead.id, asks[i]!.id);
      else assert.deepEqual(res.body, { ok: false, error: 'Lead not found.' });
      assert.match(String(res.headers.ratelimit), /^"hourly";r=\d+;t=\d+$/);
    });
  });
});

describe('rate limit', () => {
  test('requests of one key that arrive in the same pass of the event loop are counted by one statement', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const statements: string[] = [];
    const db = {
      query: ((config: { name?: string }, values?: unknown[]) => {
        statements.push(config.name ?? 'unnamed');
        return app.db.pool.query(config as never, values as never);
      }) as typeof app.db.pool.query,
    };
    const limiter = new RateLimiter(db, clock.read);
    const first = await Promise.all(Array.from({ length: 5 }, () => limiter.admit(ws.apiKeyId, 100)));
    assert.deepEqual(statements, ['rate-limit-count']);
    assert.deepEqual(
      first.map((a) => a.remaining),
      [99, 98, 97, 96, 95],
    );
  });

  test('exact under 50 concurrent requests with a quota of 10, with an accurate Retry-After', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 10 });
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        i % 2 ? postLead(app.http, key!.key, validLead()) : getLead(app.http, key!.key, crypto.randomUUID()),
      ),
    );
    const limited = answers.filter((a) => a.status === 429);
    assert.equal(answers.length - limited.length, 10);
    const createdLeads = answers.filter((a) => a.status === 201).length;
    const stored = await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    assert.equal(stored.rows[0].n, createdLeads, 'a refused POST stores nothing');
    assert.equal(limited.length, 40);
    for (const res of limited) {
      assert.deepEqual(res.body, { ok: false, error: 'Rate limit exceeded.' });
      // 10:59:00.250 → the window ends at 11:00:00, 59.75 s later: rounded up.
      assert.equal(res.headers['retry-after'], '60');
      assert.equal(res.headers.ratelimit, '"hourly";r=0;t=60');
      assert.equal(res.headers['ratelimit-policy'], '"hourly";q=10;w=3600');
    }
    const remaining = answers.filter((a) => a.status !== 429).map((a) => String(a.headers.ratelimit));
    assert.deepEqual(
      remaining.map((h) => Number(/r=(\d+)/.exec(h)![1])).sort((x, y) => x - y),
      [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    );

    clock.advance(60_000);
    const next = await getLead(app.http, key!.key, crypto.randomUUID());
    assert.equal(next.status, 404, 'a new window admits requests again');
    assert.equal(next.headers.ratelimit, '"hourly";r=9;t=3600');
  });

  test('a body over 64 KiB (refused before its handler) counts too', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 2 });
    const big = await postLead(app.http, key!.key, JSON.stringify({ ...validLead(), goal: 'x'.repeat(70 * 1024) }));
    assert.equal(big.status, 413);
    assert.match(String(big.headers.ratelimit), /^"hourly";r=1;t=\d+$/);
    assert.equal((await postLead(app.http, key!.key, 'not json')).status, 400);
    assert.equal((await postLead(app.http, key!.key, validLead())).status, 429, 'the bad requests spent the quota');
  });

  test('over the quota, an invalid body or bad JSON is 429, not 400', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 1 });
    assert.equal((await getLead(app.http, key!.key, crypto.randomUUID())).status, 404);
    const invalid = await postLead(app.http, key!.key, { ...validLead(), phone: 'not a phone' });
    assert.equal(invalid.status, 429);
    assert.deepEqual(invalid.body, { ok: false, error: 'Rate limit exceeded.' });
    assert.ok(invalid.headers['retry-after']);
    assert.equal((await postLead(app.http, key!.key, 'not json')).status, 429);
  });

  test("failed authentication never spends a key's quota; keys count separately", async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 2 });
    for (let i = 0; i < 5; i++) await getLead(app.http, `${key!.key}x`, crypto.randomUUID());
    assert.equal((await getLead(app.http, key!.key, crypto.randomUUID())).status, 404);
    assert.equal((await getLead(app.http, key!.key, crypto.randomUUID())).status, 404);
    assert.equal((await getLead(app.http, key!.key, crypto.randomUUID())).status, 429);
    assert.equal(
      (await getLead(app.http, ws.apiKey, crypto.randomUUID())).status,
      404,
      'the default key has its own quota',
    );
  });

  test('counters live in PostgreSQL: a second app instance on the same database shares them', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const key = await app.workspaces.createKey(ws.slug, { hourlyLimit: 3 });
    const { buildApp } = await import('../../src/app.ts');
    const { compose } = await import('../../src/composition.ts');
    const log = (await import('../../src/shared/logger.ts')).createLogger('silent');
    // A second process's graph (its own rate limiter), on the same database.
    const second = buildApp(compose({ config: app.config, log, clock: clock.read, pool: app.db.pool, boss: app.boss }));
    await getLead(app.http, key!.key, crypto.randomUUID());
    await getLead(second.http, key!.key, crypto.randomUUID());
    await getLead(app.http, key!.key, crypto.randomUUID());
    assert.equal((await getLead(second.http, key!.key, crypto.randomUUID())).status, 429);
    await second.http.close();
  });

  test(
    'a request whose count fails is answered 500 after one counting ' +
      'statement: the error hook does not count it again',
    async () => {
      const ws = await app.createWorkspace('whatsapp');
      let counts = 0;
      const failing = new Proxy(app.db.pool, {
        get(target, prop) {
          if (prop !== 'query') return Reflect.get(target, prop, target);
          return (config: { name?: string }, values?: unknown[]) => {
            if (config?.name !== 'rate-limit-count') return target.query(config as never, values as never);
            counts += 1;
            return Promise.reject(
              Object.assign(new Error('relation "rate_limit_counters" does not exist'), { code: '42P01' }),
            );
          };
        },
      });
      const { buildApp } = await import('../../src/app.ts');
      const { compose } = await import('../../src/composition.ts');
      const log = (await import('../../src/shared/logger.ts')).createLogger('silent');
      // The whole graph on the failing pool: the rate limiter and the lead service are the composition's.
      const second = buildApp(compose({ config: app.config, log, clock: app.clock, pool: failing, boss: app.boss }));
      try {
        assert.equal((await getLead(second.http, ws.apiKey, crypto.randomUUID())).status, 500);
        assert.equal((await postLead(second.http, ws.apiKey, validLead())).status, 500);
        assert.equal(counts, 2);
      } finally {
        await second.http.close();
      }
    },
  );
});

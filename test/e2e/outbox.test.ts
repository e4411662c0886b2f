import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { OutboxRelay } from '../../src/jobs/outbox-relay.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let key: string;

before(async () => {
  app = await startTestApp();
  ({ apiKey: key } = await app.createWorkspace('whatsapp'));
});
after(() => app.close());

const count = async (sql: string, params: unknown[] = []) => (await app.db.pool.query(sql, params)).rows[0].n as number;
const jobsFor = (leadId: string) =>
  count("SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'agent-turn' AND data->>'leadId' = $1", [leadId]);

describe('enqueue atomicity (lead + agent-turn)', () => {
  test('one lead the database refuses fails alone; the others of its batch are committed', async () => {
    await app.db.pool.query("ALTER TABLE leads ADD CONSTRAINT test_poison CHECK (name <> 'Poison')");
    try {
      const bodies = Array.from({ length: 20 }, (_, i) => ({ ...validLead(), name: i === 7 ? 'Poison' : `Lead ${i}` }));
      const answers = await Promise.all(bodies.map((b) => postLead(app.http, key, b)));
      answers.forEach((res, i) => assert.equal(res.status, i === 7 ? 500 : 201, `request ${i}`));
      const created = answers.filter((a) => a.status === 201).map((a) => a.body.leadId as string);
      assert.equal(await count('SELECT count(*)::int AS n FROM leads WHERE id = ANY($1)', [created]), 19);
      assert.equal(
        await count("SELECT count(*)::int AS n FROM outbox WHERE payload->>'leadId' = ANY($1)", [created]),
        19,
      );
      assert.equal(await count("SELECT count(*)::int AS n FROM leads WHERE name = 'Poison'"), 0);
    } finally {
      await app.db.pool.query('ALTER TABLE leads DROP CONSTRAINT test_poison');
      await app.relay.drain();
    }
  });

  test('no lead without its job: when the outbox insert fails, the lead is not committed either', async () => {
    await app.db.pool.query("ALTER TABLE outbox ADD CONSTRAINT test_refuse CHECK (queue <> 'agent-turn')");
    try {
      const body = validLead();
      const res = await postLead(app.http, key, body);
      assert.equal(res.status, 500);
      assert.deepEqual(res.body, { ok: false, error: 'Internal server error.' });
      assert.equal(await count('SELECT count(*)::int AS n FROM leads WHERE phone = $1', [body.phone]), 0);
    } finally {
      await app.db.pool.query('ALTER TABLE outbox DROP CONSTRAINT test_refuse');
    }
  });

  test('no job without its lead row committed, and a failed relay pass loses nothing', async () => {
    await app.db.pool.query(`CREATE FUNCTION test_refuse_job() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by test'; END $$`);
    await app.db.pool.query(
      'CREATE TRIGGER test_refuse BEFORE INSERT ON pgboss.job FOR EACH ROW EXECUTE FUNCTION test_refuse_job()',
    );
    let leadId: string;
    try {
      const res = await postLead(app.http, key, validLead());
      assert.equal(res.status, 201);
      leadId = res.body.leadId;
      await assert.rejects(app.relay.relayBatch(), /refused by test/);
      assert.equal(await jobsFor(leadId), 0);
      assert.equal(await count("SELECT count(*)::int AS n FROM outbox WHERE payload->>'leadId' = $1", [leadId]), 1);
    } finally {
      await app.db.pool.query('DROP TRIGGER test_refuse ON pgboss.job');
      await app.db.pool.query('DROP FUNCTION test_refuse_job()');
    }
    await app.relay.drain();
    assert.equal(await jobsFor(leadId), 1);
    assert.equal(await count('SELECT count(*)::int AS n FROM outbox'), 0);
  });

  test('a process killed between the commit and the relay: the next relay creates the job', async () => {
    const phone = '+1 555 900 1234';
    const child = spawn(process.execPath, ['test/fixtures/commit-then-die.ts'], {
      env: { ...process.env, DATABASE_URL: app.db.url, WORKSPACE_KEY: key, PHONE: phone },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
      child.on('exit', (_code, sig) => resolve(sig)),
    );
    assert.equal(signal, 'SIGKILL');
    const lead = await app.db.pool.query('SELECT id FROM leads WHERE phone = $1', [phone]);
    assert.equal(lead.rowCount, 1, 'the lead was committed before the kill');
    const leadId = lead.rows[0].id;
    assert.equal(await jobsFor(leadId), 0);
    // A fresh relay, as a restarted process would run it, finds the row on its first pass.
    const relay = new OutboxRelay({
      pool: app.db.pool,
      boss: app.boss,
      log: (await import('../../src/shared/logger.ts')).createLogger('silent'),
      pollMs: 60_000,
    });
    assert.ok((await relay.drain()) >= 1);
    assert.equal(await jobsFor(leadId), 1);
  });

  test('concurrent relays never create a job twice', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 30; i++) ids.push((await postLead(app.http, key, validLead())).body.leadId);
    const other = new OutboxRelay({
      pool: app.db.pool,
      boss: app.boss,
      log: (await import('../../src/shared/logger.ts')).createLogger('silent'),
      pollMs: 60_000,
    });
    await Promise.all([app.relay.drain(), other.drain(), app.relay.relayBatch(), other.relayBatch()]);
    for (const id of ids) assert.equal(await jobsFor(id), 1);
  });

  test('after many new jobs the relay analyzes the job table (src/jobs/table-statistics.ts)', async () => {
    await app.db.pool.query(
      `INSERT INTO outbox (queue, payload) SELECT 'agent-turn',
        jsonb_build_object('leadId', gen_random_uuid()) FROM generate_series(1, 1000)`,
    );
    // The relay's own pool, with every query it sends on it (not on its transaction's client) noted.
    const sent: string[] = [];
    const pending: Promise<unknown>[] = [];
    const pool = new Proxy(app.db.pool, {
      get(target, prop) {
        if (prop === 'query') {
          return (text: string, values?: unknown[]) => {
            sent.push(text);
            const p = target.query(text, values);
            pending.push(p);
            return p;
          };
        }
        const value = Reflect.get(target, prop);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const relay = new OutboxRelay({
      pool,
      boss: app.boss,
      log: (await import('../../src/shared/logger.ts')).createLogger('silent'),
      pollMs: 60_000,
    });
    assert.ok((await relay.drain()) >= 1000);
    await Promise.all(pending);
    assert.deepEqual(
      sent.filter((s) => s.includes('ANALYZE ')).map((s) => s.slice(s.indexOf('ANALYZE '))),
      ['ANALYZE pgboss.job'],
      'the job table',
    );
  });

  test('the running relay is woken by the commit and hands the job over without a poll', async () => {
    const live = new OutboxRelay({
      pool: app.db.pool,
      boss: app.boss,
      log: (await import('../../src/shared/logger.ts')).createLogger('silent'),
      pollMs: 3_600_000,
    });
    const original = app.relay.wake.bind(app.relay);
    app.relay.wake = () => live.wake();
    try {
      live.start();
      const res = await postLead(app.http, key, validLead());
      const deadline = Date.now() + 5000;
      while ((await jobsFor(res.body.leadId)) === 0 && Date.now() < deadline)
        await new Promise((r) => setTimeout(r, 5));
      assert.equal(await jobsFor(res.body.leadId), 1);
    } finally {
      app.relay.wake = original;
      await live.stop();
    }
  });
});

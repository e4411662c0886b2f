import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { migrate, readMigrations } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { adminUrl } from '../helpers/test-db.ts';

// These tests need a database that has never been migrated, so they make their own empty one
// on the test server instead of cloning the migrated template.
const TABLES = ['leads', 'workspaces', 'api_keys', 'call_sessions', 'lead_events', 'outbox', 'rate_limit_counters'];

let admin: Pool;
let name: string;
let poolA: Pool;
let poolB: Pool;

before(async () => {
  admin = createPool(adminUrl(), 1);
  name = `leadintake_mig_${crypto.randomBytes(6).toString('hex')}`;
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(adminUrl());
  u.pathname = `/${name}`;
  poolA = createPool(u.toString(), 2);
  poolB = createPool(u.toString(), 2);
});

after(async () => {
  await poolA?.end();
  await poolB?.end();
  if (admin) {
    await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  }
});

describe('migrate on an empty database', () => {
  it('two concurrent runs from separate pools apply each migration exactly once', async () => {
    const all = readMigrations();
    assert.ok(all.length >= 1);
    assert.deepEqual(
      all.map((m) => m.version),
      [...new Set(all.map((m) => m.version))].sort((a, b) => a - b),
      'versions unique and ordered',
    );
    const before = await poolA.query(`SELECT to_regclass('public.schema_migrations') AS t`);
    assert.equal(before.rows[0].t, null, 'the database starts empty');

    const [a, b] = await Promise.all([migrate(poolA), migrate(poolB)]);
    assert.deepEqual([...a, ...b].sort(), all.map((m) => m.name).sort());

    const { rows } = await poolA.query('SELECT version, name FROM schema_migrations ORDER BY version');
    assert.deepEqual(
      rows,
      all.map((m) => ({ version: m.version, name: m.name })),
    );

    assert.deepEqual(await migrate(poolB), []);
    assert.deepEqual(await migrate(poolA), []);
  });

  it('creates every table, with rate_limit_counters UNLOGGED', async () => {
    const { rows } = await poolA.query(
      `SELECT c.relname, c.relpersistence FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = 'public' AND c.relkind = 'r' AND c.relname = ANY($1) ORDER BY c.relname`,
      [TABLES],
    );
    assert.deepEqual(
      rows.map((r) => r.relname),
      [...TABLES].sort(),
    );
    const persistence = Object.fromEntries(rows.map((r) => [r.relname, r.relpersistence]));
    assert.equal(persistence.rate_limit_counters, 'u');
    for (const t of TABLES.filter((t) => t !== 'rate_limit_counters'))
      assert.equal(persistence[t], 'p', `${t} is logged`);
  });

  it('a failing migration rejects naming it, records nothing and rolls back its changes', async () => {
    const broken = { version: 999, name: '999_broken', sql: 'SELECT * FROM no_such_table' };
    await assert.rejects(migrate(poolA, [...readMigrations(), broken]), (err: Error) => {
      assert.match(err.message, /999_broken/);
      assert.match(err.message, /no_such_table/);
      return true;
    });
    const half = {
      version: 998,
      name: '998_half_done',
      sql: 'CREATE TABLE half_done (x int); SELECT * FROM no_such_table',
    };
    await assert.rejects(migrate(poolB, [...readMigrations(), half]), /998_half_done/);

    const { rows } = await poolA.query('SELECT version FROM schema_migrations WHERE version >= 998');
    assert.deepEqual(rows, []);
    const table = await poolA.query(`SELECT to_regclass('public.half_done') AS t`);
    assert.equal(table.rows[0].t, null, 'the failed migration was rolled back');

    // The advisory lock was released: both pools can migrate again at once.
    assert.deepEqual(await Promise.all([migrate(poolA), migrate(poolB)]), [[], []]);
  });
});

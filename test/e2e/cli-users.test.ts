import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { verifyPassword } from '../../src/operators/password.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';
import { runBin } from '../helpers/worker-process.ts';

// `leadintake user …` (docs/DASHBOARD.md) as a person runs it: the real bin on a test database.

let db: TestDatabase;

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return cliWithKey('11'.repeat(32), ...args);
}

function cliWithKey(
  key: string | null,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBin(args, {
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: db.url,
      ...(key ? { LEADINTAKE_ENCRYPTION_KEY: key } : {}),
      LOG_LEVEL: 'warn',
      PUBLIC_BASE_URL: 'https://leads.example.com',
      // The production cost (2^17, 128 MiB a hash) is tested in operator-security; here it only slows the suite.
      PASSWORD_SCRYPT_LOG2_N: '14',
    },
  });
}

before(async () => {
  db = await createTestDatabase();
  await db.pool.query(
    `INSERT INTO workspaces (slug, name, channel) VALUES ('acme', 'Acme', 'whatsapp'), ('beta', 'Beta', 'voice')`,
  );
});
after(() => db?.drop());

it('create prints a generated password once (stored as a scrypt hash); add, list, reset-password, remove', async () => {
  const created = await cli('user', 'create', '--email', 'Ada@Example.com', '--name', 'Ada Lovelace');
  assert.equal(created.code, 0, created.stderr);
  const password = /Password \(shown once, store it now\): (\S+)/.exec(created.stdout)?.[1];
  assert.ok(password && password.length >= 20);
  assert.match(created.stdout, /Sign in at https:\/\/leads\.example\.com\/admin/);
  const { rows } = await db.pool.query(`SELECT email, name, password_hash FROM operators`);
  assert.deepEqual([rows[0].email, rows[0].name], ['ada@example.com', 'Ada Lovelace']);
  assert.match(rows[0].password_hash, /^scrypt\$/);
  assert.ok(!rows[0].password_hash.includes(password));
  assert.equal(await verifyPassword(password, rows[0].password_hash), true);

  assert.equal(
    (await cli('user', 'create', '--email', 'ada@example.com')).code,
    1,
    'the address is taken, whatever its case',
  );
  assert.equal((await cli('user', 'add', 'ada@example.com', '--workspace', 'acme', '--role', 'agent')).code, 0);
  assert.equal((await cli('user', 'add', 'ada@example.com', '--workspace', 'beta', '--role', 'viewer')).code, 0);
  assert.equal(
    (await cli('user', 'add', 'ada@example.com', '--workspace', 'acme', '--role', 'owner')).code,
    0,
    'again: the role changes',
  );
  const bad = await cli('user', 'add', 'ada@example.com', '--workspace', 'acme', '--role', 'god');
  assert.deepEqual([bad.code, bad.stderr], [1, 'leadintake: --role must be one of owner, admin, agent, viewer.\n']);
  assert.match(
    (await cli('user', 'add', 'ada@example.com', '--workspace', 'nope', '--role', 'agent')).stderr,
    /No workspace "nope"/,
  );
  assert.match(
    (await cli('user', 'add', 'bob@example.com', '--workspace', 'acme', '--role', 'agent')).stderr,
    /No user "bob@example.com"/,
  );
  const list = await cli('user', 'list', '--json');
  assert.deepEqual(JSON.parse(list.stdout), [
    { email: 'ada@example.com', name: 'Ada Lovelace', memberships: ['acme:owner', 'beta:viewer'] },
  ]);

  await db.pool.query(
    `INSERT INTO operator_sessions (token_hash, operator_id, csrf_token) SELECT '\\x01', id, 'c' FROM operators`,
  );
  const reset = await cli('user', 'reset-password', 'ada@example.com');
  const fresh = /ended\): (\S+)/.exec(reset.stdout)?.[1];
  assert.ok(fresh && fresh !== password);
  assert.equal(
    (await db.pool.query('SELECT count(*)::int AS n FROM operator_sessions')).rows[0].n,
    0,
    'every session ended',
  );
  assert.equal((await cli('user', 'remove', 'ada@example.com')).code, 0);
  assert.equal((await db.pool.query('SELECT count(*)::int AS n FROM memberships')).rows[0].n, 0);
  assert.match((await cli('user', 'remove', 'ada@example.com')).stderr, /No user/);
});

it('user commands read no workspace settings, so they run without the installation key', async () => {
  const created = await cliWithKey(null, 'user', 'create', '--email', 'keyless@example.com');
  assert.equal(created.code, 0, created.stderr);
  const added = await cliWithKey(null, 'user', 'add', 'keyless@example.com', '--workspace', 'acme', '--role', 'viewer');
  assert.equal(added.code, 0, added.stderr);
  assert.match(
    (await cliWithKey(null, 'workspace', 'list')).stderr,
    /LEADINTAKE_ENCRYPTION_KEY is required/,
    'a command that reads settings still asks for it',
  );
});

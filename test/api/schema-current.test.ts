import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { dumpMajor, dumpSchema, findPgDump, normalizeDump, SCHEMA_FILE } from '../../scripts/dump-schema.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

// schema/current.sql is what the migrations build: a test database (migrated by
// scripts/run-tests.ts) dumped the same way as `npm run schema:dump` must match it line for line.
// pg_dump refuses a newer server and formats differently across major versions, so the check
// needs a pg_dump of the checked-in file's major version, not older than the server. The
// embedded PostgreSQL ships none: there the test skips, saying so; CI's run against the machine
// PostgreSQL always makes it.

let db: TestDatabase;
before(async () => {
  db = await createTestDatabase();
});
after(async () => {
  await db?.drop();
});

/** The first line where two dumps part, with its neighbours: enough to see what changed. */
function firstDifference(want: string, got: string): string {
  const [a, b] = [want.split('\n'), got.split('\n')];
  const i = a.findIndex((line, n) => line !== b[n]);
  const at = i === -1 ? a.length : i;
  const show = (lines: string[]) => lines.slice(Math.max(0, at - 3), at + 4).join('\n');
  return `line ${at + 1}\n--- schema/current.sql\n${show(a)}\n--- migrated database\n${show(b)}`;
}

test('schema/current.sql is the schema the migrations build (npm run schema:dump rewrites it)', async (t) => {
  const checkedIn = fs.readFileSync(SCHEMA_FILE, 'utf8');
  const pgDump = findPgDump();
  const server = Math.floor(
    Number((await db.pool.query('SHOW server_version_num')).rows[0].server_version_num) / 10000,
  );
  const wanted = dumpMajor(checkedIn);
  assert.ok(wanted, 'schema/current.sql starts with the line naming the pg_dump that made it');
  if (!pgDump || pgDump.major !== wanted || pgDump.major < server) {
    t.skip(
      `needs pg_dump ${wanted} and a PostgreSQL server of version ${wanted} or older; ` +
        `found ${pgDump ? `pg_dump ${pgDump.major}` : 'no pg_dump'} and server ${server}`,
    );
    return;
  }
  const current = dumpSchema(db.url, pgDump);
  assert.ok(
    current === checkedIn,
    'schema/current.sql is stale: run `npm run schema:dump`. ' +
      `First difference at ${firstDifference(checkedIn, current)}`,
  );
});

test('the normalisation drops only what differs between two dumps of one schema', () => {
  const dump = [
    '\\restrict abc123',
    '-- Dumped from database version 15.20',
    'SET statement_timeout = 0;',
    "SELECT pg_catalog.set_config('search_path', '', false);",
    '',
    '',
    '',
    'CREATE TABLE public.leads (',
    '    id uuid NOT NULL',
    ');',
    '\\unrestrict abc123',
  ].join('\n');
  assert.equal(normalizeDump(dump), 'CREATE TABLE public.leads (\n    id uuid NOT NULL\n);\n');
});

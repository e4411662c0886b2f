import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, it } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import { ensureEmbeddedPostgres, type EmbeddedDatabase } from '../src/db/embedded.ts';
import { createLogger } from '../src/shared/logger.ts';

const log = createLogger('silent');
// As root the server runs as the `postgres` user, which must reach the data folder.
const parent = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-embedded-'));
fs.chmodSync(parent, 0o755);
const dataDir = path.join(parent, 'data');
const pidFile = path.join(dataDir, 'pg', 'postmaster.pid');
const started: EmbeddedDatabase[] = [];

async function query(url: string, sql: string): Promise<any[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows;
  } finally {
    await client.end();
  }
}

function portAnswers(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
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
  assert.deepEqual(await query(first.url, 'SELECT note FROM kept'), [{ note: 'survives' }], 'first server still answers');

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

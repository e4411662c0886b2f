import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';
import { runBin } from '../helpers/worker-process.ts';

// `leadintake webhook …` as an operator runs it: the real binary on a real database.

const KEY = '11'.repeat(32);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let db: TestDatabase;
let dir: string;

function cli(...args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBin(args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: db.url,
      LEADINTAKE_ENCRYPTION_KEY: KEY,
      LOG_LEVEL: 'warn',
      LEADINTAKE_DATA_DIR: path.join(dir, 'data'),
    },
  });
}

function fails(r: { code: number | null; stdout: string; stderr: string }, pattern: RegExp): void {
  assert.equal(r.code, 1, `expected exit 1, got ${r.code}; ${r.stdout} ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^leadintake: [^\n]+\n$/);
  assert.match(r.stderr, pattern);
}

function okJson(r: { code: number | null; stdout: string; stderr: string }): any {
  assert.equal(r.code, 0, r.stderr);
  return JSON.parse(r.stdout);
}

before(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-webhook-cli-'));
  const created = await cli(
    'workspace',
    'create',
    '--slug',
    'hooks',
    '--name',
    'Hooks',
    '--channel',
    'whatsapp',
    '--json',
  );
  assert.equal(created.code, 0, created.stderr);
});

after(async () => {
  await db?.drop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('leadintake webhook', () => {
  it('add, list, rotate-secret, deliveries, replay, remove', async () => {
    const added = okJson(
      await cli(
        'webhook',
        'add',
        'hooks',
        '--url',
        'https://hooks.example.com/leads',
        '--events',
        'lead.created,lead.status_changed',
        '--json',
      ),
    );
    assert.match(added.endpoint.id, UUID);
    assert.match(added.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
    assert.deepEqual(added.endpoint.eventTypes, ['lead.created', 'lead.status_changed']);
    const { rows } = await db.pool.query('SELECT secret_ciphertext FROM webhook_endpoints WHERE id = $1', [
      added.endpoint.id,
    ]);
    assert.ok(
      !rows[0].secret_ciphertext.toString('latin1').includes(added.secret.slice(6)),
      'the secret is stored sealed',
    );

    const text = await cli('webhook', 'list', 'hooks');
    assert.equal(text.code, 0);
    assert.match(
      text.stdout,
      new RegExp(
        `^${added.endpoint.id}\\thttps://hooks\\.example\\.com/leads` +
          '\\tlead\\.created,lead\\.status_changed\\tenabled\\n$',
      ),
    );

    const rotated = okJson(await cli('webhook', 'rotate-secret', added.endpoint.id, '--json'));
    assert.notEqual(rotated.secret, added.secret);
    assert.ok(Date.parse(rotated.previousValidUntil) - Date.now() > 23 * 3600 * 1000);

    const empty = await cli('webhook', 'deliveries', added.endpoint.id);
    assert.equal(empty.stdout, 'No deliveries yet.\n');
    fails(await cli('webhook', 'replay', added.endpoint.id, '--all'), /No failed deliveries to replay\./);
    fails(await cli('webhook', 'replay', added.endpoint.id), /Missing --delivery DELIVERY_ID \(or --all\)\./);

    await db.pool.query(
      `UPDATE webhook_endpoints SET enabled = false, disabled_at = now(),
        disabled_reason = 'every delivery attempt failed for 5 days' WHERE id = $1`,
      [added.endpoint.id],
    );
    assert.match(
      (await cli('webhook', 'list', 'hooks')).stdout,
      /\tDISABLED since \d{4}-\d\d-\d\dT[\d:.]+Z: every delivery attempt failed for 5 days\n$/,
    );
    assert.match((await cli('webhook', 'enable', added.endpoint.id)).stdout, /^Enabled webhook endpoint /);

    assert.match((await cli('webhook', 'remove', added.endpoint.id)).stdout, /^Removed webhook endpoint /);
    assert.equal((await cli('webhook', 'list', 'hooks')).stdout, 'No webhook endpoints in "hooks".\n');
    fails(await cli('webhook', 'remove', added.endpoint.id), /No webhook endpoint/);
  });

  it('mistakes get one clear line', async () => {
    fails(await cli('webhook', 'add', 'hooks', '--url', 'http://hooks.example.com/x'), /--url must be https/);
    fails(
      await cli('webhook', 'add', 'hooks', '--url', 'https://hooks.example.com/x', '--events', 'lead.deleted'),
      /Unknown event type "lead\.deleted"\. Event types: lead\.created, /,
    );
    fails(await cli('webhook', 'add', 'nope', '--url', 'https://hooks.example.com/x'), /No workspace "nope"\./);
    fails(await cli('webhook', 'add', 'hooks'), /Missing --url\./);
    fails(
      await cli('webhook', 'add', 'hooks', '--url', 'https://x.example.com', '--prot', '1'),
      /Unknown option --prot for "webhook add"\. Options: --url, --events, --json\./,
    );
    fails(
      await cli('webhook', 'list', 'hooks', '--all'),
      /Unknown option --all for "webhook list"\. Options: --json\./,
    );
    fails(
      await cli('webhook', 'frobnicate'),
      /Usage: leadintake webhook add\|list\|remove\|rotate-secret\|deliveries\|replay\|enable/,
    );
    fails(await cli('webhook', 'deliveries', 'not-a-uuid'), /No webhook endpoint "not-a-uuid"\./);
    fails(
      await cli('webhook', 'deliveries', crypto.randomUUID(), '--limit', '0'),
      /--limit must be a positive whole number\./,
    );
  });
});

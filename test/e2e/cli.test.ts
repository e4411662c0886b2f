import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';
import { runBin } from '../helpers/worker-process.ts';

const KEY = '11'.repeat(32);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const VOICE = {
  provider: 'vapi',
  apiKey: 'vapi-private-key-7f3c9e1d',
  assistantId: 'assistant-4a8b',
  phoneNumberId: 'phone-9d2e',
};
const VOICE2 = {
  provider: 'vapi',
  apiKey: 'vapi-rotated-key-0b6a5c44',
  assistantId: 'assistant-new',
  phoneNumberId: 'phone-new',
};

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

let db: TestDatabase;
let dir: string;
const files: Record<string, string> = {};

function cli(...args: string[]): Promise<Run> {
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

/** `workspace create` without the channel's provider section warns (and still succeeds). */
const NO_PROVIDER_WARNING = new RegExp(
  String.raw`^Warning: the workspace has no "(voice|whatsapp)" section, so live leads cannot be contacted [^\n]+\n` +
    String.raw` {2}echo '[^\n]+\n {2}leadintake workspace update [^\n]+\nThe sandbox key works now [^\n]+\n$`,
);

/** Exit 0, nothing on stderr but that warning; returns stdout. */
function ok(r: Run): string {
  assert.equal(r.code, 0, `expected success, got ${r.code}: ${r.stderr}`);
  assert.equal(r.stderr.replace(NO_PROVIDER_WARNING, ''), '');
  return r.stdout;
}

/** Exit 1, nothing on stdout, exactly one `leadintake: ...` line on stderr matching `pattern`. */
function fails(r: Run, pattern: RegExp): void {
  assert.equal(r.code, 1, `expected exit 1, got ${r.code}; stdout: ${r.stdout} stderr: ${r.stderr}`);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^leadintake: [^\n]+\n$/);
  assert.match(r.stderr, pattern);
}

function jsonLine(r: Run): any {
  const out = ok(r);
  assert.match(out, /^[^\n]+\n$/, 'exactly one line');
  return JSON.parse(out);
}

const sha256 = (text: string) => crypto.createHash('sha256').update(text, 'utf8').digest();
const box = new SecretBox(parseEncryptionKey(KEY));

async function ciphertextOf(slug: string): Promise<{ id: string; blob: Buffer | null }> {
  const { rows } = await db.pool.query(
    'SELECT id, settings_ciphertext FROM workspaces WHERE slug = $1 AND deleted_at IS NULL',
    [slug],
  );
  assert.equal(rows.length, 1);
  return { id: rows[0].id, blob: rows[0].settings_ciphertext };
}

before(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-cli-'));
  const write = (name: string, text: string) => {
    files[name] = path.join(dir, name);
    fs.writeFileSync(files[name], text);
  };
  write('voice.json', JSON.stringify({ voice: VOICE }));
  write('voice2.json', JSON.stringify({ voice: VOICE2 }));
  write('unknown-key.json', JSON.stringify({ voice: VOICE, whatsap: {} }));
  write('bad.json', '{"voice": {');
  const persona = { agentName: 'Mia', company: 'Sunny Roofs', offer: 'Solar roofs', tone: 'warm' };
  const questions = [
    { label: 'Budget', type: 'number', required: true },
    { id: 'q_roof', label: 'Roof type', type: 'choice', options: ['Flat', 'Pitched'] },
  ];
  write('agent.json', JSON.stringify({ agent: { persona, timeZone: 'Europe/Berlin', questions } }));
  write(
    'agent-bad.json',
    JSON.stringify({
      agent: { persona, timeZone: 'Europe/Berlin', questions: [{ label: 'Roof type', type: 'choice' }] },
    }),
  );
});

after(async () => {
  await db?.drop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('leadintake CLI against a real database', { concurrency: true }, () => {
  it('workspace create --json prints one line and stores only the SHA-256 of the key', async () => {
    const created = await cli(
      'workspace',
      'create',
      '--slug',
      'acme',
      '--name',
      'Acme Inc',
      '--channel',
      'whatsapp',
      '--json',
    );
    // No whatsapp section: live leads cannot be contacted, and stderr says so and how to fix it.
    assert.match(created.stderr, NO_PROVIDER_WARNING);
    assert.match(created.stderr, /"whatsapp" section[\s\S]*workspace update acme --config acme\.json/);
    const out = jsonLine(created);
    assert.deepEqual(Object.keys(out), ['workspace', 'apiKey', 'sandboxKey']);
    assert.deepEqual(Object.keys(out.workspace), ['id', 'slug', 'name', 'channel']);
    assert.deepEqual(Object.keys(out.apiKey), ['id', 'key', 'prefix']);
    assert.deepEqual(Object.keys(out.sandboxKey), ['id', 'key', 'prefix']);
    assert.match(out.sandboxKey.key, /^li_test_[A-Za-z0-9_-]{32}$/);
    assert.match(out.workspace.id, UUID);
    assert.deepEqual({ ...out.workspace, id: 'x' }, { id: 'x', slug: 'acme', name: 'Acme Inc', channel: 'whatsapp' });
    const { key, prefix, id } = out.apiKey as { key: string; prefix: string; id: string };
    assert.match(key, /^li_live_[A-Za-z0-9_-]{32}$/);
    assert.ok(prefix.length > 'li_live_'.length && prefix.length < key.length && key.startsWith(prefix), prefix);

    const { rows } = await db.pool.query(
      `SELECT k.workspace_id, k.key_hash, k.prefix, row_to_json(k)::text AS krow, row_to_json(w)::text AS wrow
         FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id WHERE k.id = $1`,
      [id],
    );
    assert.equal(rows.length, 1);
    assert.equal(rows[0].workspace_id, out.workspace.id);
    assert.deepEqual(rows[0].key_hash, sha256(key));
    assert.equal(rows[0].prefix, prefix);
    assert.ok(!rows[0].krow.includes(key) && !rows[0].wrow.includes(key), 'the key itself is never stored');
    assert.equal((await ciphertextOf('acme')).blob, null);

    const [dup, sms] = await Promise.all([
      cli('workspace', 'create', '--slug', 'acme', '--name', 'Again', '--channel', 'voice', '--json'),
      cli('workspace', 'create', '--slug', 'texty', '--name', 'T', '--channel', 'sms'),
    ]);
    fails(dup, /A workspace with slug "acme" already exists/);
    fails(sms, /--channel must be voice or whatsapp/);
    const { rows: all } = await db.pool.query(`SELECT slug FROM workspaces WHERE slug IN ('acme', 'texty')`);
    assert.deepEqual(all, [{ slug: 'acme' }]);
  });

  it('two simultaneous creates of one slug: exactly one wins', async () => {
    const runs = await Promise.all(
      [1, 2].map(() => cli('workspace', 'create', '--slug', 'race', '--name', 'R', '--channel', 'voice')),
    );
    assert.deepEqual(runs.map((r) => r.code).sort(), [0, 1]);
    fails(runs.find((r) => r.code === 1)!, /already exists/);
    const { rows } = await db.pool.query(`SELECT count(*)::int AS n FROM workspaces WHERE slug = 'race'`);
    assert.equal(rows[0].n, 1);
  });

  it('--config stores the settings encrypted; update replaces them; bad files are one clear line', async () => {
    const [created, unknownKey, badJson] = await Promise.all([
      cli(
        'workspace',
        'create',
        '--slug',
        'voicey',
        '--name',
        'Voicey',
        '--channel',
        'voice',
        '--config',
        files['voice.json']!,
      ),
      cli(
        'workspace',
        'create',
        '--slug',
        'typo',
        '--name',
        'T',
        '--channel',
        'voice',
        '--config',
        files['unknown-key.json']!,
      ),
      cli(
        'workspace',
        'create',
        '--slug',
        'broken',
        '--name',
        'B',
        '--channel',
        'voice',
        '--config',
        files['bad.json']!,
      ),
    ]);
    assert.match(ok(created), /^Created workspace voicey \(voice\)/);
    fails(unknownKey, /Invalid config file .*unknown-key\.json.*whatsap/);
    fails(badJson, /Cannot read config file .*bad\.json/);
    const { rows } = await db.pool.query(`SELECT slug FROM workspaces WHERE slug IN ('typo', 'broken')`);
    assert.deepEqual(rows, []);

    const before = await ciphertextOf('voicey');
    assert.ok(before.blob);
    for (const secret of [VOICE.apiKey, VOICE.assistantId, 'vapi'])
      assert.ok(!before.blob.includes(secret), `plaintext ${secret} in ciphertext`);
    assert.deepEqual(box.open(before.blob, before.id), { voice: VOICE });

    const [updated, invalid, unknownSlug] = await Promise.all([
      cli('workspace', 'update', 'voicey', '--config', files['voice2.json']!),
      cli('workspace', 'update', 'voicey', '--config', files['unknown-key.json']!),
      cli('workspace', 'update', 'ghost', '--config', files['voice2.json']!),
    ]);
    assert.equal(ok(updated), 'Updated workspace voicey.\n');
    fails(invalid, /Invalid config file/);
    fails(unknownSlug, /No workspace "ghost"/);
    const afterUpdate = await ciphertextOf('voicey');
    assert.ok(afterUpdate.blob && !afterUpdate.blob.includes(VOICE2.apiKey));
    assert.deepEqual(box.open(afterUpdate.blob, afterUpdate.id), { voice: VOICE2 });
  });

  it('update with an agent section: stored in clear beside the encrypted settings, question ids printed', async () => {
    ok(
      await cli(
        'workspace',
        'create',
        '--slug',
        'agenty',
        '--name',
        'Agenty',
        '--channel',
        'voice',
        '--config',
        files['voice.json']!,
      ),
    );
    const [updated, invalid] = await Promise.all([
      cli('workspace', 'update', 'agenty', '--config', files['agent.json']!),
      cli(
        'workspace',
        'create',
        '--slug',
        'agent-typo',
        '--name',
        'T',
        '--channel',
        'voice',
        '--config',
        files['agent-bad.json']!,
      ),
    ]);
    const out = ok(updated);
    const m = new RegExp(
      String.raw`^Updated workspace agenty\.\nQualification questions \(formResponses keys\):\n` +
        String.raw` {2}(q_[A-Za-z0-9]{12})\tBudget\n {2}q_roof\tRoof type\n$`,
    ).exec(out);
    assert.ok(m, out);
    fails(
      invalid,
      new RegExp(
        String.raw`Invalid config file .*agent-bad\.json: agent\.questions\.0\.options: ` +
          'a choice question needs at least two options',
      ),
    );

    const { rows } = await db.pool.query(`SELECT agent FROM workspaces WHERE slug = 'agenty'`);
    assert.deepEqual(
      rows[0].agent.questions.map((q: { id: string }) => q.id),
      [m[1], 'q_roof'],
    );
    const blob = await ciphertextOf('agenty');
    assert.deepEqual(box.open(blob.blob!, blob.id), { voice: VOICE }, 'the encrypted settings are untouched');

    // Applying the same file again (ids not in the file) keeps the generated id.
    assert.equal(ok(await cli('workspace', 'update', 'agenty', '--config', files['agent.json']!)), out);
  });

  it('workspace list --json lists live workspaces', async () => {
    const w = jsonLine(
      await cli('workspace', 'create', '--slug', 'listed', '--name', 'Listed Co', '--channel', 'whatsapp', '--json'),
    ).workspace;
    jsonLine(
      await cli('workspace', 'create', '--slug', 'unlisted', '--name', 'Gone Co', '--channel', 'whatsapp', '--json'),
    );
    await cli('workspace', 'delete', 'unlisted');
    const list = jsonLine(await cli('workspace', 'list', '--json')) as Array<Record<string, string>>;
    assert.ok(Array.isArray(list));
    const listed = list.find((x) => x.slug === 'listed');
    assert.ok(listed, 'listed workspace is listed');
    assert.deepEqual(Object.keys(listed), ['id', 'slug', 'name', 'channel', 'createdAt']);
    assert.deepEqual({ id: listed.id, slug: listed.slug, name: listed.name, channel: listed.channel }, w);
    assert.ok(!Number.isNaN(Date.parse(listed.createdAt!)));
    // Other tests in this file create and delete workspaces concurrently: check our own deleted one.
    assert.equal(
      list.find((x) => x.slug === 'unlisted'),
      undefined,
      'deleted workspaces are not listed',
    );
  });

  it('key create / list / revoke', async () => {
    const ws = jsonLine(
      await cli('workspace', 'create', '--slug', 'keys', '--name', 'Keys', '--channel', 'voice', '--json'),
    );
    const [created, zero, unknownId, notUuid] = await Promise.all([
      cli('key', 'create', 'keys', '--name', 'ci', '--hourly-limit', '5', '--json'),
      cli('key', 'create', 'keys', '--hourly-limit', '0'),
      cli('key', 'revoke', crypto.randomUUID()),
      cli('key', 'revoke', 'not-a-uuid'),
    ]);
    const key = jsonLine(created);
    assert.deepEqual(Object.keys(key), ['id', 'key', 'prefix']);
    assert.match(key.key, /^li_live_/);
    assert.ok(key.key.startsWith(key.prefix) && key.prefix.length < key.key.length);
    fails(zero, /--hourly-limit must be a positive whole number/);
    fails(unknownId, /No API key/);
    fails(notUuid, /No API key "not-a-uuid"/);

    const { rows } = await db.pool.query(
      'SELECT name, hourly_limit, key_hash, revoked_at FROM api_keys WHERE id = $1',
      [key.id],
    );
    assert.deepEqual(rows, [{ name: 'ci', hourly_limit: 5, key_hash: sha256(key.key), revoked_at: null }]);

    const listRun = await cli('key', 'list', 'keys', '--json');
    const listing = jsonLine(listRun) as Array<Record<string, unknown>>;
    assert.ok(
      !listRun.stdout.includes(key.key) && !listRun.stdout.includes(ws.apiKey.key),
      'key list never shows a key',
    );
    assert.deepEqual(listing.map((k) => k.id).sort(), [ws.apiKey.id, ws.sandboxKey.id, key.id].sort());
    const mine = listing.find((k) => k.id === key.id)!;
    assert.deepEqual(
      [mine.name, mine.prefix, mine.hourlyLimit, mine.livemode, mine.revokedAt],
      ['ci', key.prefix, 5, true, null],
    );
    assert.equal(listing.find((k) => k.id === ws.sandboxKey.id)!.livemode, false);

    const sandbox = jsonLine(await cli('key', 'create', 'keys', '--sandbox', '--json'));
    assert.match(sandbox.key, /^li_test_[A-Za-z0-9_-]{32}$/);
    const sandboxRow = await db.pool.query('SELECT livemode, key_hash FROM api_keys WHERE id = $1', [sandbox.id]);
    assert.deepEqual(sandboxRow.rows, [{ livemode: false, key_hash: sha256(sandbox.key) }]);

    assert.equal(ok(await cli('key', 'revoke', key.id)), `Revoked API key ${key.id}.\n`);
    const revoked = await db.pool.query('SELECT id FROM api_keys WHERE workspace_id = $1 AND revoked_at IS NOT NULL', [
      ws.workspace.id,
    ]);
    assert.deepEqual(revoked.rows, [{ id: key.id }]);
  });

  it('workspace delete soft-deletes; the workspace then takes no new keys', async () => {
    const ws = jsonLine(
      await cli('workspace', 'create', '--slug', 'doomed', '--name', 'D', '--channel', 'voice', '--json'),
    );
    assert.match(ok(await cli('workspace', 'delete', 'doomed')), /^Deleted workspace doomed/);
    const { rows } = await db.pool.query('SELECT deleted_at FROM workspaces WHERE id = $1', [ws.workspace.id]);
    assert.ok(rows[0].deleted_at instanceof Date);

    const [key, again, listAll] = await Promise.all([
      cli('key', 'create', 'doomed', '--json'),
      cli('workspace', 'delete', 'doomed'),
      cli('workspace', 'list', '--json'),
    ]);
    fails(key, /No workspace "doomed"/);
    fails(again, /No workspace "doomed"/);
    assert.ok(!(jsonLine(listAll) as Array<{ slug: string }>).some((w) => w.slug === 'doomed'));
    const keys = await db.pool.query('SELECT count(*)::int AS n FROM api_keys WHERE workspace_id = $1', [
      ws.workspace.id,
    ]);
    assert.equal(keys.rows[0].n, 2, 'the live and the sandbox key of workspace create, no more');
  });

  it('migrate prints and exits 0; an unknown command fails', async () => {
    const [migrate, unknown] = await Promise.all([cli('migrate'), cli('frobnicate')]);
    assert.equal(ok(migrate), 'Migrations are up to date.\n');
    fails(unknown, /Unknown command "frobnicate"/);
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM schema_migrations');
    assert.ok(rows[0].n >= 1);
  });
});

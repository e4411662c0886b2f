import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config/config.ts';
import { resolveEncryptionKey } from '../../src/workspaces/secret-box.ts';

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-config-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function configError(env: Record<string, string>): ConfigError {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

describe('loadConfig', () => {
  it('has documented defaults', () => {
    const c = loadConfig({});
    assert.equal(c.PORT, 3000);
    assert.equal(c.HOST, '127.0.0.1');
    assert.equal(c.LEADINTAKE_DATA_DIR, './.leadintake');
    assert.equal(c.VAPI_BASE_URL, 'https://api.vapi.ai');
    assert.equal(c.VAPI_TIMEOUT_MS, 10_000);
    assert.equal(c.PUBLIC_BASE_URL, 'http://127.0.0.1:3000');
    assert.equal(c.DATABASE_URL, undefined);
    assert.equal(c.LEADINTAKE_ENCRYPTION_KEY, undefined);
    assert.equal(c.LOG_LEVEL, 'info');
    assert.equal(c.DEFAULT_HOURLY_LIMIT, 1000);
  });

  it('derives PUBLIC_BASE_URL from HOST and PORT unless given, without a trailing slash', () => {
    assert.equal(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).PUBLIC_BASE_URL, 'http://0.0.0.0:8080');
    const c = loadConfig({
      PORT: '8080',
      PUBLIC_BASE_URL: 'https://leads.example.com/',
      VAPI_BASE_URL: 'http://127.0.0.1:9/',
    });
    assert.equal(c.PUBLIC_BASE_URL, 'https://leads.example.com');
    assert.equal(c.VAPI_BASE_URL, 'http://127.0.0.1:9');
    assert.equal(c.PORT, 8080);
  });

  it('accepts postgres URLs and treats an empty DATABASE_URL as unset', () => {
    assert.equal(loadConfig({ DATABASE_URL: 'postgres://u:p@db:5432/x' }).DATABASE_URL, 'postgres://u:p@db:5432/x');
    assert.equal(loadConfig({ DATABASE_URL: 'postgresql://db/x' }).DATABASE_URL, 'postgresql://db/x');
    assert.equal(loadConfig({ DATABASE_URL: '' }).DATABASE_URL, undefined);
  });

  it('names every bad variable in one ConfigError', () => {
    const err = configError({ PORT: 'abc', DATABASE_URL: 'mysql://x' });
    assert.match(err.message, /PORT/);
    assert.match(err.message, /DATABASE_URL: must be a postgres:\/\/ URL/);

    const many = configError({
      PORT: '70000',
      VAPI_TIMEOUT_MS: '0',
      LOG_LEVEL: 'loud',
      PUBLIC_BASE_URL: 'not a url',
      DB_POOL_MAX: '-1',
    });
    for (const name of ['PORT', 'VAPI_TIMEOUT_MS', 'LOG_LEVEL', 'PUBLIC_BASE_URL', 'DB_POOL_MAX'])
      assert.match(many.message, new RegExp(`\\b${name}\\b`));
    assert.doesNotMatch(many.message, /\bHOST\b|DATABASE_URL/, 'valid variables are not named');
  });
});

describe('resolveEncryptionKey', () => {
  it('generates a key file once in the data dir, readable only by the owner', () => {
    const dataDir = path.join(tmp, 'fresh', 'data');
    const key = resolveEncryptionKey({ dataDir });
    assert.equal(key.length, 32);
    const file = path.join(dataDir, 'encryption.key');
    assert.equal(fs.statSync(file).mode & 0o777, 0o600);
    assert.match(fs.readFileSync(file, 'utf8'), /^[0-9a-f]{64}\n$/);
    assert.deepEqual(resolveEncryptionKey({ dataDir }), key, 'the same key on the second call');
    assert.notDeepEqual(
      resolveEncryptionKey({ dataDir: path.join(tmp, 'other') }),
      key,
      'another data dir, another key',
    );
  });

  it('uses the env key (hex or base64) and writes no file', () => {
    const dataDir = path.join(tmp, 'env');
    const hex = 'ab'.repeat(32);
    assert.deepEqual(resolveEncryptionKey({ envKey: hex, dataDir }), Buffer.from(hex, 'hex'));
    const base64 = Buffer.alloc(32, 7).toString('base64');
    assert.deepEqual(
      resolveEncryptionKey({ envKey: base64, databaseUrl: 'postgres://db/x', dataDir }),
      Buffer.alloc(32, 7),
    );
    assert.equal(fs.existsSync(path.join(dataDir, 'encryption.key')), false);
  });

  it('requires the env key when DATABASE_URL is set', () => {
    const dataDir = path.join(tmp, 'external');
    assert.throws(
      () => resolveEncryptionKey({ databaseUrl: 'postgres://db/x', dataDir }),
      /LEADINTAKE_ENCRYPTION_KEY is required when DATABASE_URL is set/,
    );
    assert.equal(fs.existsSync(path.join(dataDir, 'encryption.key')), false);
  });

  it('rejects a key that is not 32 bytes', () => {
    for (const envKey of ['11'.repeat(31), 'short', Buffer.alloc(16).toString('base64')]) {
      assert.throws(() => resolveEncryptionKey({ envKey, dataDir: tmp }), /must be 32 bytes/, envKey);
    }
  });
});

test('blank variables count as unset; numbers must be plain decimals', () => {
  const c = loadConfig({ PORT: '', API_KEY_CACHE_TTL_MS: '  ', DATABASE_URL: '' });
  assert.equal(c.PORT, 3000);
  assert.equal(c.API_KEY_CACHE_TTL_MS, 5000);
  assert.equal(c.DATABASE_URL, undefined);
  for (const PORT of ['0x10', '1e3', '-1', '70000', '3.5']) {
    assert.throws(
      () => loadConfig({ PORT }),
      (err: Error) => err instanceof ConfigError && /PORT/.test(err.message),
      PORT,
    );
  }
});

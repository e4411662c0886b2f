import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { ConfigError, loadConfig, SECRET_FILE_VARIABLES } from '../../src/config/config.ts';

// `<NAME>_FILE` (Docker and Kubernetes secrets mounted as files) and the image's required
// DATABASE_URL: both read in loadConfig, the one place the environment is parsed.

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-secret-files-'));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

function secretFile(name: string, text: string): string {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, text);
  return file;
}

function configError(env: Record<string, string>): string {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof ConfigError, `expected ConfigError, got ${String(err)}`);
    return err.message;
  }
  assert.fail(`accepted ${JSON.stringify(env)}`);
}

const KEY = 'ab'.repeat(32);
const URL_ = 'postgres://leadintake:s3cret@db.internal:5432/leadintake';

describe('*_FILE secrets', () => {
  it('reads each secret from its file, without the trailing newline', () => {
    const c = loadConfig({
      DATABASE_URL_FILE: secretFile('database-url', `${URL_}\n`),
      LEADINTAKE_ENCRYPTION_KEY_FILE: secretFile('key', `${KEY}\r\n`),
      OPENAI_API_KEY_FILE: secretFile('openai', 'sk-test-123\n\n'),
    });
    assert.equal(c.DATABASE_URL, URL_);
    assert.equal(c.LEADINTAKE_ENCRYPTION_KEY, KEY);
    assert.equal(c.OPENAI_API_KEY, 'sk-test-123');
  });

  it('covers the secrets the configuration expects', () => {
    assert.deepEqual([...SECRET_FILE_VARIABLES].sort(), [
      'DATABASE_URL',
      'LEADINTAKE_ENCRYPTION_KEY',
      'OPENAI_API_KEY',
    ]);
  });

  it('refuses a variable set both ways, naming both', () => {
    for (const name of SECRET_FILE_VARIABLES) {
      const value = name === 'DATABASE_URL' ? URL_ : KEY;
      const message = configError({ [name]: value, [`${name}_FILE`]: secretFile(`both-${name}`, value) });
      assert.match(message, new RegExp(`${name}_FILE: set together with ${name}`));
    }
  });

  it('refuses a missing or empty file, naming the path and never the contents', () => {
    const missing = path.join(tmp, 'nowhere');
    assert.match(
      configError({ LEADINTAKE_ENCRYPTION_KEY_FILE: missing }),
      /LEADINTAKE_ENCRYPTION_KEY_FILE: cannot read .*nowhere \(ENOENT\)/,
    );
    assert.match(
      configError({ OPENAI_API_KEY_FILE: secretFile('empty', '\n') }),
      /OPENAI_API_KEY_FILE: .*empty is empty/,
    );
  });

  it('validates a value from a file like one from the environment, without echoing it', () => {
    const message = configError({ DATABASE_URL_FILE: secretFile('bad-url', 'mysql://user:hunter2@host/db\n') });
    assert.match(message, /DATABASE_URL: must be a postgres:\/\/ URL/);
    assert.doesNotMatch(message, /hunter2/);
  });
});

describe('LEADINTAKE_REQUIRE_DATABASE_URL (set in the container image)', () => {
  it('refuses to start without DATABASE_URL, saying how to set it', () => {
    const message = configError({ LEADINTAKE_REQUIRE_DATABASE_URL: '1', LEADINTAKE_ENCRYPTION_KEY: KEY });
    assert.match(message, /DATABASE_URL: required .*no embedded PostgreSQL.*DATABASE_URL_FILE/);
  });

  it('starts with DATABASE_URL or DATABASE_URL_FILE', () => {
    assert.equal(loadConfig({ LEADINTAKE_REQUIRE_DATABASE_URL: '1', DATABASE_URL: URL_ }).DATABASE_URL, URL_);
    const fromFile = loadConfig({
      LEADINTAKE_REQUIRE_DATABASE_URL: 'true',
      DATABASE_URL_FILE: secretFile('url-required', `${URL_}\n`),
    });
    assert.equal(fromFile.DATABASE_URL, URL_);
  });

  it('is off by default: the embedded PostgreSQL of `npm start`', () => {
    assert.equal(loadConfig({}).DATABASE_URL, undefined);
  });
});

describe('MIGRATE_ON_START', () => {
  it('is on by default and can be turned off', () => {
    assert.equal(loadConfig({}).MIGRATE_ON_START, true);
    assert.equal(loadConfig({ MIGRATE_ON_START: 'false' }).MIGRATE_ON_START, false);
    assert.match(configError({ MIGRATE_ON_START: 'sometimes' }), /MIGRATE_ON_START/);
  });
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { isOptOut } from '../../src/whatsapp/opt-out.ts';
import { clampMessage, firstName, MESSAGE_LIMITS, templateText } from '../../src/whatsapp/outbound-text.ts';
import { parseWorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/test-app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';
import { runCli } from '../helpers/worker-process.ts';

// The `whatsapp` and `llm` sections of the workspace config, the CLI's kill switch and
// dead-letter commands, and the small text rules of the channel.

const TWILIO = {
  provider: 'twilio',
  accountSid: `AC${'a1'.repeat(16)}`,
  authToken: 'token-0123456789',
  from: '+1 (415) 555-0100',
  templateContentSid: `HX${'b2'.repeat(16)}`,
};
const META = {
  provider: 'meta',
  accessToken: 'EAAG-token',
  phoneNumberId: '106540352242922',
  appSecret: 'app-secret',
  verifyToken: 'verify-me-please',
  templateName: 'lead_first_contact',
};

describe('the whatsapp and llm sections', () => {
  it('accepts Twilio settings and stores the sender as +digits', () => {
    const r = parseWorkspaceConfig({ whatsapp: TWILIO });
    assert.ok(r.ok);
    assert.deepEqual(r.config.whatsapp, { ...TWILIO, from: '+14155550100' });
  });

  it('accepts Meta settings with the template language defaulting to en_US', () => {
    const r = parseWorkspaceConfig({
      whatsapp: META,
      llm: { baseUrl: 'http://localhost:11434/v1', model: 'llama3.1' },
    });
    assert.ok(r.ok);
    assert.equal(r.config.whatsapp?.provider === 'meta' && r.config.whatsapp.templateLanguage, 'en_US');
    assert.deepEqual(r.config.llm, { baseUrl: 'http://localhost:11434/v1', model: 'llama3.1' });
  });

  for (const [name, config, path] of [
    ['an account SID that is not AC + 32 hex', { whatsapp: { ...TWILIO, accountSid: 'AC123' } }, 'whatsapp.accountSid'],
    ['a sender that is not a phone number', { whatsapp: { ...TWILIO, from: 'whatsapp-sender' } }, 'whatsapp.from'],
    ['a Meta field in a Twilio section', { whatsapp: { ...TWILIO, appSecret: 'x' } }, 'whatsapp'],
    ['a short verify token', { whatsapp: { ...META, verifyToken: 'short' } }, 'whatsapp.verifyToken'],
    ['an unknown provider', { whatsapp: { ...META, provider: 'signal' } }, 'whatsapp.provider'],
    ['an llm base URL that is not a URL', { llm: { baseUrl: 'localhost:11434' } }, 'llm.baseUrl'],
  ] as const) {
    it(`refuses ${name}`, () => {
      const r = parseWorkspaceConfig(config);
      assert.ok(!r.ok);
      assert.match(r.message, new RegExp(`^${path.replace('.', '\\.')}`));
    });
  }
});

describe('text rules', () => {
  it('opt-out words: the whole message, any case, trailing punctuation', () => {
    for (const yes of [
      'STOP',
      'stop',
      'Stop!',
      ' unsubscribe. ',
      'opt-out',
      'OPT OUT',
      'Stop all',
      'quit',
      'please stop',
    ])
      assert.ok(isOptOut(yes), yes);
    for (const no of ['stop it please', 'STOPPED', 'end of day works', '']) assert.ok(!isOptOut(no), no);
  });

  it('the template greets by first name; without its text the model gets a description', () => {
    assert.equal(firstName('  Ada   Lovelace '), 'Ada');
    assert.equal(templateText({ id: 'HX1', body: 'Hi {{1}}, thanks! {{2}}' }, ['Ada']), 'Hi Ada, thanks! {{2}}');
    assert.match(templateText({ id: 'lead_first_contact' }, ['Ada']), /template "lead_first_contact".*Ada/);
  });

  it("a message is cut within each provider's limit, on a grapheme boundary", () => {
    const cut = clampMessage(`  ${'x'.repeat(2000)}  `, MESSAGE_LIMITS.twilio);
    assert.equal(cut.length, 1600);
    assert.ok(cut.endsWith('…'));
    assert.equal(clampMessage('  short  ', MESSAGE_LIMITS.twilio), 'short');
    assert.equal(clampMessage('x'.repeat(4096), MESSAGE_LIMITS.meta), 'x'.repeat(4096));
    // The example: 1,590 × "a", 30 × 👍 (two UTF-16 units each), then text.
    const answer = `${'a'.repeat(1590)}${'👍'.repeat(30)}${' and the rest of the answer'.repeat(15)}`.slice(0, 2021);
    const twilio = clampMessage(answer, MESSAGE_LIMITS.twilio);
    assert.equal(twilio, `${'a'.repeat(1590)}${'👍'.repeat(4)}…`);
    assert.doesNotMatch(twilio, /\p{Cs}/u, 'no lone surrogate');
    // Flags (two regional indicators) and letters with combining accents stay whole too.
    const flags = clampMessage(`${'b'.repeat(1596)}🇩🇪🇩🇪`, MESSAGE_LIMITS.twilio);
    assert.equal(flags, `${'b'.repeat(1596)}…`);
    const accents = clampMessage(`${'c'.repeat(1597)}e\u0301e\u0301`, MESSAGE_LIMITS.twilio);
    assert.equal(accents, `${'c'.repeat(1597)}e\u0301…`);
  });
});

describe('CLI', () => {
  let db: TestDatabase;
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    db = await createTestDatabase();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-wa-cli-'));
    env = {
      DATABASE_URL: db.url,
      LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      LOG_LEVEL: 'warn',
      LEADINTAKE_DATA_DIR: path.join(dir, 'data'),
    };
  });
  after(async () => {
    await db.drop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('workspace create with a whatsapp section keeps the secrets out of the database in clear', async () => {
    const file = path.join(dir, 'wa.json');
    fs.writeFileSync(file, JSON.stringify({ whatsapp: TWILIO }));
    const r = await runCli(
      ['workspace', 'create', '--slug', 'wa-cli', '--name', 'WA', '--channel', 'whatsapp', '--config', file],
      env,
    );
    assert.equal(r.code, 0, r.stderr);
    const { rows } = await db.pool.query(
      `SELECT encode(settings_ciphertext, 'escape') AS raw FROM workspaces WHERE slug = 'wa-cli'`,
    );
    assert.ok(!rows[0].raw.includes('token-0123456789'));
  });

  it('workspace agent off / on flips the kill switch', async () => {
    const off = await runCli(['workspace', 'agent', 'wa-cli', 'off'], env);
    assert.equal(off.code, 0, off.stderr);
    assert.match(off.stdout, /is off/);
    assert.equal(
      (await db.pool.query(`SELECT agent_enabled FROM workspaces WHERE slug = 'wa-cli'`)).rows[0].agent_enabled,
      false,
    );
    assert.equal((await runCli(['workspace', 'agent', 'wa-cli', 'on'], env)).code, 0);
    assert.equal(
      (await db.pool.query(`SELECT agent_enabled FROM workspaces WHERE slug = 'wa-cli'`)).rows[0].agent_enabled,
      true,
    );
    const bad = await runCli(['workspace', 'agent', 'wa-cli', 'maybe'], env);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /on\|off/);
    assert.match((await runCli(['workspace', 'agent', 'nope', 'on'], env)).stderr, /No workspace "nope"/);
  });

  it('jobs dead / retry with an empty dead-letter queue', async () => {
    const dead = await runCli(['jobs', 'dead'], env);
    assert.equal(dead.code, 0, dead.stderr);
    assert.match(dead.stdout, /No dead-lettered agent turns/);
    assert.deepEqual(JSON.parse((await runCli(['jobs', 'dead', '--json'], env)).stdout), []);
    const retry = await runCli(['jobs', 'retry', '00000000-0000-0000-0000-000000000000'], env);
    assert.equal(retry.code, 1);
    assert.match(retry.stderr, /No such dead-lettered job/);
    assert.match((await runCli(['jobs', 'retry', 'not-an-id'], env)).stderr, /Not a job id/);
  });
});

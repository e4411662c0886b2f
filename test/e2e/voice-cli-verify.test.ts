// `leadintake workspace verify S` as a process, against the Vapi simulator through the real client.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { serverSecretOf } from '../../src/voice/vapi/vapi-server-settings.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';
import { runBin } from '../helpers/worker-process.ts';

const KEY = '11'.repeat(32);
const VOICE = {
  provider: 'vapi' as const,
  apiKey: SIM_API_KEY,
  assistantId: SIM_ASSISTANT_ID,
  phoneNumberId: SIM_PHONE_NUMBER_ID,
};

let db: TestDatabase;
let sim: VapiSimulator;
let dir: string;
let service: WorkspaceService;

before(async () => {
  db = await createTestDatabase();
  sim = await startVapiSimulator();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-verify-'));
  service = new WorkspaceService(db.pool, new SecretBox(parseEncryptionKey(KEY)), 1000);
});
after(async () => {
  await sim.close();
  await db.drop();
  fs.rmSync(dir, { recursive: true, force: true });
});

function cli(
  env: Record<string, string>,
  ...args: string[]
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return runBin(args, {
    cwd: dir,
    env: {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: db.url,
      LEADINTAKE_ENCRYPTION_KEY: KEY,
      LOG_LEVEL: 'warn',
      LEADINTAKE_DATA_DIR: path.join(dir, 'data'),
      VAPI_BASE_URL: sim.url,
      PUBLIC_BASE_URL: 'https://leads.example.com',
      ...env,
    },
  });
}

let n = 0;
async function workspace(config: WorkspaceConfig, channel: 'voice' | 'whatsapp' = 'voice') {
  const slug = `verify-${++n}`;
  const r = await service.create({ slug, name: slug, channel, config });
  assert.equal(r.kind, 'created');
  return { slug, id: r.kind === 'created' ? r.workspace.id : '' };
}

describe('leadintake workspace verify', { concurrency: true }, () => {
  test('good settings: exit 0, every check ok, the server URLs; both lookups are in the integration log', async () => {
    const ws = await workspace({ voice: VOICE });
    const r = await cli({}, 'workspace', 'verify', ws.slug);
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      [
        `Workspace ${ws.slug} (voice)`,
        '  PASS  Vapi     API key       accepted by Vapi',
        `  PASS  Vapi     assistant     ${SIM_ASSISTANT_ID} exists`,
        `  PASS  Vapi     phone number  ${SIM_PHONE_NUMBER_ID} exists`,
        '  SKIP  scheduling not set       no "scheduling" section (optional): ' +
          'the agent offers no times; leads who want to book are handed to a human',
        'Server URLs (sent to Vapi with every call):',
        `  events  https://leads.example.com/api/vapi/${ws.slug}/events`,
        `  tools   https://leads.example.com/api/vapi/${ws.slug}/tools`,
        '  auth    X-Vapi-Secret (derived from the API key)',
        'All 3 checks passed.',
        '',
      ].join('\n'),
    );
    const { rows } = await db.pool.query(
      `SELECT direction, kind, http_status, outcome, payload::text
        FROM integration_events WHERE workspace_id = $1 ORDER BY kind`,
      [ws.id],
    );
    assert.deepEqual(
      rows.map((x) => `${x.direction} ${x.kind} ${x.http_status} ${x.outcome}`),
      ['out GET /assistant/{id} 200 found', 'out GET /phone-number/{id} 200 found'],
    );
    assert.ok(rows.every((x) => !x.payload.includes(SIM_API_KEY)));
  });

  test('an unknown assistant or phone number: exit 1, and the line names the setting to fix', async () => {
    const badAssistant = await workspace({ voice: { ...VOICE, assistantId: 'deleted-assistant' } });
    const badPhone = await workspace({ voice: { ...VOICE, phoneNumberId: 'deleted-number' } });
    const [a, p] = await Promise.all([
      cli({}, 'workspace', 'verify', badAssistant.slug),
      cli({}, 'workspace', 'verify', badPhone.slug),
    ]);
    assert.equal(a.code, 1);
    assert.match(
      a.stdout,
      /\n {2}FAIL {2}Vapi {5}assistant {5}deleted-assistant not found \(404\): check voice\.assistantId\n/,
    );
    assert.match(a.stdout, /\n {2}PASS {2}Vapi {5}phone number/);
    assert.equal(p.code, 1);
    assert.match(
      p.stdout,
      /\n {2}FAIL {2}Vapi {5}phone number {2}deleted-number not found \(404\): check voice\.phoneNumberId\n/,
    );
    assert.match(p.stdout, /\n {2}PASS {2}Vapi {5}API key/);
  });

  test('a rejected API key: exit 1, the key is what is wrong and nothing else is claimed', async () => {
    const ws = await workspace({ voice: { ...VOICE, apiKey: 'vapi-public-key-by-mistake' } });
    const r = await cli({}, 'workspace', 'verify', ws.slug);
    assert.equal(r.code, 1);
    assert.match(r.stdout, /FAIL {2}Vapi {5}API key {7}Vapi rejected the API key \(401\): check voice\.apiKey/);
    assert.match(r.stdout, /FAIL {2}Vapi {5}assistant {5}not checked \(API key rejected\)/);
    assert.ok(!r.stdout.includes('vapi-public-key-by-mistake'));
  });

  test(
    '--json and --show-secret; HMAC workspaces name their credential; ' + 'a local PUBLIC_BASE_URL is a warning',
    async () => {
      const ws = await workspace({ voice: VOICE });
      const r = await cli(
        { PUBLIC_BASE_URL: 'http://127.0.0.1:3000' },
        'workspace',
        'verify',
        ws.slug,
        '--json',
        '--show-secret',
      );
      assert.equal(r.code, 0, r.stderr);
      const out = JSON.parse(r.stdout);
      assert.deepEqual(Object.keys(out), [
        'ok',
        'checks',
        'notConfigured',
        'serverUrls',
        'serverAuth',
        'serverSecret',
        'warnings',
      ]);
      assert.equal(out.ok, true);
      assert.deepEqual(
        out.checks.map((c: { provider: string; check: string; ok: boolean }) => `${c.provider}/${c.check}/${c.ok}`),
        ['Vapi/API key/true', 'Vapi/assistant/true', 'Vapi/phone number/true'],
      );
      assert.equal(out.serverSecret, serverSecretOf(ws.id, VOICE));
      assert.deepEqual(out.serverUrls, {
        events: `http://127.0.0.1:3000/api/vapi/${ws.slug}/events`,
        tools: `http://127.0.0.1:3000/api/vapi/${ws.slug}/tools`,
      });
      assert.match(out.warnings[0], /Vapi cannot reach a local address/);

      const hmac = await workspace({
        voice: { ...VOICE, hmac: { credentialId: 'cred-42', secretKey: 'hmac-secret-0123456789' } },
      });
      const h = await cli({}, 'workspace', 'verify', hmac.slug, '--show-secret');
      assert.match(
        h.stdout,
        /\n {2}auth {4}HMAC signature \(credential cred-42, header x-signature\)\nAll 3 checks passed\.\n$/,
      );
      assert.ok(!h.stdout.includes('hmac-secret-0123456789'));
    },
  );

  test('Vapi unreachable, no voice settings, an unknown slug', async () => {
    const ws = await workspace({ voice: VOICE });
    const down = await cli({ VAPI_BASE_URL: 'http://127.0.0.1:9' }, 'workspace', 'verify', ws.slug);
    assert.equal(down.code, 1);
    assert.match(down.stdout, /FAIL {2}Vapi {5}API key {7}Could not reach the voice provider/);
    const bare = await workspace({});
    const [b, u] = await Promise.all([
      cli({}, 'workspace', 'verify', bare.slug),
      cli({}, 'workspace', 'verify', 'nope'),
    ]);
    assert.equal(b.code, 1);
    assert.match(b.stdout, /\n {2}FAIL {2}voice {4}not set {7}no "voice" section: live leads cannot be called/);
    assert.ok(!b.stdout.includes('Server URLs'));
    assert.match(u.stderr, /^leadintake: No workspace "nope"\.\n$/);
  });
});

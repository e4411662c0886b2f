// `leadintake workspace verify S` for WhatsApp workspaces (Twilio or Meta), Cal.com and the chat
// model, as a process, against the simulators through the real clients.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  DEFAULT_EVENT_TYPE,
  startCalcomSimulator,
  type CalcomSimulator,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import { startChatSimulator, type ChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { META_SIM, startMetaSimulator, type MetaSimulator } from '../../src/simulators/meta/meta-simulator.ts';
import {
  SIM_ACCOUNT_SID,
  SIM_AUTH_TOKEN,
  SIM_TEMPLATE_SID,
  SIM_WHATSAPP_SENDER,
  startTwilioSimulator,
  type TwilioSimulator,
} from '../../src/simulators/twilio/twilio-simulator.ts';
import { parseWorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';
import { runBin } from '../helpers/worker-process.ts';

const KEY = '22'.repeat(32);
const MODEL_KEY = 'sk-verify-model-key-0123456789';
const TWILIO = {
  provider: 'twilio',
  accountSid: SIM_ACCOUNT_SID,
  authToken: SIM_AUTH_TOKEN,
  from: SIM_WHATSAPP_SENDER,
  templateContentSid: SIM_TEMPLATE_SID,
};
const META = {
  provider: 'meta',
  accessToken: META_SIM.accessToken,
  phoneNumberId: META_SIM.phoneNumberId,
  appSecret: META_SIM.appSecret,
  verifyToken: 'verify-token-123',
  templateName: META_SIM.template.name,
  templateLanguage: META_SIM.template.language,
};

let db: TestDatabase;
let dir: string;
let service: WorkspaceService;
let twilio: TwilioSimulator;
let suspended: TwilioSimulator;
let meta: MetaSimulator;
let calcom: CalcomSimulator;
let chat: ChatSimulator;
let listOnly: ChatSimulator;
let SCHEDULING: Record<string, unknown>;

before(async () => {
  db = await createTestDatabase();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-verify-all-'));
  service = new WorkspaceService(db.pool, new SecretBox(parseEncryptionKey(KEY)), 1000);
  [twilio, suspended, meta, calcom, chat, listOnly] = await Promise.all([
    startTwilioSimulator(),
    startTwilioSimulator({ accountStatus: 'suspended' }),
    startMetaSimulator(),
    startCalcomSimulator(),
    startChatSimulator({ apiKeys: [MODEL_KEY], models: ['gpt-4o-mini', 'qwen2.5:7b'] }),
    startChatSimulator({ apiKeys: [], models: ['llama3.1:8b', 'qwen2.5:7b'], modelRetrieve: false }),
  ]);
  SCHEDULING = { provider: 'calcom', apiKey: calcom.apiKey, eventTypeId: DEFAULT_EVENT_TYPE.id };
});
after(async () => {
  await Promise.all([twilio, suspended, meta, calcom, chat, listOnly].map((s) => s.close()));
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
      PUBLIC_BASE_URL: 'https://leads.example.com',
      TWILIO_BASE_URL: twilio.url,
      WHATSAPP_GRAPH_BASE_URL: meta.graphBaseUrl,
      CALCOM_BASE_URL: calcom.url,
      OPENAI_BASE_URL: chat.baseUrl,
      OPENAI_API_KEY: MODEL_KEY,
      LLM_MODEL: 'gpt-4o-mini',
      ...env,
    },
  });
}

const LOCAL_MODEL_ALLOWED = { OPENAI_API_KEY: '', EGRESS_ALLOW_PRIVATE_NETWORKS: 'true' };

let n = 0;
async function workspace(config: Record<string, unknown>, channel: 'voice' | 'whatsapp' = 'whatsapp'): Promise<string> {
  const parsed = parseWorkspaceConfig(config);
  assert.ok(parsed.ok, parsed.ok ? '' : parsed.message);
  const slug = `verify-all-${++n}`;
  const r = await service.create({ slug, name: slug, channel, config: parsed.config });
  assert.equal(r.kind, 'created');
  return slug;
}

async function verify(
  config: Record<string, unknown>,
  env: Record<string, string> = {},
  channel: 'voice' | 'whatsapp' = 'whatsapp',
) {
  const slug = await workspace(config, channel);
  return { slug, ...(await cli(env, 'workspace', 'verify', slug)) };
}

/** The line of `provider` and `check` (columns as printed). */
function lineOf(stdout: string, provider: string, check: string): string {
  const found = stdout
    .split('\n')
    .find((l) => new RegExp(`^ {2}(PASS|FAIL|SKIP) {2}${provider.replace('.', '\\.')} +${check} `).test(l));
  assert.ok(found, `no ${provider} ${check} line in:\n${stdout}`);
  return found.trim().replace(/ {2,}/g, ' ');
}

describe('workspace verify: every configured provider', { concurrency: true }, () => {
  test('Twilio, Cal.com and the model from the environment: every line PASS, exit 0', async () => {
    const r = await verify({ whatsapp: TWILIO, scheduling: SCHEDULING });
    assert.equal(r.stderr, '');
    assert.equal(r.code, 0);
    assert.equal(
      r.stdout,
      [
        `Workspace ${r.slug} (whatsapp)`,
        `  PASS  Twilio   credentials   account ${SIM_ACCOUNT_SID} is active`,
        `  PASS  Twilio   sender        ${SIM_WHATSAPP_SENDER} is a phone number of the account`,
        `  PASS  model    API key       accepted by ${chat.baseUrl}`,
        '  PASS  model    model name    gpt-4o-mini exists',
        '  PASS  Cal.com  API key       accepted by Cal.com',
        `  PASS  Cal.com  event type    ${DEFAULT_EVENT_TYPE.id} "${DEFAULT_EVENT_TYPE.title}" ` +
          `(${DEFAULT_EVENT_TYPE.lengthInMinutes} min)`,
        'All 6 checks passed.',
        '',
      ].join('\n'),
    );
    // Every lookup is a read, with the settings' credentials, at the endpoints the providers document.
    assert.ok(
      twilio.requests.some((q) => q.method === 'GET' && q.path === `/2010-04-01/Accounts/${SIM_ACCOUNT_SID}.json`),
    );
    assert.ok(
      twilio.requests.some((q) => q.path === `/2010-04-01/Accounts/${SIM_ACCOUNT_SID}/IncomingPhoneNumbers.json`),
    );
    assert.ok(
      calcom.requests.some(
        (q) => q.path === `/v2/event-types/${DEFAULT_EVENT_TYPE.id}` && q.calApiVersion === '2024-06-14',
      ),
    );
    assert.ok(chat.requests.some((q) => q.method === 'GET' && q.path === '/v1/models/gpt-4o-mini'));
    assert.equal(twilio.messages.length, 0);
    assert.equal(calcom.bookings.size, 0);
    assert.ok(!chat.requests.some((q) => q.path.endsWith('/chat/completions')));
  });

  test('Meta and a workspace llm section: PASS lines name the number and the model server', async () => {
    const r = await verify(
      {
        whatsapp: META,
        scheduling: SCHEDULING,
        llm: { baseUrl: chat.baseUrl, apiKey: MODEL_KEY, model: 'qwen2.5:7b' },
      },
      { OPENAI_API_KEY: 'sk-not-this-one' },
    );
    assert.equal(r.code, 0, r.stdout);
    assert.equal(lineOf(r.stdout, 'Meta', 'access token'), 'PASS Meta access token accepted by Meta');
    assert.equal(
      lineOf(r.stdout, 'Meta', 'phone number'),
      `PASS Meta phone number ${META_SIM.phoneNumberId} is ${META_SIM.displayPhoneNumber} (Simulated Business)`,
    );
    assert.equal(lineOf(r.stdout, 'model', 'model name'), 'PASS model model name qwen2.5:7b exists');
    assert.ok(
      meta.requests.some((q) => q.method === 'GET' && q.path === `/${META_SIM.version}/${META_SIM.phoneNumberId}`),
    );
  });

  test('Twilio: a wrong auth token, an unknown sender, a suspended account; the sandbox sender passes', async () => {
    const [token, sender, sus, sandbox, partial] = await Promise.all([
      verify({ whatsapp: { ...TWILIO, authToken: 'wrong-auth-token' } }),
      verify({ whatsapp: { ...TWILIO, from: '+15550001111' } }),
      verify({ whatsapp: TWILIO }, { TWILIO_BASE_URL: suspended.url }),
      verify({ whatsapp: { ...TWILIO, from: '+1 415 523 8886' } }),
      // Twilio's PhoneNumber filter matches partial numbers: a digit short must not pass.
      verify({ whatsapp: { ...TWILIO, from: SIM_WHATSAPP_SENDER.slice(0, -1) } }),
    ]);
    assert.match(
      lineOf(partial.stdout, 'Twilio', 'sender'),
      /^FAIL Twilio sender \+\d+ is not a phone number of this Twilio account/,
    );
    assert.equal(token.code, 1);
    assert.equal(
      lineOf(token.stdout, 'Twilio', 'credentials'),
      'FAIL Twilio credentials the account SID or auth token is wrong (401): ' +
        'check whatsapp.accountSid and whatsapp.authToken',
    );
    assert.equal(lineOf(token.stdout, 'Twilio', 'sender'), 'FAIL Twilio sender not checked (credentials not accepted)');
    assert.ok(!token.stdout.includes('wrong-auth-token'));
    assert.equal(sender.code, 1);
    assert.equal(
      lineOf(sender.stdout, 'Twilio', 'credentials'),
      `PASS Twilio credentials account ${SIM_ACCOUNT_SID} is active`,
    );
    assert.equal(
      lineOf(sender.stdout, 'Twilio', 'sender'),
      'FAIL Twilio sender +15550001111 is not a phone number of this Twilio ' +
        "account: check whatsapp.from (the account's WhatsApp sender, +digits)",
    );
    assert.equal(sus.code, 1);
    assert.match(
      lineOf(sus.stdout, 'Twilio', 'credentials'),
      /^FAIL Twilio credentials account AC\w+ is suspended: nothing can be sent/,
    );
    assert.match(
      lineOf(sandbox.stdout, 'Twilio', 'sender'),
      /^PASS Twilio sender \+14155238886 is Twilio's WhatsApp sandbox number/,
    );
  });

  test('Meta: a rejected token, an unknown phone-number id', async () => {
    const [token, number] = await Promise.all([
      verify({ whatsapp: { ...META, accessToken: 'EAAG-expired-token' } }),
      verify({ whatsapp: { ...META, phoneNumberId: '999000111' } }),
    ]);
    assert.equal(token.code, 1);
    assert.equal(
      lineOf(token.stdout, 'Meta', 'access token'),
      'FAIL Meta access token Meta rejected the access token (401, code 190): ' +
        'check whatsapp.accessToken (a system-user token with whatsapp_business_messaging)',
    );
    assert.equal(
      lineOf(token.stdout, 'Meta', 'phone number'),
      'FAIL Meta phone number not checked (access token rejected)',
    );
    assert.ok(!token.stdout.includes('EAAG-expired-token'));
    assert.equal(number.code, 1);
    assert.equal(lineOf(number.stdout, 'Meta', 'access token'), 'PASS Meta access token accepted by Meta');
    assert.match(
      lineOf(number.stdout, 'Meta', 'phone number'),
      new RegExp(
        '^FAIL Meta phone number 999000111 not found or not visible to this token ' +
          String.raw`\(400, code 100\): check whatsapp\.phoneNumberId`,
      ),
    );
  });

  test('Cal.com: a rejected key, an unknown event type', async () => {
    const [key, type] = await Promise.all([
      verify({ whatsapp: TWILIO, scheduling: { ...SCHEDULING, apiKey: 'cal_live_revoked' } }),
      verify({ whatsapp: TWILIO, scheduling: { ...SCHEDULING, eventTypeId: 424242 } }),
    ]);
    assert.equal(key.code, 1);
    assert.match(
      lineOf(key.stdout, 'Cal.com', 'API key'),
      /^FAIL Cal\.com API key Cal\.com rejected the API key \(401\): check scheduling\.apiKey/,
    );
    assert.equal(lineOf(key.stdout, 'Cal.com', 'event type'), 'FAIL Cal.com event type not checked (API key rejected)');
    assert.ok(!key.stdout.includes('cal_live_revoked'));
    assert.equal(type.code, 1);
    assert.equal(lineOf(type.stdout, 'Cal.com', 'API key'), 'PASS Cal.com API key accepted by Cal.com');
    assert.match(
      lineOf(type.stdout, 'Cal.com', 'event type'),
      /^FAIL Cal\.com event type 424242 not found for this key \(404\): check scheduling\.eventTypeId/,
    );
  });

  test('the model: a rejected key, an unknown model, and a server that only lists its models', async () => {
    const [key, model, listed, unlisted] = await Promise.all([
      verify({ whatsapp: TWILIO }, { OPENAI_API_KEY: 'sk-wrong-key-abcdefghijkl' }),
      verify({ whatsapp: TWILIO }, { LLM_MODEL: 'gpt-4o-minii' }),
      // The workspace's own server, on 127.0.0.1: its own key (any, it checks none) and the operator's switch.
      verify(
        { whatsapp: TWILIO, llm: { baseUrl: listOnly.baseUrl, apiKey: 'local', model: 'llama3.1:8b' } },
        LOCAL_MODEL_ALLOWED,
      ),
      verify(
        { whatsapp: TWILIO, llm: { baseUrl: listOnly.baseUrl, apiKey: 'local', model: 'llama3:70b' } },
        LOCAL_MODEL_ALLOWED,
      ),
    ]);
    assert.equal(key.code, 1);
    assert.equal(
      lineOf(key.stdout, 'model', 'API key'),
      `FAIL model API key ${chat.baseUrl} rejected the API key (401): check OPENAI_API_KEY (or llm.apiKey)`,
    );
    assert.equal(lineOf(key.stdout, 'model', 'model name'), 'FAIL model model name not checked (API key rejected)');
    assert.ok(!key.stdout.includes('sk-wrong-key'));
    assert.equal(model.code, 1);
    assert.equal(
      lineOf(model.stdout, 'model', 'model name'),
      `FAIL model model name gpt-4o-minii does not exist at ${chat.baseUrl} (404): check LLM_MODEL (or llm.model)`,
    );
    assert.equal(listed.code, 0, listed.stdout);
    assert.equal(
      lineOf(listed.stdout, 'model', 'model name'),
      'PASS model model name llama3.1:8b exists (listed by GET /models)',
    );
    assert.equal(unlisted.code, 1);
    assert.equal(
      lineOf(unlisted.stdout, 'model', 'model name'),
      `FAIL model model name llama3:70b does not exist at ${listOnly.baseUrl} (404): check llm.model`,
    );
  });

  test(
    'absent sections: the channel section fails and says who cannot be contacted; ' + 'scheduling is only reported',
    async () => {
      const [bare, noBooking, voice] = await Promise.all([
        verify({}),
        verify({ whatsapp: TWILIO }),
        verify({}, {}, 'voice'),
      ]);
      assert.equal(bare.code, 1);
      assert.match(
        bare.stdout,
        new RegExp(
          String.raw`\n {2}FAIL {2}whatsapp not set {7}no "whatsapp" section: ` +
            String.raw`live leads cannot be messaged \(they go to needs_human\)`,
        ),
      );
      assert.match(
        bare.stdout,
        /\n {2}SKIP {2}scheduling not set {7}no "scheduling" section \(optional\): the agent offers no times/,
      );
      assert.match(bare.stdout, /\n1 of 3 checks failed: fix the settings named above/);
      assert.equal(noBooking.code, 0, noBooking.stdout);
      assert.match(noBooking.stdout, /\n {2}SKIP {2}scheduling not set/);
      assert.match(noBooking.stdout, /\nAll 4 checks passed\.\n$/);
      assert.equal(voice.code, 1);
      assert.match(
        voice.stdout,
        /\n {2}FAIL {2}voice {4}not set {7}no "voice" section: live leads cannot be called \(a live POST answers 502\)/,
      );
      assert.ok(!voice.stdout.includes('model'), 'a voice workspace has no model of ours to check');
    },
  );

  test('--json lists every check and every absent section; exit 1 when one failed', async () => {
    const slug = await workspace({ whatsapp: { ...META, phoneNumberId: '123' } });
    const r = await cli({}, 'workspace', 'verify', slug, '--json');
    assert.equal(r.code, 1);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(Object.keys(out), ['ok', 'checks', 'notConfigured', 'warnings']);
    assert.equal(out.ok, false);
    assert.deepEqual(
      out.checks.map((c: { provider: string; check: string; ok: boolean }) => `${c.provider}/${c.check}/${c.ok}`),
      ['Meta/access token/true', 'Meta/phone number/false', 'model/API key/true', 'model/model name/true'],
    );
    assert.deepEqual(
      out.notConfigured.map((m: { section: string; required: boolean }) => `${m.section}/${m.required}`),
      ['scheduling/false'],
    );
  });

  test('a provider that cannot be reached is a FAIL that says so', async () => {
    const r = await verify(
      { whatsapp: TWILIO, scheduling: SCHEDULING },
      { TWILIO_BASE_URL: 'http://127.0.0.1:9', CALCOM_BASE_URL: 'http://127.0.0.1:9' },
    );
    assert.equal(r.code, 1);
    assert.match(
      lineOf(r.stdout, 'Twilio', 'credentials'),
      /^FAIL Twilio credentials Could not reach Twilio \(.+\)\. Nothing more could be checked\.$/,
    );
    assert.match(lineOf(r.stdout, 'Cal.com', 'API key'), /^FAIL Cal\.com API key Could not reach Cal\.com/);
  });
});

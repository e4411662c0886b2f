import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { publicUrlWarning } from '../../src/admin/settings/provider-settings.ts';
import { SIM_API_KEY, SIM_ASSISTANT_ID, SIM_PHONE_NUMBER_ID } from '../../src/simulators/vapi/vapi-simulator.ts';
import { getLead } from '../helpers/http.ts';
import { adminRolesSetup } from '../helpers/admin-roles-setup.ts';

// The Providers and API keys admin API (docs/DASHBOARD.md, "Providers, API keys and team"):
// secrets never leave the service, Test connection runs verify's checks against the Vapi simulator,
// and keys are created once and revoked. The team is in test/api/admin-team.test.ts.

const setup = adminRolesSetup();
const { sessions, answers, call } = setup;

const SERVER_SECRET = 'server-secret-value-0123456789-WXYZ';
const HMAC_SECRET = 'hmac-secret-value-0123456789-QRST';
const CAL_KEY = 'cal_live_secret-key-0123456789-LMNO';
const CAL_WEBHOOK = 'cal-webhook-secret-0123456789-HIJK';

describe('providers', () => {
  const base = () => `/api/admin/workspaces/${setup.ws.slug}/providers`;
  const voice = {
    provider: 'vapi',
    apiKey: SIM_API_KEY,
    assistantId: SIM_ASSISTANT_ID,
    phoneNumberId: SIM_PHONE_NUMBER_ID,
    serverSecret: SERVER_SECRET,
  };

  it('saves a section encrypted; the view masks every secret to its last 4 characters', async () => {
    assert.equal((await call(sessions.owner, 'PUT', `${base()}/voice`, voice)).status, 200);
    assert.equal(
      (
        await call(sessions.admin, 'PUT', `${base()}/scheduling`, {
          provider: 'calcom',
          apiKey: CAL_KEY,
          eventTypeId: 42,
          webhookSecret: CAL_WEBHOOK,
        })
      ).status,
      200,
    );
    const view = await call(sessions.owner, 'GET', base());
    assert.equal(view.status, 200, JSON.stringify(view.body));
    assert.deepEqual(view.body.providers.voice.serverSecret, { set: true, last4: 'WXYZ' });
    assert.deepEqual(view.body.providers.voice.apiKey, { set: true, last4: SIM_API_KEY.slice(-4) });
    assert.equal(view.body.providers.voice.assistantId, SIM_ASSISTANT_ID);
    assert.deepEqual(view.body.providers.scheduling.apiKey, { set: true, last4: 'LMNO' });
    assert.equal(view.body.providers.scheduling.eventTypeId, 42);
    assert.equal(view.body.providers.whatsapp, null);
    assert.equal(view.body.voiceAuth, 'secret');
    assert.equal(view.body.warning, null);
    const urls = Object.fromEntries(view.body.urls.map((u: { label: string; url: string }) => [u.label, u.url]));
    assert.equal(urls['Server URL (events)'], `https://leads.example.com/api/vapi/${setup.ws.slug}/events`);
    assert.equal(
      urls['Inbound messages webhook'],
      `https://leads.example.com/api/whatsapp/twilio/${setup.ws.slug}/inbound`,
    );
    assert.equal(urls['Status callback'], `https://leads.example.com/api/whatsapp/twilio/${setup.ws.slug}/status`);
    assert.equal(urls['Webhook callback URL'], `https://leads.example.com/api/whatsapp/meta/${setup.ws.slug}/webhook`);
    assert.equal(urls['Webhook subscriber URL'], `https://leads.example.com/api/webhooks/calcom/${setup.ws.slug}`);
  });

  it('an empty secret keeps the stored one; a new one replaces it; the settings cache sees each change', async () => {
    const { serverSecret: _kept, ...noSecret } = voice;
    assert.equal(
      (await call(sessions.owner, 'PUT', `${base()}/voice`, { ...noSecret, apiKey: '', assistantId: SIM_ASSISTANT_ID }))
        .status,
      200,
    );
    let row = (await setup.app.workspaces.findBySlug(setup.ws.slug))!;
    assert.equal(setup.app.workspaces.settingsOf(row).voice?.apiKey, SIM_API_KEY);
    assert.equal(setup.app.workspaces.settingsOf(row).voice?.serverSecret, SERVER_SECRET);
    assert.equal(
      (
        await call(sessions.owner, 'PUT', `${base()}/voice`, {
          ...voice,
          serverSecret: null,
          hmac: { credentialId: 'cred-1', secretKey: HMAC_SECRET },
        })
      ).status,
      200,
    );
    row = (await setup.app.workspaces.findBySlug(setup.ws.slug))!;
    assert.equal(setup.app.workspaces.settingsOf(row).voice?.serverSecret, undefined);
    assert.equal(setup.app.workspaces.settingsOf(row).voice?.hmac?.secretKey, HMAC_SECRET);
    // The other sections are untouched by a voice save.
    assert.equal(setup.app.workspaces.settingsOf(row).scheduling?.apiKey, CAL_KEY);
    const view = await call(sessions.owner, 'GET', base());
    assert.equal(view.body.voiceAuth, 'hmac');
    assert.deepEqual(view.body.providers.voice.hmac, {
      credentialId: 'cred-1',
      secretKey: { set: true, last4: 'QRST' },
    });
  });

  it('a secret that was never set must be given; bad fields are named, never echoed', async () => {
    const r = await call(sessions.owner, 'PUT', `${base()}/whatsapp`, {
      provider: 'meta',
      phoneNumberId: '123',
      verifyToken: 'verify-token-1',
      templateName: 'hello',
    });
    assert.equal(r.status, 400);
    const paths = r.body.issues.map((i: { path: string[] }) => i.path.join('.'));
    assert.ok(paths.includes('whatsapp.accessToken'), JSON.stringify(r.body));
    assert.ok(paths.includes('whatsapp.appSecret'));
    const unknown = await call(sessions.owner, 'PUT', `${base()}/nothing`, {});
    assert.equal(unknown.status, 400);
  });

  it(
    'Test connection runs the verify checks: PASS with the right ' + 'key, FAIL naming voice.apiKey with a wrong one',
    async () => {
      const good = await call(sessions.admin, 'POST', `${base()}/voice/test`, {});
      assert.equal(good.status, 200, JSON.stringify(good.body));
      assert.equal(good.body.passed, true);
      assert.deepEqual(
        good.body.checks.map((c: { check: string; ok: boolean }) => [c.check, c.ok]),
        [
          ['API key', true],
          ['assistant', true],
          ['phone number', true],
        ],
      );
      assert.equal(
        (await call(sessions.owner, 'PUT', `${base()}/voice`, { ...voice, apiKey: 'wrong-vapi-key-000000' })).status,
        200,
      );
      const bad = await call(sessions.owner, 'POST', `${base()}/voice/test`, {});
      assert.equal(bad.body.passed, false);
      assert.equal(bad.body.checks[0].check, 'API key');
      assert.equal(bad.body.checks[0].ok, false);
      assert.match(bad.body.checks[0].note, /voice\.apiKey/);
      const none = await call(sessions.owner, 'POST', `${base()}/whatsapp/test`, {});
      assert.equal(none.body.passed, false);
      assert.equal(none.body.notConfigured[0].section, 'whatsapp');
      await call(sessions.owner, 'PUT', `${base()}/voice`, voice);
    },
  );

  it('agents and viewers 403, a non-member 404, no CSRF 403, signed out 401', async () => {
    for (const role of ['agent', 'viewer'] as const) {
      for (const [method, url] of [
        ['GET', base()],
        ['PUT', `${base()}/voice`],
        ['POST', `${base()}/voice/test`],
      ] as const) {
        const r = await call(sessions[role], method, url, method === 'GET' ? undefined : voice);
        assert.equal(r.status, 403, `${role} ${method} ${url}`);
      }
    }
    assert.equal((await call(setup.outsider, 'GET', base())).status, 404);
    assert.equal((await call(setup.outsider, 'PUT', `${base()}/voice`, voice)).status, 404);
    assert.equal((await call(sessions.owner, 'PUT', `${base()}/voice`, voice, { csrf: false })).status, 403);
    assert.equal((await call(null, 'GET', base())).status, 401);
  });

  it('a secret shorter than 12 characters is shown as set, without characters', async () => {
    assert.equal(
      (await call(sessions.owner, 'PUT', `${base()}/llm`, { apiKey: 'sk-short', model: 'gpt-4o-mini' })).status,
      200,
    );
    const view = await call(sessions.owner, 'GET', base());
    assert.deepEqual(view.body.providers.llm, { apiKey: { set: true, last4: null }, model: 'gpt-4o-mini' });
  });

  it('warns when PUBLIC_BASE_URL is not a public https address', () => {
    assert.equal(publicUrlWarning('https://leads.example.com'), null);
    for (const url of [
      'http://leads.example.com',
      'https://localhost:3000',
      'http://127.0.0.1:3000',
      'https://10.1.2.3',
      'https://192.168.1.5',
      'https://172.20.0.1',
      'https://box.local',
      'https://[::1]:3000',
    ]) {
      assert.ok(publicUrlWarning(url), url);
    }
    assert.match(publicUrlWarning('http://127.0.0.1:3000')!, /local address/);
    assert.match(publicUrlWarning('http://leads.example.com')!, /not https/);
  });
});

describe('API keys', () => {
  const base = () => `/api/admin/workspaces/${setup.ws.slug}/keys`;

  it('creates a key shown once, lists it with last use, revokes it: the public API then answers 401', async () => {
    const created = await call(sessions.admin, 'POST', base(), { name: 'Website', sandbox: true, hourlyLimit: 500 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const key: string = created.body.key.key;
    assert.match(key, /^li_test_/);
    answers.pop(); // this answer is the one place the key may appear
    answers.pop();
    assert.equal((await getLead(setup.app.http, key, crypto.randomUUID())).status, 404);
    // last_used_at is written in the background, at most once a minute per key.
    let listed: any;
    for (;;) {
      listed = (await call(sessions.owner, 'GET', base())).body;
      if (listed.keys.find((k: { id: string }) => k.id === created.body.key.id).lastUsedAt) break;
      await new Promise((r) => setImmediate(r));
    }
    const row = listed.keys.find((k: { id: string }) => k.id === created.body.key.id);
    assert.deepEqual(
      [row.name, row.livemode, row.hourlyLimit, row.prefix, row.revokedAt],
      ['Website', false, 500, created.body.key.prefix, null],
    );
    assert.equal(listed.cacheTtlSeconds, 60);
    assert.ok(!JSON.stringify(listed).includes(key));
    const revoked = await call(sessions.owner, 'DELETE', `${base()}/${row.id}`);
    assert.equal(revoked.status, 200);
    assert.equal((await getLead(setup.app.http, key, crypto.randomUUID())).status, 401);
    const { rows } = await setup.app.db.pool.query(
      `SELECT type, subject_id FROM audit_events WHERE type LIKE 'key.%' ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => r.type),
      ['key.created', 'key.revoked'],
    );
    assert.equal(rows[1].subject_id, row.id);
  });

  it("another workspace's key is 404; bad input 400; agents and viewers 403; no CSRF 403; non-member 404", async () => {
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/${setup.other.apiKeyId}`)).status, 404);
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/not-a-uuid`)).status, 404);
    assert.equal((await getLead(setup.app.http, setup.other.apiKey, crypto.randomUUID())).status, 404);
    assert.equal((await call(sessions.owner, 'POST', base(), { name: '' })).status, 400);
    for (const role of ['agent', 'viewer'] as const) {
      assert.equal((await call(sessions[role], 'GET', base())).status, 403);
      assert.equal((await call(sessions[role], 'POST', base(), { name: 'x' })).status, 403);
      assert.equal((await call(sessions[role], 'DELETE', `${base()}/${setup.ws.apiKeyId}`)).status, 403);
    }
    assert.equal((await call(sessions.owner, 'POST', base(), { name: 'x' }, { csrf: false })).status, 403);
    assert.equal((await call(setup.outsider, 'GET', base())).status, 404);
  });
});

describe('audit', () => {
  it('writes the audit log (never a value) and no answer ever held a secret', async () => {
    const { rows } = await setup.app.db.pool.query(`SELECT DISTINCT type FROM audit_events WHERE workspace_id = $1`, [
      setup.ws.workspaceId,
    ]);
    const types = rows.map((r) => r.type);
    for (const t of ['providers.updated', 'providers.tested', 'key.created', 'key.revoked']) {
      assert.ok(types.includes(t), `${t} in ${types.join(', ')}`);
    }
    const audit = JSON.stringify((await setup.app.db.pool.query('SELECT * FROM audit_events')).rows);
    const everything = [...answers, audit, ...setup.app.logs].join('\n');
    for (const secret of [SIM_API_KEY, SERVER_SECRET, HMAC_SECRET, CAL_KEY, CAL_WEBHOOK, 'wrong-vapi-key-000000']) {
      assert.ok(!everything.includes(secret), `${secret} leaked`);
    }
  });
});

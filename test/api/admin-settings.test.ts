import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { publicUrlWarning } from '../../src/admin/settings/provider-settings.ts';
import type { Role } from '../../src/operators/roles.ts';
import { TeamService } from '../../src/operators/team-service.ts';
import type { AppError } from '../../src/shared/errors.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { admin, makeOperator, signIn, type AdminAnswer, type AdminSession } from '../helpers/admin.ts';
import { getLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The Providers, API keys and Team admin API (docs/DASHBOARD.md, "Providers, API keys and team"):
// secrets never leave the service, Test connection runs verify's checks against the Vapi simulator,
// keys are created once and revoked, and a workspace always keeps an owner.

let app: TestApp;
let sim: VapiSimulator;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let other: Awaited<ReturnType<TestApp['createWorkspace']>>;
const sessions = {} as Record<Role, AdminSession>;
const ops = {} as Record<Role, { email: string; password: string; name: string }>;
let outsider: AdminSession;
/** Every answer of the admin API in this file: none may contain a secret. */
const answers: string[] = [];

const SERVER_SECRET = 'server-secret-value-0123456789-WXYZ';
const HMAC_SECRET = 'hmac-secret-value-0123456789-QRST';
const CAL_KEY = 'cal_live_secret-key-0123456789-LMNO';
const CAL_WEBHOOK = 'cal-webhook-secret-0123456789-HIJK';

async function call(
  session: AdminSession | null,
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE',
  url: string,
  body?: unknown,
  opts: { csrf?: boolean } = {},
): Promise<AdminAnswer> {
  const r = await admin(app.http, session, method, url, body, opts);
  answers.push(JSON.stringify(r.body), JSON.stringify(r.headers));
  return r;
}

before(async () => {
  sim = await startVapiSimulator();
  app = await startTestApp({
    env: { VAPI_BASE_URL: sim.url, PUBLIC_BASE_URL: 'https://leads.example.com', API_KEY_CACHE_TTL_MS: '60000' },
  });
  ws = await app.createWorkspace('voice');
  other = await app.createWorkspace('voice');
  for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
    ops[role] = await makeOperator(app, [{ workspaceId: ws.workspaceId, role }]);
    sessions[role] = (await signIn(app.http, ops[role].email, ops[role].password)).session!;
  }
  const op = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  outsider = (await signIn(app.http, op.email, op.password)).session!;
});

after(async () => {
  await app?.close();
  await sim?.close();
});

describe('providers', () => {
  const base = () => `/api/admin/workspaces/${ws.slug}/providers`;
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
    assert.equal(urls['Server URL (events)'], `https://leads.example.com/api/vapi/${ws.slug}/events`);
    assert.equal(urls['Inbound messages webhook'], `https://leads.example.com/api/whatsapp/twilio/${ws.slug}/inbound`);
    assert.equal(urls['Status callback'], `https://leads.example.com/api/whatsapp/twilio/${ws.slug}/status`);
    assert.equal(urls['Webhook callback URL'], `https://leads.example.com/api/whatsapp/meta/${ws.slug}/webhook`);
    assert.equal(urls['Webhook subscriber URL'], `https://leads.example.com/api/webhooks/calcom/${ws.slug}`);
  });

  it('an empty secret keeps the stored one; a new one replaces it; the settings cache sees each change', async () => {
    const { serverSecret: _kept, ...noSecret } = voice;
    assert.equal(
      (await call(sessions.owner, 'PUT', `${base()}/voice`, { ...noSecret, apiKey: '', assistantId: SIM_ASSISTANT_ID }))
        .status,
      200,
    );
    let row = (await app.workspaces.findBySlug(ws.slug))!;
    assert.equal(app.workspaces.settingsOf(row).voice?.apiKey, SIM_API_KEY);
    assert.equal(app.workspaces.settingsOf(row).voice?.serverSecret, SERVER_SECRET);
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
    row = (await app.workspaces.findBySlug(ws.slug))!;
    assert.equal(app.workspaces.settingsOf(row).voice?.serverSecret, undefined);
    assert.equal(app.workspaces.settingsOf(row).voice?.hmac?.secretKey, HMAC_SECRET);
    // The other sections are untouched by a voice save.
    assert.equal(app.workspaces.settingsOf(row).scheduling?.apiKey, CAL_KEY);
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

  it('Test connection runs the verify checks: PASS with the right key, FAIL naming voice.apiKey with a wrong one', async () => {
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
  });

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
    assert.equal((await call(outsider, 'GET', base())).status, 404);
    assert.equal((await call(outsider, 'PUT', `${base()}/voice`, voice)).status, 404);
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
  const base = () => `/api/admin/workspaces/${ws.slug}/keys`;

  it('creates a key shown once, lists it with last use, revokes it: the public API then answers 401', async () => {
    const created = await call(sessions.admin, 'POST', base(), { name: 'Website', sandbox: true, hourlyLimit: 500 });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const key: string = created.body.key.key;
    assert.match(key, /^li_test_/);
    answers.pop(); // this answer is the one place the key may appear
    answers.pop();
    assert.equal((await getLead(app.http, key, crypto.randomUUID())).status, 404);
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
    assert.equal((await getLead(app.http, key, crypto.randomUUID())).status, 401);
    const { rows } = await app.db.pool.query(
      `SELECT type, subject_id FROM audit_events WHERE type LIKE 'key.%' ORDER BY id`,
    );
    assert.deepEqual(
      rows.map((r) => r.type),
      ['key.created', 'key.revoked'],
    );
    assert.equal(rows[1].subject_id, row.id);
  });

  it("another workspace's key is 404; bad input 400; agents and viewers 403; no CSRF 403; non-member 404", async () => {
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/${other.apiKeyId}`)).status, 404);
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/not-a-uuid`)).status, 404);
    assert.equal((await getLead(app.http, other.apiKey, crypto.randomUUID())).status, 404);
    assert.equal((await call(sessions.owner, 'POST', base(), { name: '' })).status, 400);
    for (const role of ['agent', 'viewer'] as const) {
      assert.equal((await call(sessions[role], 'GET', base())).status, 403);
      assert.equal((await call(sessions[role], 'POST', base(), { name: 'x' })).status, 403);
      assert.equal((await call(sessions[role], 'DELETE', `${base()}/${ws.apiKeyId}`)).status, 403);
    }
    assert.equal((await call(sessions.owner, 'POST', base(), { name: 'x' }, { csrf: false })).status, 403);
    assert.equal((await call(outsider, 'GET', base())).status, 404);
  });
});

describe('team', () => {
  const base = () => `/api/admin/workspaces/${ws.slug}/team`;
  const tokenOf = (link: string) => link.split('#')[1]!;

  it('lists members with roles; only owners may see or change the team', async () => {
    const team = await call(sessions.owner, 'GET', base());
    assert.equal(team.status, 200);
    assert.deepEqual(
      team.body.members.map((m: { role: string }) => m.role),
      ['owner', 'admin', 'agent', 'viewer'],
    );
    for (const role of ['admin', 'agent', 'viewer'] as const) {
      for (const [method, url] of [
        ['GET', base()],
        ['POST', `${base()}/invites`],
        ['PATCH', `${base()}/members/${team.body.members[0].id}`],
        ['DELETE', `${base()}/members/${team.body.members[0].id}`],
      ] as const) {
        const r = await call(
          sessions[role],
          method,
          url,
          method === 'GET' || method === 'DELETE' ? undefined : { email: 'x@example.com', role: 'owner' },
        );
        assert.equal(r.status, 403, `${role} ${method} ${url}`);
      }
    }
    assert.equal((await call(outsider, 'GET', base())).status, 404);
    assert.equal(
      (
        await call(
          sessions.owner,
          'POST',
          `${base()}/invites`,
          { email: 'y@example.com', role: 'agent' },
          { csrf: false },
        )
      ).status,
      403,
    );
  });

  it('an invitation link creates the account with the role, signs it in, and works once', async () => {
    const invited = await call(sessions.owner, 'POST', `${base()}/invites`, {
      email: 'New.Person@Example.com',
      role: 'agent',
    });
    assert.equal(invited.status, 200, JSON.stringify(invited.body));
    assert.match(invited.body.link, /^https:\/\/leads\.example\.com\/admin\/invite#/);
    const token = tokenOf(invited.body.link);
    const days = (Date.parse(invited.body.invite.expiresAt) - Date.now()) / 86_400_000;
    assert.ok(days > 6.9 && days <= 7, String(days));
    const { rows } = await app.db.pool.query('SELECT token_hash FROM workspace_invites');
    assert.ok(rows.every((r) => !r.token_hash.toString('utf8').includes(token)));
    assert.ok(!JSON.stringify((await call(sessions.owner, 'GET', base())).body).includes(token));
    const info = await call(null, 'POST', '/api/admin/invites/lookup', { token });
    assert.deepEqual(
      [info.body.email, info.body.role, info.body.workspace.slug],
      ['new.person@example.com', 'agent', ws.slug],
    );
    const short = await call(null, 'POST', `/api/admin/workspaces/${ws.slug}/invites/accept`, {
      token,
      name: 'New Person',
      password: 'short',
    });
    assert.equal(short.status, 400);
    const wrongSlug = await call(null, 'POST', `/api/admin/workspaces/${other.slug}/invites/accept`, {
      token,
      name: 'New Person',
      password: 'a-long-password-1',
    });
    assert.equal(wrongSlug.status, 404);
    const res = await app.http.inject({
      method: 'POST',
      url: `/api/admin/workspaces/${ws.slug}/invites/accept`,
      payload: { token, name: 'New Person', password: 'a-long-password-1' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    const me = await app.http.inject({ method: 'GET', url: '/api/admin/session', headers: { cookie } });
    assert.equal(me.json().workspaces.find((w: { slug: string }) => w.slug === ws.slug).role, 'agent');
    assert.equal(
      (
        await call(null, 'POST', `/api/admin/workspaces/${ws.slug}/invites/accept`, {
          token,
          name: 'Again',
          password: 'a-long-password-1',
        })
      ).status,
      404,
    );
    assert.equal((await call(null, 'POST', '/api/admin/invites/lookup', { token })).status, 404);
    assert.equal(
      (await call(sessions.owner, 'POST', `${base()}/invites`, { email: 'new.person@example.com', role: 'viewer' }))
        .status,
      409,
    );
  });

  it('an existing account signs in and accepts; another account cannot use the link; an expired link is refused', async () => {
    const existing = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'viewer' }]);
    const existingSession = (await signIn(app.http, existing.email, existing.password)).session!;
    const invited = await call(sessions.owner, 'POST', `${base()}/invites`, { email: existing.email, role: 'admin' });
    const token = tokenOf(invited.body.link);
    assert.equal(
      (await call(null, 'POST', '/api/admin/invites/lookup', { token })).body.accountExists,
      undefined,
      'not disclosed',
    );
    const asNew = await call(null, 'POST', `/api/admin/workspaces/${ws.slug}/invites/accept`, {
      token,
      name: 'X',
      password: 'a-long-password-2',
    });
    assert.equal(asNew.status, 409);
    assert.equal(
      (await call(outsider, 'POST', `/api/admin/workspaces/${ws.slug}/invites/accept`, { token })).status,
      403,
    );
    assert.equal(
      (
        await call(
          existingSession,
          'POST',
          `/api/admin/workspaces/${ws.slug}/invites/accept`,
          { token },
          { csrf: false },
        )
      ).status,
      403,
    );
    const ok = await call(existingSession, 'POST', `/api/admin/workspaces/${ws.slug}/invites/accept`, { token });
    assert.equal(ok.status, 200, JSON.stringify(ok.body));
    const me = await call(existingSession, 'GET', '/api/admin/session');
    assert.equal(me.body.workspaces.find((w: { slug: string }) => w.slug === ws.slug).role, 'admin');

    const late = await call(sessions.owner, 'POST', `${base()}/invites`, { email: 'late@example.com', role: 'viewer' });
    await app.db.pool.query(`UPDATE workspace_invites SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      late.body.invite.id,
    ]);
    assert.equal(
      (await call(null, 'POST', '/api/admin/invites/lookup', { token: tokenOf(late.body.link) })).status,
      404,
    );
    assert.ok(
      !(await call(sessions.owner, 'GET', base())).body.invites.some(
        (i: { id: string }) => i.id === late.body.invite.id,
      ),
    );
  });

  it('changes roles and removes members; the last owner can be neither demoted nor removed, also in a race', async () => {
    const members = (await call(sessions.owner, 'GET', base())).body.members as Array<{
      id: string;
      email: string;
      role: string;
    }>;
    const id = (email: string) => members.find((m) => m.email === email)!.id;
    const self = id(ops.owner.email);
    for (const [method, body] of [
      ['PATCH', { role: 'admin' }],
      ['DELETE', undefined],
    ] as const) {
      const r = await call(sessions.owner, method, `${base()}/members/${self}`, body);
      assert.equal(r.status, 409);
      assert.equal(r.body.error, 'A workspace keeps at least one owner: make another member owner first.');
    }
    assert.equal(
      (await call(sessions.owner, 'PATCH', `${base()}/members/${id(ops.viewer.email)}`, { role: 'superuser' })).status,
      400,
    );
    assert.equal(
      (await call(sessions.owner, 'PATCH', `${base()}/members/${crypto.randomUUID()}`, { role: 'admin' })).status,
      404,
    );
    assert.equal(
      (await call(sessions.owner, 'PATCH', `${base()}/members/${id(ops.admin.email)}`, { role: 'owner' })).status,
      200,
    );
    const adminAsOwner = sessions.admin;
    // Two owners demote each other at once: one wins and one is refused. The loser meets either
    // the last-owner rule (409) or, when the winner committed before the loser's request was
    // checked, the loser's own new role (403); never do both succeed.
    const [a, b] = await Promise.all([
      call(sessions.owner, 'PATCH', `${base()}/members/${id(ops.admin.email)}`, { role: 'viewer' }),
      call(adminAsOwner, 'PATCH', `${base()}/members/${self}`, { role: 'viewer' }),
    ]);
    const statuses = [a.status, b.status].sort();
    assert.ok(
      JSON.stringify(statuses) === '[200,403]' || JSON.stringify(statuses) === '[200,409]',
      JSON.stringify(statuses),
    );
    const { rows } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1 AND role = 'owner'`,
      [ws.workspaceId],
    );
    assert.equal(rows[0].n, 1);
    const winner = a.status === 200 ? sessions.owner : adminAsOwner;
    assert.equal((await call(winner, 'DELETE', `${base()}/members/${id(ops.viewer.email)}`)).status, 200);
    assert.equal((await call(sessions.viewer, 'GET', `/api/admin/workspaces/${ws.slug}/leads`)).status, 404);
  });

  it('an owner demoted after the session check is refused under the lock (the check is repeated there)', async () => {
    const team = new TeamService({ pool: app.db.pool, clock: () => new Date() });
    // Read the members from the database: which session is still owner depends on who won the
    // race in the test before.
    const members = async () =>
      (
        await app.db.pool.query(
          `SELECT operator_id AS id, role FROM memberships WHERE workspace_id = $1 ORDER BY operator_id`,
          [ws.workspaceId],
        )
      ).rows as Array<{ id: string; role: string }>;
    const before = await members();
    const nonOwner = before.find((m) => m.role !== 'owner')!;
    const target = before.find((m) => m.id !== nonOwner.id)!;
    assert.ok(nonOwner && target);
    await assert.rejects(
      team.changeRole(ws.workspaceId, nonOwner.id, target.id, 'viewer'),
      (e: AppError) => e.code === 'forbidden',
    );
    await assert.rejects(team.remove(ws.workspaceId, nonOwner.id, target.id), (e: AppError) => e.code === 'forbidden');
    assert.deepEqual(await members(), before, 'nothing changed');
  });

  it('writes the audit log (never a value) and no answer ever held a secret', async () => {
    const { rows } = await app.db.pool.query(`SELECT DISTINCT type FROM audit_events WHERE workspace_id = $1`, [
      ws.workspaceId,
    ]);
    const types = rows.map((r) => r.type);
    for (const t of [
      'providers.updated',
      'providers.tested',
      'key.created',
      'key.revoked',
      'member.invited',
      'member.role_changed',
      'member.removed',
      'invite.accepted',
    ]) {
      assert.ok(types.includes(t), `${t} in ${types.join(', ')}`);
    }
    const audit = JSON.stringify((await app.db.pool.query('SELECT * FROM audit_events')).rows);
    const everything = [...answers, audit, ...app.logs].join('\n');
    for (const secret of [SIM_API_KEY, SERVER_SECRET, HMAC_SECRET, CAL_KEY, CAL_WEBHOOK, 'wrong-vapi-key-000000']) {
      assert.ok(!everything.includes(secret), `${secret} leaked`);
    }
  });
});

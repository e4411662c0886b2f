import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { adminRolesSetup } from '../helpers/admin-roles-setup.ts';

// The Form page's intake admin API (docs/INTAKE.md, "The Form page"): the hosted form's address
// and embed snippet, the form's settings with consent versioning, the logo's limits, publishable
// keys and connected sources; who may read and change each, the audit trail, and one workspace
// never reaching another's keys or sources.

const setup = adminRolesSetup();
const { sessions, call } = setup;
const base = () => `/api/admin/workspaces/${setup.ws.slug}/intake`;
const TURNSTILE_SECRET = 'turnstile-secret-0123456789-ABCD';
const META_TOKEN = 'EAAB-page-token-0123456789-EFGH';
const META_APP_SECRET = 'meta-app-secret-0123456789-IJKL';
const PNG = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.alloc(64)]);

const audits = async (type: string) =>
  (
    await setup.app.db.pool.query('SELECT count(*)::int AS n FROM audit_events WHERE type = $1 AND workspace_id = $2', [
      type,
      setup.ws.workspaceId,
    ])
  ).rows[0].n as number;

describe('the Form page: hosted form and embed', () => {
  it('gives every role the form link, the preview path and the embed snippet', async () => {
    for (const role of ['owner', 'viewer'] as const) {
      const r = await call(sessions[role], 'GET', base());
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.formUrl, `https://leads.example.com/forms/${setup.ws.slug}`);
      assert.equal(r.body.previewPath, `/forms/${setup.ws.slug}?embed=1`);
      assert.equal(
        r.body.embedSnippet,
        `<div data-leadintake-form="${setup.ws.slug}"></div>\n` +
          `<script src="https://leads.example.com/forms/${setup.ws.slug}/embed.js" async></script>`,
      );
    }
    assert.equal((await call(setup.outsider, 'GET', base())).status, 404);
    assert.equal((await call(null, 'GET', base())).status, 401);
  });
});

describe('the Form page: settings and consent versions', () => {
  it('reads the defaults with the default consent text as version 1', async () => {
    const r = await call(sessions.viewer, 'GET', `${base()}/settings`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.settings.language, 'en');
    assert.equal(r.body.settings.email, 'optional');
    assert.equal(r.body.settings.mode, 'live');
    assert.equal(r.body.settings.turnstile, null);
    assert.equal(r.body.consent.version, 1);
    assert.ok(r.body.consent.text.length > 0);
    assert.equal(r.body.logo, null);
  });

  it('a changed consent text is a new version; saving it again keeps the version', async () => {
    const body = {
      language: 'de',
      accentColor: '#AA3300',
      email: 'required',
      consentText: 'Ich bin einverstanden, dass Sie mich anrufen.',
      selfBookingUrl: 'https://cal.com/acme/intro',
      mode: 'sandbox',
      turnstile: { siteKey: '0x4AAAAAAA-site', secret: TURNSTILE_SECRET },
    };
    const first = await call(sessions.admin, 'PUT', `${base()}/settings`, body);
    assert.equal(first.status, 200, JSON.stringify(first.body));
    assert.equal(first.body.consent.version, 2);
    assert.equal(first.body.consent.text, body.consentText);
    assert.equal(first.body.settings.accentColor, '#aa3300');
    assert.deepEqual(first.body.settings.turnstile, { siteKey: '0x4AAAAAAA-site', secretSet: true });
    // The secret left out keeps the saved one; the text unchanged keeps version 2.
    const again = await call(sessions.owner, 'PUT', `${base()}/settings`, {
      ...body,
      turnstile: { siteKey: '0x4AAAAAAA-site' },
    });
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.consent.version, 2);
    assert.equal(again.body.settings.turnstile.secretSet, true);
    const changed = await call(sessions.owner, 'PUT', `${base()}/settings`, { ...body, consentText: 'Neu.' });
    assert.equal(changed.body.consent.version, 3);
    const versions = await setup.app.db.pool.query(
      'SELECT version, text FROM consent_texts WHERE workspace_id = $1 ORDER BY version',
      [setup.ws.workspaceId],
    );
    assert.deepEqual(
      versions.rows.map((v) => v.version),
      [1, 2, 3],
    );
    assert.equal(versions.rows[1].text, body.consentText);
    assert.equal(await audits('form_settings.updated'), 3);
  });

  it('names a bad field; agents and viewers may not save', async () => {
    const bad = await call(sessions.owner, 'PUT', `${base()}/settings`, { accentColor: 'red' });
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.issues[0].path, ['accentColor']);
    const http = await call(sessions.owner, 'PUT', `${base()}/settings`, { selfBookingUrl: 'http://cal.com/x' });
    assert.equal(http.status, 400);
    assert.deepEqual(http.body.issues[0].path, ['selfBookingUrl']);
    for (const role of ['agent', 'viewer'] as const)
      assert.equal((await call(sessions[role], 'PUT', `${base()}/settings`, { language: 'en' })).status, 403, role);
    assert.equal((await call(setup.outsider, 'PUT', `${base()}/settings`, { language: 'en' })).status, 404);
    assert.equal(
      (await call(sessions.owner, 'PUT', `${base()}/settings`, { language: 'en' }, { csrf: false })).status,
      403,
    );
  });
});

describe('the Form page: the logo', () => {
  const upload = (contentType: string, bytes: Buffer, role: 'owner' | 'viewer' = 'owner') =>
    call(sessions[role], 'PUT', `${base()}/logo`, { contentType, data: bytes.toString('base64') });

  it('stores a PNG and removes it', async () => {
    const r = await upload('image/png', PNG);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.logo.contentType, 'image/png');
    assert.equal(r.body.logo.bytes, PNG.length);
    assert.equal(await audits('form_logo.updated'), 1);
    const gone = await call(sessions.owner, 'DELETE', `${base()}/logo`);
    assert.equal(gone.status, 200);
    assert.equal(gone.body.logo, null);
  });

  it('refuses another type, bytes that are not the type, a file over 256 KiB, and readers', async () => {
    assert.equal((await upload('image/gif', Buffer.from('GIF89a'))).status, 400);
    const html = await upload('image/png', Buffer.from('<html><script>alert(1)</script></html>'));
    assert.equal(html.status, 400);
    assert.match(html.body.issues[0].message, /not the image/);
    const big = Buffer.concat([PNG, Buffer.alloc(256 * 1024)]);
    assert.ok([400, 413].includes((await upload('image/png', big)).status));
    assert.equal((await upload('image/png', PNG, 'viewer')).status, 403);
    const stored = await setup.app.db.pool.query('SELECT count(*)::int AS n FROM workspace_logos');
    assert.equal(stored.rows[0].n, 0);
  });
});

describe('the Form page: publishable keys', () => {
  it('creates a key for an origin (shown once), lists it without the key, changes origins, revokes', async () => {
    const created = await call(sessions.admin, 'POST', `${base()}/keys`, {
      allowedOrigins: ['https://www.example.com/'],
    });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { id, key } = created.body.key;
    assert.match(key, /^li_pub_live_/);
    assert.deepEqual(created.body.key.allowedOrigins, ['https://www.example.com']);
    const list = await call(sessions.viewer, 'GET', `${base()}/keys`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.keys.map((k: Record<string, unknown>) => [k.id, k.livemode, k.allowedOrigins, k.revokedAt]),
      [[id, true, ['https://www.example.com'], null]],
    );
    assert.ok(!JSON.stringify(list.body).includes(key));
    const moved = await call(sessions.owner, 'PUT', `${base()}/keys/${id}/origins`, {
      allowedOrigins: ['https://shop.example.com', 'http://localhost:3000'],
    });
    assert.equal(moved.status, 200, JSON.stringify(moved.body));
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/keys/${id}`)).status, 200);
    const after = await call(sessions.owner, 'GET', `${base()}/keys`);
    assert.deepEqual(after.body.keys[0].allowedOrigins, ['https://shop.example.com', 'http://localhost:3000']);
    assert.ok(after.body.keys[0].revokedAt);
    assert.deepEqual(
      [
        await audits('publishable_key.created'),
        await audits('publishable_key.origins_changed'),
        await audits('publishable_key.revoked'),
      ],
      [1, 1, 1],
    );
  });

  it('refuses a bad origin, readers, and another workspace’s or a secret key', async () => {
    const bad = await call(sessions.owner, 'POST', `${base()}/keys`, { allowedOrigins: ['http://example.com'] });
    assert.equal(bad.status, 400);
    assert.equal((await call(sessions.owner, 'POST', `${base()}/keys`, { allowedOrigins: [] })).status, 400);
    assert.equal(
      (await call(sessions.viewer, 'POST', `${base()}/keys`, { allowedOrigins: ['https://a.example'] })).status,
      403,
    );
    const theirs = await call(setup.outsider, 'POST', `/api/admin/workspaces/${setup.other.slug}/intake/keys`, {
      allowedOrigins: ['https://other.example'],
    });
    assert.equal(theirs.status, 200);
    const theirId = theirs.body.key.id;
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/keys/${theirId}`)).status, 404);
    assert.equal(
      (
        await call(sessions.owner, 'PUT', `${base()}/keys/${theirId}/origins`, {
          allowedOrigins: ['https://evil.example'],
        })
      ).status,
      404,
    );
    const secret = await call(sessions.owner, 'POST', `/api/admin/workspaces/${setup.ws.slug}/keys`, {
      name: 'server',
    });
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/keys/${secret.body.key.id}`)).status, 404);
    const still = await setup.app.db.pool.query('SELECT revoked_at, allowed_origins FROM api_keys WHERE id = $1', [
      theirId,
    ]);
    assert.deepEqual([still.rows[0].revoked_at, still.rows[0].allowed_origins], [null, ['https://other.example']]);
  });
});

describe('the Form page: connected sources', () => {
  it('connects a generic webhook, Google and Meta; lists their URL and status, never a secret', async () => {
    const hook = await call(sessions.owner, 'POST', `${base()}/sources`, { kind: 'webhook', name: 'Typeform' });
    assert.equal(hook.status, 200, JSON.stringify(hook.body));
    assert.match(hook.body.secret, /^lis_/);
    assert.match(hook.body.source.url, /^https:\/\/leads\.example\.com\/api\/intake\/webhook\/[A-Za-z0-9_-]{20,}$/);
    assert.equal(hook.body.source.status, 'waiting');
    const google = await call(sessions.admin, 'POST', `${base()}/sources`, {
      kind: 'google',
      name: 'Spring campaign',
      secret: 'google-key-typed-in-ads',
      sandbox: true,
    });
    assert.equal(google.status, 200, JSON.stringify(google.body));
    assert.equal(google.body.secret, 'google-key-typed-in-ads');
    const meta = await call(sessions.owner, 'POST', `${base()}/sources`, {
      kind: 'meta',
      name: 'Acme Page',
      pageAccessToken: META_TOKEN,
      appSecret: META_APP_SECRET,
      verifyToken: 'verify-me',
      pageId: '1234567890',
    });
    assert.equal(meta.status, 200, JSON.stringify(meta.body));
    assert.equal(meta.body.secret, null);
    assert.match(meta.body.source.url, /\/api\/intake\/meta\//);
    const list = await call(sessions.viewer, 'GET', `${base()}/sources`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.sources.map((s: Record<string, unknown>) => [s.kind, s.name, s.status, s.sandbox, s.lastLeadAt]),
      [
        ['webhook', 'Typeform', 'waiting', false, null],
        ['google', 'Spring campaign', 'waiting', true, null],
        ['meta', 'Acme Page', 'waiting', false, null],
      ],
    );
    const text = JSON.stringify(list.body);
    for (const secret of [hook.body.secret, 'google-key-typed-in-ads', META_TOKEN, META_APP_SECRET, 'verify-me'])
      assert.ok(!text.includes(secret), secret);
    assert.equal(await audits('lead_source.created'), 3);
  });

  it('shows the last lead and the last error, edits the mapping, rotates and disconnects', async () => {
    const list = await call(sessions.owner, 'GET', `${base()}/sources`);
    const hook = list.body.sources.find((s: Record<string, unknown>) => s.kind === 'webhook');
    await setup.app.db.pool.query(
      `UPDATE lead_sources SET last_lead_at = '2026-01-02T03:04:05Z', last_error = 'Signature did not match',
         last_error_at = '2026-01-02T04:00:00Z' WHERE id = $1`,
      [hook.id],
    );
    const seen = (await call(sessions.viewer, 'GET', `${base()}/sources`)).body.sources.find(
      (s: Record<string, unknown>) => s.id === hook.id,
    );
    assert.deepEqual(
      [seen.status, seen.lastLeadAt, seen.lastError],
      ['failing', '2026-01-02T03:04:05.000Z', 'Signature did not match'],
    );
    const edited = await call(sessions.owner, 'PATCH', `${base()}/sources/${hook.id}`, {
      mapping: { phone: 'contact.phone', name: ['first', 'last'] },
    });
    assert.equal(edited.status, 200, JSON.stringify(edited.body));
    assert.deepEqual(edited.body.source.mapping, { phone: 'contact.phone', name: ['first', 'last'] });
    const badPath = await call(sessions.owner, 'PATCH', `${base()}/sources/${hook.id}`, { mapping: { phone: '..' } });
    assert.equal(badPath.status, 400);
    const rotated = await call(sessions.owner, 'POST', `${base()}/sources/${hook.id}/rotate-secret`, {});
    assert.equal(rotated.status, 200, JSON.stringify(rotated.body));
    assert.match(rotated.body.secret, /^lis_/);
    assert.equal((await call(sessions.viewer, 'DELETE', `${base()}/sources/${hook.id}`)).status, 403);
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/sources/${hook.id}`)).status, 200);
    const after = (await call(sessions.owner, 'GET', `${base()}/sources`)).body.sources.find(
      (s: Record<string, unknown>) => s.id === hook.id,
    );
    assert.equal(after.status, 'revoked');
    assert.equal((await call(sessions.owner, 'PATCH', `${base()}/sources/${hook.id}`, { name: 'x' })).status, 404);
  });

  it('never reaches another workspace’s source', async () => {
    const theirs = await call(setup.outsider, 'POST', `/api/admin/workspaces/${setup.other.slug}/intake/sources`, {
      kind: 'webhook',
      name: 'Theirs',
    });
    const id = theirs.body.source.id;
    assert.equal((await call(sessions.owner, 'PATCH', `${base()}/sources/${id}`, { name: 'Mine now' })).status, 404);
    assert.equal((await call(sessions.owner, 'POST', `${base()}/sources/${id}/rotate-secret`, {})).status, 404);
    assert.equal((await call(sessions.owner, 'DELETE', `${base()}/sources/${id}`)).status, 404);
    const mine = (await call(sessions.owner, 'GET', `${base()}/sources`)).body.sources;
    assert.ok(!mine.some((s: Record<string, unknown>) => s.id === id));
    const row = await setup.app.db.pool.query('SELECT name, revoked_at FROM lead_sources WHERE id = $1', [id]);
    assert.deepEqual([row.rows[0].name, row.rows[0].revoked_at], ['Theirs', null]);
  });

  it('never sends a secret in any answer of this file', () => {
    const all = setup.answers.join('\n');
    for (const secret of [TURNSTILE_SECRET, META_TOKEN, META_APP_SECRET]) assert.ok(!all.includes(secret), secret);
  });
});

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The first hour in the dashboard (docs/DASHBOARD.md, "The operator's day"): a workspace that has
// only sandbox leads (the demo's) shows them without the Sandbox switch; a phone number typed
// without its country code finds the lead; the Providers page of a sandbox-only workspace says
// its providers are simulated.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let session: AdminSession;
const leadsUrl = (query = '') => `/api/admin/workspaces/${ws.slug}/leads${query}`;

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  // A workspace tried out in the sandbox only, like the demo's: its live key is revoked.
  await app.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [ws.apiKeyId]);
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  session = (await signIn(app.http, op.email, op.password)).session!;
});
after(() => app.close());

async function lead(phone: string, key: string, name = 'Ada Lovelace'): Promise<string> {
  const r = await postLead(app.http, key, validLead({ phone, name }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.leadId;
}

describe('a workspace with only sandbox leads', () => {
  it('shows them by default and says so; the switch still decides when it is set', async () => {
    const id = await lead('+1 555 010 0001', ws.sandboxKey, 'Sandy Demo');
    const byDefault = await admin(app.http, session, 'GET', leadsUrl());
    assert.equal(byDefault.status, 200);
    assert.equal(byDefault.body.sandbox, true);
    assert.deepEqual(
      byDefault.body.leads.map((l: { id: string }) => l.id),
      [id],
    );
    assert.equal(byDefault.body.counts.all, 1);
    const liveOnly = await admin(app.http, session, 'GET', leadsUrl('?sandbox=false'));
    assert.deepEqual([liveOnly.body.sandbox, liveOnly.body.leads.length, liveOnly.body.counts.all], [false, 0, 0]);

    const providers = await admin(app.http, session, 'GET', `/api/admin/workspaces/${ws.slug}/providers`);
    assert.equal(providers.body.sandboxOnly, true);
  });

  it(
    'a phone number typed without its country code matches the ' + 'end of the stored one; the 3-digit minimum stays',
    async () => {
      const id = await lead('+1 555 010 0002', ws.sandboxKey);
      for (const q of ['555 010 0002', '(555) 010-0002', '5550100002', '+1 555 010 0002']) {
        const r = await admin(app.http, session, 'GET', leadsUrl(`?sandbox=true&q=${encodeURIComponent(q)}`));
        assert.equal(r.status, 200, q);
        assert.deepEqual(
          r.body.leads.map((l: { id: string }) => l.id),
          [id],
          q,
        );
      }
      // With "+", the number is a whole one: another country code does not match the tail.
      const other = await admin(
        app.http,
        session,
        'GET',
        leadsUrl(`?sandbox=true&q=${encodeURIComponent('+44 555 010 0002')}`),
      );
      assert.deepEqual(other.body.leads, []);
      assert.equal((await admin(app.http, session, 'GET', leadsUrl(`?q=${encodeURIComponent('5 5')}`))).status, 400);
    },
  );

  it(
    'once a live lead exists, the default is live leads only ' + 'and the Providers page no longer says sandbox',
    async () => {
      const keyRes = await admin(app.http, session, 'POST', `/api/admin/workspaces/${ws.slug}/keys`, { name: 'live' });
      assert.equal(keyRes.status, 200, JSON.stringify(keyRes.body));
      const liveProviders = await admin(app.http, session, 'GET', `/api/admin/workspaces/${ws.slug}/providers`);
      assert.equal(liveProviders.body.sandboxOnly, false);
      const live = await lead('+1 555 010 0003', keyRes.body.key.key, 'Live Lead');
      const byDefault = await admin(app.http, session, 'GET', leadsUrl());
      assert.equal(byDefault.body.sandbox, false);
      assert.deepEqual(
        byDefault.body.leads.map((l: { id: string }) => l.id),
        [live],
      );
      const withSandbox = await admin(app.http, session, 'GET', leadsUrl('?sandbox=true'));
      assert.deepEqual([withSandbox.body.sandbox, withSandbox.body.leads.length], [true, 3]);
    },
  );
});

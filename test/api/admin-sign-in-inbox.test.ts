import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { setUpAdminApi } from '../helpers/admin-api-setup.ts';

// The admin API (docs/DASHBOARD.md): sign-in, sessions, throttling and the inbox, through the real
// app on its own database. The lead page and the actions: admin-lead-page.test.ts.

const { setup: env, clock, sessions, leadsUrl, newLead, signInEveryRole } = setUpAdminApi();

describe('sign-in and sessions', () => {
  it(
    'sets an HttpOnly SameSite=Lax cookie (not Secure over http) ' + 'and answers the operator, token and workspaces',
    async () => {
      const op = await makeOperator(env.app, [{ workspaceId: env.ws.workspaceId, role: 'agent' }]);
      const r = await signIn(env.app.http, op.email.toUpperCase(), op.password);
      assert.equal(r.status, 200);
      const cookie = String(r.headers['set-cookie']);
      assert.match(cookie, /^li_session=[\w-]{40,}; Path=\/; HttpOnly; SameSite=Lax$/);
      assert.deepEqual(r.body.workspaces, [
        {
          slug: env.ws.slug,
          name: `Workspace ${env.ws.slug}`,
          channel: 'whatsapp',
          role: 'agent',
          permissions: ['leads.read', 'leads.act', 'settings.read', 'logs.read', 'analytics.read'],
        },
      ]);
      const me = await admin(env.app.http, r.session, 'GET', '/api/admin/session');
      assert.equal(me.status, 200);
      assert.equal(me.body.operator.email, op.email);
      assert.ok(!env.app.logs.join('').includes(op.password), 'the password never reaches the logs');
    },
  );

  it(
    'a wrong password or unknown account is 401 with one message; the account is ' +
      'throttled from that address after 3 failures, even with the right password',
    async () => {
      const op = await makeOperator(env.app, []);
      const wrong = await signIn(env.app.http, op.email, 'not-it', '10.0.0.1');
      assert.deepEqual([wrong.status, wrong.body], [401, { ok: false, error: 'Email or password is incorrect.' }]);
      assert.equal(
        (await signIn(env.app.http, 'nobody@example.com', 'x', '10.0.0.1')).body.error,
        'Email or password is incorrect.',
      );
      await signIn(env.app.http, op.email, 'not-it', '10.0.0.1');
      await signIn(env.app.http, op.email, 'not-it', '10.0.0.1');
      const locked = await signIn(env.app.http, op.email, op.password, '10.0.0.1');
      assert.equal(locked.status, 429);
      assert.equal(locked.body.error, 'Too many sign-in attempts; retry later.');
      assert.ok(Number(locked.headers['retry-after']) > 0);
      clock.advance(16 * 60_000); // the window (15 minutes) passes
      assert.equal((await signIn(env.app.http, op.email, op.password, '10.0.0.1')).status, 200);
    },
  );

  it('a session idle longer than SESSION_IDLE_MINUTES is 401; one in use stays alive', async () => {
    const op = await makeOperator(env.app, [{ workspaceId: env.ws.workspaceId, role: 'viewer' }]);
    const busy = (await signIn(env.app.http, op.email, op.password)).session!;
    const idle = (await signIn(env.app.http, op.email, op.password)).session!;
    for (let i = 0; i < 3; i++) {
      clock.advance(20 * 60_000);
      assert.equal((await admin(env.app.http, busy, 'GET', '/api/admin/session')).status, 200);
    }
    const expired = await admin(env.app.http, idle, 'GET', leadsUrl());
    assert.deepEqual([expired.status, expired.body], [401, { ok: false, error: 'Sign in required.' }]);
  });

  it('no cookie, or a made-up one, is 401', async () => {
    assert.equal((await admin(env.app.http, null, 'GET', leadsUrl())).status, 401);
    assert.equal(
      (await admin(env.app.http, { cookie: 'li_session=forged', csrf: 'x' }, 'GET', leadsUrl())).status,
      401,
    );
  });

  it('sign-out ends the session; sign-out everywhere ends all of them', async () => {
    const op = await makeOperator(env.app, [{ workspaceId: env.ws.workspaceId, role: 'viewer' }]);
    const a = (await signIn(env.app.http, op.email, op.password)).session!;
    const b = (await signIn(env.app.http, op.email, op.password)).session!;
    const c = (await signIn(env.app.http, op.email, op.password)).session!;
    assert.equal(
      (await admin(env.app.http, a, 'DELETE', '/api/admin/session', undefined, { csrf: false })).status,
      403,
    );
    const out = await admin(env.app.http, a, 'DELETE', '/api/admin/session');
    assert.equal(out.status, 200);
    assert.match(String(out.headers['set-cookie']), /^li_session=; .*Max-Age=0/);
    assert.equal((await admin(env.app.http, a, 'GET', '/api/admin/session')).status, 401);
    assert.equal((await admin(env.app.http, b, 'GET', '/api/admin/session')).status, 200);
    assert.equal((await admin(env.app.http, b, 'DELETE', '/api/admin/session?everywhere=true')).status, 200);
    assert.equal((await admin(env.app.http, c, 'GET', '/api/admin/session')).status, 401);
  });

  it('user reset-password ends every session of the user', async () => {
    const op = await makeOperator(env.app, []);
    const s = (await signIn(env.app.http, op.email, op.password)).session!;
    const fresh = await env.app.operators.resetPassword(op.email);
    assert.ok(fresh && fresh !== op.password);
    assert.equal((await admin(env.app.http, s, 'GET', '/api/admin/session')).status, 401);
    assert.equal((await signIn(env.app.http, op.email, op.password)).status, 401);
    assert.equal((await signIn(env.app.http, op.email, fresh)).status, 200);
  });
});

describe('the inbox', () => {
  before(signInEveryRole);

  it(
    'newest first, counts per status, status filter, keyset pages, search by ' +
      'phone in any format, e-mail or name; sandbox only with the switch',
    async () => {
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        ids.push(
          await newLead({ name: `Inbox Person ${i}`, email: `inbox${i}@example.com`, phone: `+49 30 1234 56${i}0` }),
        );
        clock.advance(1000);
      }
      await env.app.db.pool.query(
        `UPDATE leads l SET created_at = '2026-01-01'::timestamptz + make_interval(mins => x.n::int)
        FROM unnest($1::uuid[]) WITH ORDINALITY x(id, n) WHERE l.id = x.id`,
        [ids],
      );
      const sandboxLead = await newLead({ name: 'Sandy Box' }, env.ws.sandboxKey);
      const first = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?limit=2&q=Inbox`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(
        first.body.leads.map((l: { id: string }) => l.id),
        [ids[4], ids[3]],
      );
      assert.ok(first.body.nextCursor);
      const second = await admin(
        env.app.http,
        sessions.viewer,
        'GET',
        `${leadsUrl()}?limit=2&q=Inbox&cursor=${first.body.nextCursor}`,
      );
      assert.deepEqual(
        second.body.leads.map((l: { id: string }) => l.id),
        [ids[2], ids[1]],
      );
      const third = await admin(
        env.app.http,
        sessions.viewer,
        'GET',
        `${leadsUrl()}?limit=2&q=Inbox&cursor=${second.body.nextCursor}`,
      );
      assert.deepEqual([third.body.leads.map((l: { id: string }) => l.id), third.body.nextCursor], [[ids[0]], null]);

      const byPhone = await admin(
        env.app.http,
        sessions.viewer,
        'GET',
        `${leadsUrl()}?q=${encodeURIComponent('+49 (30) 1234-5620')}`,
      );
      assert.deepEqual(
        byPhone.body.leads.map((l: { id: string }) => l.id),
        [ids[2]],
      );
      const byEmail = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?q=INBOX3@example.com`);
      assert.deepEqual(
        byEmail.body.leads.map((l: { id: string }) => l.id),
        [ids[3]],
      );
      const none = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?q=${encodeURIComponent('100%_')}`);
      assert.deepEqual(none.body.leads, []);

      const live = await admin(env.app.http, sessions.viewer, 'GET', leadsUrl());
      assert.ok(!live.body.leads.some((l: { id: string }) => l.id === sandboxLead));
      const withSandbox = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?sandbox=true`);
      const marked = withSandbox.body.leads.find((l: { id: string }) => l.id === sandboxLead);
      assert.equal(marked.livemode, false);
      assert.equal(withSandbox.body.counts.all, live.body.counts.all + 1);

      await admin(env.app.http, sessions.agent, 'POST', `${leadsUrl()}/${ids[1]}/take-over`);
      const needsHuman = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?status=needs_human`);
      assert.deepEqual(
        needsHuman.body.leads.map((l: { id: string }) => l.id),
        [ids[1]],
      );
      assert.equal(needsHuman.body.counts.needs_human, 1);
      assert.equal(needsHuman.body.counts.new, live.body.counts.new - 1);
      assert.equal(needsHuman.body.countCap, 10_000);
    },
  );

  it(
    'by last activity: most recently active first, keyset pages ' + 'in that order; a name found by any part of it',
    async () => {
      const ids: string[] = [];
      for (let i = 0; i < 4; i++) ids.push(await newLead({ name: `Activity Sorted ${i}` }));
      // Created 0..3, last active in another order: 2, 0, 3, 1 (most recent first).
      await env.app.db.pool.query(
        `UPDATE leads l SET created_at = '2026-02-01'::timestamptz + make_interval(mins => x.n::int),
              updated_at = '2026-03-01'::timestamptz + make_interval(mins => x.a::int)
         FROM unnest($1::uuid[], $2::int[]) WITH ORDINALITY x(id, a, n) WHERE l.id = x.id`,
        [ids, [3, 1, 4, 2]],
      );
      const url = `${leadsUrl()}?limit=3&q=${encodeURIComponent('tivity Sort')}`;
      const first = await admin(env.app.http, sessions.viewer, 'GET', `${url}&sort=activity`);
      assert.equal(first.status, 200, JSON.stringify(first.body));
      assert.deepEqual(
        first.body.leads.map((l: { id: string }) => l.id),
        [ids[2], ids[0], ids[3]],
      );
      assert.deepEqual(
        first.body.leads.map((l: { lastActivityAt: string }) => l.lastActivityAt),
        ['2026-03-01T00:04:00.000Z', '2026-03-01T00:03:00.000Z', '2026-03-01T00:02:00.000Z'],
      );
      const second = await admin(
        env.app.http,
        sessions.viewer,
        'GET',
        `${url}&sort=activity&cursor=${first.body.nextCursor}`,
      );
      assert.deepEqual([second.body.leads.map((l: { id: string }) => l.id), second.body.nextCursor], [[ids[1]], null]);
      const newest = await admin(env.app.http, sessions.viewer, 'GET', url);
      assert.deepEqual(
        newest.body.leads.map((l: { id: string }) => l.id),
        [ids[3], ids[2], ids[1]],
      );
      const bad = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?sort=oldest`);
      assert.deepEqual([bad.status, bad.body.issues.map((i: { path: string[] }) => i.path[0])], [400, ['sort']]);
    },
  );

  it(
    'leads sharing one timestamp to the microsecond (one batch ' +
      'insert) are all paged, none skipped at a page boundary',
    async () => {
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) ids.push(await newLead({ name: `Same Instant ${i}` }));
      await env.app.db.pool.query(
        `UPDATE leads SET created_at = '2026-04-01T00:00:00.123456Z',
        updated_at = '2026-04-01T00:00:00.654321Z' WHERE id = ANY($1)`,
        [ids],
      );
      const sorted = [...ids].sort().reverse();
      for (const sort of ['newest', 'activity']) {
        const url = `${leadsUrl()}?limit=2&sort=${sort}&q=${encodeURIComponent('Same Instant')}`;
        const first = await admin(env.app.http, sessions.viewer, 'GET', url);
        const second = await admin(env.app.http, sessions.viewer, 'GET', `${url}&cursor=${first.body.nextCursor}`);
        assert.deepEqual(
          [...first.body.leads, ...second.body.leads].map((l: { id: string }) => l.id),
          sorted,
          sort,
        );
      }
    },
  );

  it('a bad query is 400 with the issues; a workspace the operator is not a member of is 404', async () => {
    const bad = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}?status=nonsense&limit=1000`);
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.body.issues.map((i: { path: string[] }) => i.path[0]).sort(), ['limit', 'status']);
    const foreign = await admin(env.app.http, sessions.owner, 'GET', `/api/admin/workspaces/${env.other.slug}/leads`);
    assert.deepEqual([foreign.status, foreign.body], [404, { ok: false, error: 'Workspace not found.' }]);
  });
});

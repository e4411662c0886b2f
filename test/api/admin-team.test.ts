import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, it } from 'node:test';
import { TeamService } from '../../src/operators/team-service.ts';
import type { AppError } from '../../src/shared/errors.ts';
import { makeOperator, signIn } from '../helpers/admin.ts';
import { adminRolesSetup } from '../helpers/admin-roles-setup.ts';

// The Team admin API (docs/DASHBOARD.md, "Providers, API keys and team"): invitations, roles and
// removals, a workspace always keeps an owner, and no password leaves the service. Providers and
// API keys are in test/api/admin-providers-and-keys.test.ts.

const setup = adminRolesSetup();
const { sessions, ops, answers, call } = setup;

describe('team', () => {
  const base = () => `/api/admin/workspaces/${setup.ws.slug}/team`;
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
    assert.equal((await call(setup.outsider, 'GET', base())).status, 404);
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
    const { rows } = await setup.app.db.pool.query('SELECT token_hash FROM workspace_invites');
    assert.ok(rows.every((r) => !r.token_hash.toString('utf8').includes(token)));
    assert.ok(!JSON.stringify((await call(sessions.owner, 'GET', base())).body).includes(token));
    const info = await call(null, 'POST', '/api/admin/invites/lookup', { token });
    assert.deepEqual(
      [info.body.email, info.body.role, info.body.workspace.slug],
      ['new.person@example.com', 'agent', setup.ws.slug],
    );
    const short = await call(null, 'POST', `/api/admin/workspaces/${setup.ws.slug}/invites/accept`, {
      token,
      name: 'New Person',
      password: 'short',
    });
    assert.equal(short.status, 400);
    const wrongSlug = await call(null, 'POST', `/api/admin/workspaces/${setup.other.slug}/invites/accept`, {
      token,
      name: 'New Person',
      password: 'a-long-password-1',
    });
    assert.equal(wrongSlug.status, 404);
    const res = await setup.app.http.inject({
      method: 'POST',
      url: `/api/admin/workspaces/${setup.ws.slug}/invites/accept`,
      payload: { token, name: 'New Person', password: 'a-long-password-1' },
    });
    assert.equal(res.statusCode, 200, res.body);
    const cookie = String(res.headers['set-cookie']).split(';')[0]!;
    const me = await setup.app.http.inject({ method: 'GET', url: '/api/admin/session', headers: { cookie } });
    assert.equal(me.json().workspaces.find((w: { slug: string }) => w.slug === setup.ws.slug).role, 'agent');
    assert.equal(
      (
        await call(null, 'POST', `/api/admin/workspaces/${setup.ws.slug}/invites/accept`, {
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

  it(
    'an existing account signs in and accepts; another account ' + 'cannot use the link; an expired link is refused',
    async () => {
      const existing = await makeOperator(setup.app, [{ workspaceId: setup.other.workspaceId, role: 'viewer' }]);
      const existingSession = (await signIn(setup.app.http, existing.email, existing.password)).session!;
      const invited = await call(sessions.owner, 'POST', `${base()}/invites`, { email: existing.email, role: 'admin' });
      const token = tokenOf(invited.body.link);
      assert.equal(
        (await call(null, 'POST', '/api/admin/invites/lookup', { token })).body.accountExists,
        undefined,
        'not disclosed',
      );
      const asNew = await call(null, 'POST', `/api/admin/workspaces/${setup.ws.slug}/invites/accept`, {
        token,
        name: 'X',
        password: 'a-long-password-2',
      });
      assert.equal(asNew.status, 409);
      assert.equal(
        (await call(setup.outsider, 'POST', `/api/admin/workspaces/${setup.ws.slug}/invites/accept`, { token })).status,
        403,
      );
      assert.equal(
        (
          await call(
            existingSession,
            'POST',
            `/api/admin/workspaces/${setup.ws.slug}/invites/accept`,
            { token },
            { csrf: false },
          )
        ).status,
        403,
      );
      const ok = await call(existingSession, 'POST', `/api/admin/workspaces/${setup.ws.slug}/invites/accept`, {
        token,
      });
      assert.equal(ok.status, 200, JSON.stringify(ok.body));
      const me = await call(existingSession, 'GET', '/api/admin/session');
      assert.equal(me.body.workspaces.find((w: { slug: string }) => w.slug === setup.ws.slug).role, 'admin');

      const late = await call(sessions.owner, 'POST', `${base()}/invites`, {
        email: 'late@example.com',
        role: 'viewer',
      });
      await setup.app.db.pool.query(
        `UPDATE workspace_invites SET expires_at = now() - interval '1 second' WHERE id = $1`,
        [late.body.invite.id],
      );
      assert.equal(
        (await call(null, 'POST', '/api/admin/invites/lookup', { token: tokenOf(late.body.link) })).status,
        404,
      );
      assert.ok(
        !(await call(sessions.owner, 'GET', base())).body.invites.some(
          (i: { id: string }) => i.id === late.body.invite.id,
        ),
      );
    },
  );

  it(
    'changes roles and removes members; the last owner can be ' + 'neither demoted nor removed, also in a race',
    async () => {
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
        (await call(sessions.owner, 'PATCH', `${base()}/members/${id(ops.viewer.email)}`, { role: 'superuser' }))
          .status,
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
      const { rows } = await setup.app.db.pool.query(
        `SELECT count(*)::int AS n FROM memberships WHERE workspace_id = $1 AND role = 'owner'`,
        [setup.ws.workspaceId],
      );
      assert.equal(rows[0].n, 1);
      const winner = a.status === 200 ? sessions.owner : adminAsOwner;
      assert.equal((await call(winner, 'DELETE', `${base()}/members/${id(ops.viewer.email)}`)).status, 200);
      assert.equal((await call(sessions.viewer, 'GET', `/api/admin/workspaces/${setup.ws.slug}/leads`)).status, 404);
    },
  );

  it('an owner demoted after the session check is refused under the lock (the check is repeated there)', async () => {
    const team = new TeamService({
      pool: setup.app.db.pool,
      clock: () => new Date(),
      throttle: { windowMs: 15 * 60_000, maxPerIp: 50 },
    });
    // Read the members from the database: which session is still owner depends on who won the
    // race in the test before.
    const members = async () =>
      (
        await setup.app.db.pool.query(
          `SELECT operator_id AS id, role FROM memberships WHERE workspace_id = $1 ORDER BY operator_id`,
          [setup.ws.workspaceId],
        )
      ).rows as Array<{ id: string; role: string }>;
    const before = await members();
    const nonOwner = before.find((m) => m.role !== 'owner')!;
    const target = before.find((m) => m.id !== nonOwner.id)!;
    assert.ok(nonOwner && target);
    await assert.rejects(
      team.changeRole(setup.ws.workspaceId, nonOwner.id, target.id, 'viewer'),
      (e: AppError) => e.code === 'forbidden',
    );
    await assert.rejects(
      team.remove(setup.ws.workspaceId, nonOwner.id, target.id),
      (e: AppError) => e.code === 'forbidden',
    );
    assert.deepEqual(await members(), before, 'nothing changed');
  });

  it('writes the audit log of team changes (never a value) and no answer ever held a password', async () => {
    const { rows } = await setup.app.db.pool.query(`SELECT DISTINCT type FROM audit_events WHERE workspace_id = $1`, [
      setup.ws.workspaceId,
    ]);
    const types = rows.map((r) => r.type);
    for (const t of ['member.invited', 'member.role_changed', 'member.removed', 'invite.accepted']) {
      assert.ok(types.includes(t), `${t} in ${types.join(', ')}`);
    }
    const audit = JSON.stringify((await setup.app.db.pool.query('SELECT * FROM audit_events')).rows);
    const everything = [...answers, audit, ...setup.app.logs].join('\n');
    const passwords = [...Object.values(ops).map((o) => o.password), 'a-long-password-1', 'a-long-password-2'];
    for (const password of passwords) assert.ok(!everything.includes(password), `${password} leaked`);
  });
});

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import { loadConfig, ConfigError } from '../../src/config/config.ts';
import { hashPassword, scryptParams, verifyPassword } from '../../src/operators/password.ts';
import { TeamService } from '../../src/operators/team-service.ts';
import type { AppError } from '../../src/shared/errors.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The dashboard's sign-in and invitations against someone who tries: concurrent guesses,
// lock-out from elsewhere, a spoofed X-Forwarded-For, invitations probing for accounts or costing
// hashes, weak stored hashes. Sessions and live streams: operator-sessions.test.ts.

let app: TestApp;
const clock = new TestClock();
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  ({ app } = await startListeningApp({
    clock,
    env: {
      SIGN_IN_MAX_FAILURES_PER_IP: '12',
      PASSWORD_SCRYPT_LOG2_N: '15',
      TRUST_PROXY: '1',
    },
  }));
  ws = await app.createWorkspace('whatsapp');
});
after(() => app.close());

const failures = async (subject: string) => {
  const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM sign_in_failures WHERE subject = $1', [
    subject,
  ]);
  return rows[0].n as number;
};
/** Counts scrypt runs (password checks and hashes) while `fn` runs, and the most at once. */
async function countingScrypt<T>(fn: () => Promise<T>): Promise<{ result: T; calls: number; most: number }> {
  const original = crypto.scrypt;
  let calls = 0;
  let running = 0;
  let most = 0;
  (crypto as { scrypt: unknown }).scrypt = (...args: unknown[]) => {
    calls++;
    most = Math.max(most, ++running);
    const done = args.pop() as (err: Error | null, key: Buffer) => void;
    (original as (...a: unknown[]) => void)(...args, (err: Error | null, key: Buffer) => {
      running--;
      done(err, key);
    });
  };
  try {
    return { result: await fn(), calls, most };
  } finally {
    (crypto as { scrypt: unknown }).scrypt = original;
  }
}
const status = async (email: string, password: string, ip: string) =>
  (await signIn(app.http, email, password, ip)).status;

describe('sign-in throttling', () => {
  it('40 concurrent wrong passwords for one account from one address: only the limit (5) are evaluated', async () => {
    const op = await makeOperator(app, []);
    const guess = () => status(op.email, 'wrong-password', '192.0.2.10');
    const { result: statuses, calls } = await countingScrypt(() => Promise.all(Array.from({ length: 40 }, guess)));
    assert.equal(calls, 5, 'passwords checked');
    assert.equal(statuses.filter((s) => s === 401).length, 5, JSON.stringify(statuses));
    assert.equal(statuses.filter((s) => s === 429).length, 35);
    assert.equal(await failures(`account:${op.email}|192.0.2.10`), 5);
  });

  it('an attacker elsewhere does not lock the operator out: the owner signs in from their own address', async () => {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
    for (let i = 0; i < 8; i++) await signIn(app.http, op.email, `guess-${i}`, '198.51.100.66');
    assert.equal(await status(op.email, op.password, '198.51.100.66'), 429, 'the attacking address is throttled');
    const owner = await signIn(app.http, op.email, op.password, '203.0.113.9');
    assert.equal(owner.status, 200);
    // A success forgives that address's failures for the account, and takes its own attempt back.
    assert.equal(await failures(`account:${op.email}|203.0.113.9`), 0);
    assert.equal(await failures('ip:203.0.113.9'), 0);
  });

  it('one address guessing across accounts is throttled per address; IPv6 cannot rotate within its /64', async () => {
    const victims = await Promise.all(Array.from({ length: 3 }, () => makeOperator(app, [])));
    const from = (i: number) => `2001:db8:7:9::${(i + 1).toString(16)}`;
    for (let i = 0; i < 12; i++) assert.equal(await status(`nobody-${i}@example.com`, 'x', from(i)), 401);
    for (const [i, v] of victims.entries()) assert.equal(await status(v.email, v.password, from(20 + i)), 429);
    assert.equal(await status(victims[0]!.email, victims[0]!.password, '2001:db8:7:a::1'), 200, 'another /64');
  });
});

describe('password hashes', () => {
  it('new hashes use scrypt N=2^17, r=8, p=1 by default (with the memory scrypt needs), and verify', async () => {
    assert.equal(loadConfig({}).PASSWORD_SCRYPT_LOG2_N, 17);
    const hash = await hashPassword('correct horse battery');
    assert.match(hash, /^scrypt\$131072\$8\$1\$/);
    assert.equal(await verifyPassword('correct horse battery', hash), true);
    assert.equal(await verifyPassword('wrong', hash), false);
  });

  it('a burst of sign-ins runs at most two hashes at once (memory and the thread pool stay available)', async () => {
    const ops = await Promise.all(Array.from({ length: 6 }, () => makeOperator(app, [])));
    const { result, most, calls } = await countingScrypt(() =>
      Promise.all(ops.map((op, i) => status(op.email, op.password, `192.0.2.${100 + i}`))),
    );
    assert.deepEqual(result, Array(6).fill(200));
    assert.equal(calls, 6);
    assert.equal(most, 2);
  });

  it('an older, cheaper hash still signs in and is redone at the configured cost', async () => {
    const op = await makeOperator(app, []);
    const old = await hashPassword(op.password, scryptParams(14));
    await app.db.pool.query('UPDATE operators SET password_hash = $2 WHERE email = $1', [op.email, old]);
    assert.equal((await signIn(app.http, op.email, op.password)).status, 200);
    const { rows } = await app.db.pool.query('SELECT password_hash FROM operators WHERE email = $1', [op.email]);
    assert.match(rows[0].password_hash, /^scrypt\$32768\$8\$1\$/);
    assert.equal((await signIn(app.http, op.email, op.password)).status, 200, 'the new hash verifies');
  });
});

describe('invitations', () => {
  const call = (s: AdminSession | null, method: 'POST' | 'GET', url: string, body?: unknown) =>
    admin(app.http, s, method, url, body);
  const acceptUrl = () => `/api/admin/workspaces/${ws.slug}/invites/accept`;

  it('the lookup does not tell whether the address has an account; a new-account accept leaves it alone', async () => {
    const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
    const ownerSession = (await signIn(app.http, owner.email, owner.password)).session!;
    const existing = await makeOperator(app, []);
    const invitesUrl = `/api/admin/workspaces/${ws.slug}/team/invites`;
    const invited = await call(ownerSession, 'POST', invitesUrl, { email: existing.email, role: 'admin' });
    const token = String(invited.body.link).split('#')[1]!;
    const info = await call(null, 'POST', '/api/admin/invites/lookup', { token });
    assert.equal(info.status, 200);
    assert.deepEqual(Object.keys(info.body).sort(), ['email', 'expiresAt', 'ok', 'role', 'workspace']);

    const taken = await call(null, 'POST', acceptUrl(), { token, name: 'Mallory', password: 'mallory-chose-this' });
    assert.equal(taken.status, 409);
    assert.equal(await status(existing.email, 'mallory-chose-this', '127.0.0.1'), 401, 'the password was not replaced');
    const mine = await signIn(app.http, existing.email, existing.password);
    assert.equal(mine.status, 200);
    assert.ok(!mine.body.workspaces.some((w: { slug: string }) => w.slug === ws.slug), 'no membership was attached');
    assert.equal((await call(mine.session, 'POST', acceptUrl(), { token })).status, 200);
  });

  const madeUp = () => crypto.randomBytes(32).toString('base64url');
  /** A new-account acceptance from `ip`, as the invitee's page sends it without a session. */
  const acceptAsNew = (token: string, ip: string, slug = ws.slug) =>
    app.http.inject({
      method: 'POST',
      url: `/api/admin/workspaces/${slug}/invites/accept`,
      payload: { token, name: 'x', password: 'aaaaaaaaaaaa' },
      remoteAddress: ip,
    });
  const inviteAs = async (owner: AdminSession, email: string) => {
    const r = await call(owner, 'POST', `/api/admin/workspaces/${ws.slug}/team/invites`, { email, role: 'agent' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    return String(r.body.link).split('#')[1]!;
  };
  const ownerSession = async () => {
    const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
    return (await signIn(app.http, owner.email, owner.password, '192.0.2.250')).session!;
  };

  it('made-up tokens cost no password hash, and past the address limit accepts answer 429 like sign-in', async () => {
    const ip = '192.0.2.201';
    const { result, calls } = await countingScrypt(async () => {
      const answers = [];
      for (let i = 0; i < 60; i++) answers.push(await acceptAsNew(madeUp(), ip));
      return answers;
    });
    assert.equal(calls, 0, 'hashes run');
    const statuses = result.map((r) => r.statusCode);
    const limit = statuses.indexOf(429);
    assert.equal(limit, 12, `SIGN_IN_MAX_FAILURES_PER_IP of this app: ${JSON.stringify(statuses)}`);
    assert.deepEqual(statuses, [...Array(limit).fill(404), ...Array(60 - limit).fill(429)]);
    assert.equal(
      result[0]!.json().error,
      'Invitation not found, already used or expired: ask an owner for a new link.',
    );
    assert.equal(result[limit]!.json().error, 'Too many sign-in attempts; retry later.');
    assert.ok(Number(result[limit]!.headers['retry-after']) >= 1, 'Retry-After');
    assert.equal(await failures(`ip:${ip}`), limit, "counted with the address's failed sign-ins");
    // One budget per address: its sign-ins are throttled too, and so is a real invitation from it.
    const op = await makeOperator(app, []);
    assert.equal(await status(op.email, op.password, ip), 429);
    const token = await inviteAs(await ownerSession(), `throttled-${process.pid}@example.com`);
    assert.equal((await acceptAsNew(token, ip)).statusCode, 429);
    assert.equal((await acceptAsNew(token, '192.0.2.202')).statusCode, 200, 'from another address it works');
  });

  it('a usable invitation is checked before hashing: wrong workspace, existing account, used link: none', async () => {
    const owner = await ownerSession();
    const other = await app.createWorkspace('whatsapp');
    const email = `hash-once-${process.pid}@example.com`;
    const token = await inviteAs(owner, email);
    const existing = await makeOperator(app, []);
    const taken = await inviteAs(owner, existing.email);
    const ip = '192.0.2.203';
    const refused = await countingScrypt(async () => [
      (await acceptAsNew(token, ip, other.slug)).statusCode,
      (await acceptAsNew(taken, ip)).statusCode,
    ]);
    assert.deepEqual(refused.result, [404, 409]);
    assert.equal(refused.calls, 0, 'hashes run');

    const accepted = await countingScrypt(() => acceptAsNew(token, ip));
    assert.equal(accepted.result.statusCode, 200, accepted.result.body);
    assert.ok(accepted.result.headers['set-cookie'], 'signed in');
    assert.equal(accepted.calls, 2, 'the new hash, then the sign-in checking it');
    assert.equal(await failures(`ip:${ip}`), 2, 'the acceptance took its attempt back; the refusals stay');
    const again = await countingScrypt(() => acceptAsNew(token, ip));
    assert.equal(again.result.statusCode, 404);
    assert.equal(again.calls, 0);
    const me = await signIn(app.http, email, 'aaaaaaaaaaaa');
    assert.equal(me.body.workspaces.find((w: { slug: string }) => w.slug === ws.slug).role, 'agent');
  });

  it('checked again under the lock: the link used or the account made while hashing changes nothing', async () => {
    const owner = await ownerSession();
    const emailA = `race-a-${process.pid}@example.com`;
    const emailB = `race-b-${process.pid}@example.com`;
    const [tokenA, tokenB] = [await inviteAs(owner, emailA), await inviteAs(owner, emailB)];
    let during: () => Promise<unknown> = async () => {};
    const team = new TeamService({
      pool: app.db.pool,
      clock: clock.read,
      throttle: { windowMs: 15 * 60_000, maxPerIp: 50 },
      hashPassword: async (password) => {
        const now = during;
        during = async () => {};
        await now();
        return hashPassword(password, scryptParams(10));
      },
    });
    const who = { name: 'Racer', password: 'a-long-password', ip: '192.0.2.204' };
    // Another tab uses the link while this one hashes.
    during = () => team.accept(tokenA, ws.slug, { ...who, ip: '192.0.2.205' });
    await assert.rejects(team.accept(tokenA, ws.slug, who), (e: AppError) => e.code === 'invite_not_found');
    // The address gets its account (`user add`) while this one hashes: not replaced, link unused.
    during = () => app.operators.create(emailB);
    await assert.rejects(team.accept(tokenB, ws.slug, who), (e: AppError) => e.code === 'invite_account_exists');
    assert.equal((await call(null, 'POST', '/api/admin/invites/lookup', { token: tokenB })).status, 200);
    const { rows } = await app.db.pool.query(
      `SELECT o.email, o.name, m.role FROM operators o LEFT JOIN memberships m ON m.operator_id = o.id
        WHERE o.email = ANY($1) ORDER BY o.email`,
      [[emailA, emailB]],
    );
    assert.deepEqual(rows, [
      { email: emailA, name: 'Racer', role: 'agent' },
      { email: emailB, name: emailB.split('@')[0], role: null },
    ]);
  });

  it('the per-address limit is the throttle policy given; the 429 says when to retry', async () => {
    const team = new TeamService({ pool: app.db.pool, clock: clock.read, throttle: { windowMs: 60_000, maxPerIp: 3 } });
    const who = { name: 'x', password: 'aaaaaaaaaaaa', ip: '2001:db8:77:1::1' };
    for (let i = 0; i < 3; i++) {
      await assert.rejects(team.accept(madeUp(), ws.slug, who), (e: AppError) => e.code === 'invite_not_found');
    }
    await assert.rejects(
      team.accept(madeUp(), ws.slug, { ...who, ip: '2001:db8:77:1::2' }),
      (e: AppError) => e.code === 'sign_in_throttled' && e.details.retryAfterSeconds === 60,
      'the same /64',
    );
    clock.advance(60_000);
    await assert.rejects(team.accept(madeUp(), ws.slug, who), (e: AppError) => e.code === 'invite_not_found');
  });
});

describe('client address behind a proxy', () => {
  it('TRUST_PROXY is a hop count or addresses; `true` is refused with what to give instead', () => {
    assert.equal(loadConfig({}).TRUST_PROXY, false);
    assert.equal(loadConfig({ TRUST_PROXY: 'false' }).TRUST_PROXY, false);
    assert.equal(loadConfig({ TRUST_PROXY: '2' }).TRUST_PROXY, 2);
    const ranges = loadConfig({ TRUST_PROXY: '10.0.0.0/8, 127.0.0.1,::1' }).TRUST_PROXY;
    assert.deepEqual(ranges, ['10.0.0.0/8', '127.0.0.1', '::1']);
    for (const bad of ['true', 'yes', 'proxy.example.com', '10.0.0.0/33']) {
      const named = (e: Error) => e instanceof ConfigError && /TRUST_PROXY/.test(e.message);
      assert.throws(() => loadConfig({ TRUST_PROXY: bad }), named, bad);
    }
    assert.throws(() => loadConfig({ TRUST_PROXY: 'true' }), /hop|CIDR/);
  });

  it('with one proxy, the address it saw counts, not what the client put before it (consent, throttle)', async () => {
    const headers = { 'content-type': 'application/json', 'x-forwarded-for': '6.6.6.6, 203.0.113.7' };
    const r = await postLead(app.http, ws.apiKey, validLead(), headers);
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const { rows } = await app.db.pool.query('SELECT consent_ip FROM leads WHERE id = $1', [r.body.leadId]);
    assert.equal(rows[0].consent_ip, '203.0.113.7');

    const op = await makeOperator(app, []);
    const attempt = (i: number) =>
      app.http.inject({
        method: 'POST',
        url: '/api/admin/session',
        payload: { email: op.email, password: `guess-${i}` },
        headers: { 'x-forwarded-for': `6.6.6.${i}, 203.0.113.8` },
      });
    for (let i = 0; i < 5; i++) assert.equal((await attempt(i)).statusCode, 401);
    assert.equal((await attempt(5)).statusCode, 429, 'rotating the spoofed entry does not reset the count');
  });

  it('with trusted ranges, entries are believed only as far as a trusted proxy vouches', async () => {
    const other = await startTestApp({ env: { TRUST_PROXY: '127.0.0.0/8' } });
    try {
      const w = await other.createWorkspace('whatsapp');
      const headers = { 'content-type': 'application/json', 'x-forwarded-for': '6.6.6.6, 203.0.113.5' };
      const r = await postLead(other.http, w.apiKey, validLead(), headers);
      const { rows } = await other.db.pool.query('SELECT consent_ip FROM leads WHERE id = $1', [r.body.leadId]);
      assert.equal(rows[0].consent_ip, '203.0.113.5');
    } finally {
      await other.close();
    }
  });
});

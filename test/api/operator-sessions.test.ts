import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { startListeningApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The dashboard's sessions against someone who keeps one: live-update streams that outlive their
// session or membership, and a session in constant use past its absolute lifetime.

let app: TestApp;
let base: string;
const clock = new TestClock();
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  ({ app, base } = await startListeningApp({ clock, env: { LIVE_HEARTBEAT_SECONDS: '1' } }));
  ws = await app.createWorkspace('whatsapp');
});
after(() => app.close());

/** An SSE stream of `ws` for the session; `next()` resolves with the next event, or null when it ended. */
async function openStream(session: AdminSession, slug = ws.slug) {
  const controller = new AbortController();
  // A bound, not a measurement: a stream that never ends fails the test instead of hanging it.
  const signal = AbortSignal.any([controller.signal, AbortSignal.timeout(20_000)]);
  const url = `${base}/api/admin/workspaces/${slug}/events`;
  const res = await fetch(url, { headers: { cookie: session.cookie }, signal });
  const close = () => controller.abort();
  if (res.status !== 200) return { status: res.status, body: await res.json(), close, next: async () => null };
  const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
  let buffered = '';
  const next = async (): Promise<{ event: string; data: any } | null> => {
    for (;;) {
      const end = buffered.indexOf('\n\n');
      if (end !== -1) {
        const block = buffered.slice(0, end);
        buffered = buffered.slice(end + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (event && data) return { event, data: JSON.parse(data) };
        continue;
      }
      const { value, done } = await reader.read();
      if (done) return null;
      buffered += value;
    }
  };
  return { status: 200, body: null, close, next };
}

/** Events until the stream ends (bounded, so a stream that never ends fails the test). */
async function untilEnd(stream: Awaited<ReturnType<typeof openStream>>): Promise<Array<{ event: string; data: any }>> {
  const seen: Array<{ event: string; data: any }> = [];
  for (let i = 0; i < 100; i++) {
    const e = await stream.next();
    if (!e) return seen;
    seen.push(e);
  }
  throw new Error(`the stream did not end: ${JSON.stringify(seen)}`);
}

describe('live-update streams', () => {
  it('end after "sign out everywhere"', async () => {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
    const watching = (await signIn(app.http, op.email, op.password)).session!;
    const elsewhere = (await signIn(app.http, op.email, op.password)).session!;
    const stream = await openStream(watching);
    assert.equal(stream.status, 200);
    assert.equal((await stream.next())?.event, 'ready');
    assert.equal((await admin(app.http, elsewhere, 'DELETE', '/api/admin/session?everywhere=true')).status, 200);
    const rest = await untilEnd(stream);
    assert.deepEqual(rest.at(-1), { event: 'end', data: { kind: 'end', reason: 'signed_out' } });
    assert.equal((await openStream(watching)).status, 401);
  });

  it('end after removal from the workspace', async () => {
    const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
    const ownerSession = (await signIn(app.http, owner.email, owner.password)).session!;
    const member = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }]);
    const memberSession = (await signIn(app.http, member.email, member.password)).session!;
    const stream = await openStream(memberSession);
    assert.equal((await stream.next())?.event, 'ready');
    const team = await admin(app.http, ownerSession, 'GET', `/api/admin/workspaces/${ws.slug}/team`);
    const id = team.body.members.find((m: { email: string }) => m.email === member.email).id;
    const memberUrl = `/api/admin/workspaces/${ws.slug}/team/members/${id}`;
    const removed = await admin(app.http, ownerSession, 'DELETE', memberUrl);
    assert.equal(removed.status, 200);
    const rest = await untilEnd(stream);
    assert.deepEqual(rest.at(-1), { event: 'end', data: { kind: 'end', reason: 'no_access' } });
    const stillSignedIn = await admin(app.http, memberSession, 'GET', '/api/admin/session');
    assert.equal(stillSignedIn.status, 200, 'the session itself goes on');
  });

  it('one session holds at most LIVE_STREAMS_PER_SESSION (10) streams; a closed one frees its place', async () => {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
    const session = (await signIn(app.http, op.email, op.password)).session!;
    const streams = [];
    for (let i = 0; i < 10; i++) streams.push(await openStream(session));
    try {
      assert.deepEqual(
        streams.map((s) => s.status),
        Array(10).fill(200),
      );
      const extra = await openStream(session);
      const error = 'Too many live-update streams for this session: close other dashboard tabs.';
      assert.deepEqual([extra.status, extra.body], [429, { ok: false, error }]);
      const other = (await signIn(app.http, op.email, op.password)).session!;
      const theirs = await openStream(other);
      assert.equal(theirs.status, 200, 'the cap is per session');
      theirs.close();
      streams.pop()!.close();
      // The server learns of the closed connection a moment later: bounded retries, no sleeps.
      let again = await openStream(session);
      for (let i = 0; i < 200 && again.status === 429; i++) {
        await new Promise((r) => setImmediate(r));
        again = await openStream(session);
      }
      assert.equal(again.status, 200);
      streams.push(again);
    } finally {
      for (const s of streams) s.close();
    }
  });
});

describe('session lifetime', () => {
  it('defaults: idle 30 minutes, absolute 12 hours', () => {
    const c = loadConfig({});
    assert.deepEqual([c.SESSION_IDLE_MINUTES, c.SESSION_MAX_HOURS], [30, 12]);
  });

  it('a session in constant use still ends SESSION_MAX_HOURS after sign-in', async () => {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
    const busy = (await signIn(app.http, op.email, op.password)).session!;
    for (let minutes = 0; minutes < 12 * 60 - 20; minutes += 20) {
      clock.advance(20 * 60_000);
      const r = await admin(app.http, busy, 'GET', '/api/admin/session');
      assert.equal(r.status, 200, `after ${minutes + 20} minutes`);
    }
    clock.advance(21 * 60_000); // 12 h and 1 minute after sign-in, 21 minutes after last use
    const expired = await admin(app.http, busy, 'GET', '/api/admin/session');
    assert.deepEqual([expired.status, expired.body], [401, { ok: false, error: 'Sign in required.' }]);
    const { rows } = await app.db.pool.query(
      'SELECT count(*)::int AS n FROM operator_sessions s JOIN operators o ON o.id = s.operator_id WHERE o.email = $1',
      [op.email],
    );
    assert.equal(rows[0].n, 0, 'the expired row is deleted');
  });
});

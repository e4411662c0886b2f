import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// A change that arrives while a live-update stream is being opened (its subscription registered,
// the LISTEN and lease writes under way): the stream still opens as an event stream whose first
// event is `ready` (src/admin/leads/live-routes.ts). Before, the change was written before the
// head, Node sent its own headers, and the stream never got its `ready` or its heartbeat.

let app: TestApp;
let base: string;
let session: AdminSession;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  ({ app, base } = await startListeningApp({ env: { LIVE_HEARTBEAT_SECONDS: '1' } }));
  ws = await app.createWorkspace('whatsapp');
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  session = (await signIn(app.http, op.email, op.password)).session!;
});
after(() => app.close());

it('a change during the subscription: the stream opens with its head, then `ready`', async () => {
  const subscribe = app.live.subscribe.bind(app.live);
  // The change is delivered to the new subscriber before subscribe() resolves, as a NOTIFY would
  // during its LISTEN and lease round trips.
  app.live.subscribe = async (workspaceId, fn) => {
    const unsubscribe = await subscribe(workspaceId, fn);
    fn({ kind: 'change', leadIds: ['00000000-0000-4000-8000-000000000000'] } as never);
    return unsubscribe;
  };
  const controller = new AbortController();
  try {
    const res = await fetch(`${base}/api/admin/workspaces/${ws.slug}/events`, {
      headers: { cookie: session.cookie },
      signal: AbortSignal.any([controller.signal, AbortSignal.timeout(10_000)]),
    });
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^text\/event-stream/);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = '';
    while (!/event: \w+/.test(text)) text += (await reader.read()).value ?? '';
    assert.equal(/event: (\w+)/.exec(text)?.[1], 'ready');
  } finally {
    controller.abort();
    app.live.subscribe = subscribe;
  }
  assert.equal((await admin(app.http, session, 'GET', '/api/admin/session')).status, 200);
});

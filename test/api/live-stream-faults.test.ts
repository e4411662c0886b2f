import assert from 'node:assert/strict';
import { after, before, it } from 'node:test';
import pg from 'pg';
import { makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The cockpit is never stale in silence (src/admin/leads/live-events.ts): a stream is told `ready`
// only once every later change will be heard, and is closed (the page says "Offline", reconnects
// and refetches) whenever changes may have gone unheard — the LISTEN connection lost, the lease that
// makes the triggers notify not written, not renewed, or lapsed.

let app: TestApp;
let base: string;
let session: AdminSession;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp');
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  session = (await signIn(app.http, op.email, op.password)).session!;
});
after(() => app.close());

interface Stream {
  status: number;
  retryAfter: string | null;
  /** The next event's name, or null once the stream has closed. */
  next(): Promise<string | null>;
  /** Reads events until one is a change of `kind` naming the lead. */
  change(kind: string, leadId: string): Promise<void>;
  close(): void;
}

async function openStream(): Promise<Stream> {
  const controller = new AbortController();
  const res = await fetch(`${base}/api/admin/workspaces/${ws.slug}/events`, {
    headers: { cookie: session.cookie },
    signal: AbortSignal.any([controller.signal, AbortSignal.timeout(20_000)]),
  });
  const reader = res.ok ? res.body!.pipeThrough(new TextDecoderStream()).getReader() : null;
  let buffered = '';
  const block = async (): Promise<string | null> => {
    for (;;) {
      const at = buffered.search(/\n\n/);
      if (at >= 0) {
        const text = buffered.slice(0, at);
        buffered = buffered.slice(at + 2);
        if (/^event: /m.test(text)) return text;
        continue;
      }
      const { value, done } = await reader!.read();
      if (done) return null;
      buffered += value;
    }
  };
  const stream: Stream = {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    next: async () => {
      const text = await block();
      return text === null ? null : /^event: (.+)$/m.exec(text)![1]!;
    },
    change: async (kind, leadId) => {
      for (let i = 0; i < 100; i++) {
        const text = await block();
        if (text === null) throw new Error('stream ended');
        const data = JSON.parse(/^data: (.+)$/m.exec(text)![1]!) as { kind: string; leadIds: string[] | null };
        if (data.kind === kind && data.leadIds?.includes(leadId)) return;
      }
      throw new Error(`no ${kind} change for the lead`);
    },
    close: () => controller.abort(),
  };
  if (!res.ok) await res.body?.cancel();
  return stream;
}

async function submitLead(): Promise<string> {
  const res = await app.http.inject({
    method: 'POST',
    url: '/api/public/leads',
    headers: { authorization: `Bearer ${ws.apiKey}` },
    payload: { name: 'Live Lead', phone: uniquePhone(), consent: true },
  });
  assert.equal(res.statusCode, 201, res.body);
  return res.json().leadId;
}

const leases = async () =>
  Number((await app.db.pool.query('SELECT count(*) FROM live_listeners WHERE until > now()')).rows[0].count);

async function noLeaseLeft(): Promise<void> {
  for (let i = 0; i < 500 && (await leases()) > 0; i++) await new Promise((r) => setImmediate(r));
  assert.equal(await leases(), 0);
}

/** Runs `fn` while the lease table cannot be written, as when the database refuses writes. */
async function leaseTableGone<T>(fn: () => Promise<T>): Promise<T> {
  await app.db.pool.query('ALTER TABLE live_listeners RENAME TO live_listeners_away');
  try {
    return await fn();
  } finally {
    await app.db.pool.query('ALTER TABLE live_listeners_away RENAME TO live_listeners');
  }
}

it('the lease cannot be written: 503 with Retry-After (the page retries), not a deaf `ready`', async () => {
  const refused = await leaseTableGone(() => openStream());
  assert.deepEqual([refused.status, refused.retryAfter], [503, '2']);
  const stream = await openStream();
  try {
    assert.equal(stream.status, 200);
    assert.equal(await stream.next(), 'ready');
    const leadId = await submitLead();
    await stream.change('lead.created', leadId);
  } finally {
    stream.close();
  }
});

it('the LISTEN connection is lost: the stream closes without `end`; the next one hears changes again', async () => {
  const stream = await openStream();
  assert.equal(await stream.next(), 'ready');
  await app.db.pool.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'leadintake-live'",
  );
  assert.equal(await stream.next(), null);
  const again = await openStream();
  try {
    assert.equal(await again.next(), 'ready');
    const leadId = await submitLead();
    await again.change('lead.created', leadId);
  } finally {
    again.close();
  }
});

it('a renewal that fails, or finds the lease lapsed (a crash empties its table), closes the streams', async () => {
  const first = await openStream();
  assert.equal(await first.next(), 'ready');
  await app.db.pool.query('DELETE FROM live_listeners');
  await app.live.simulateLeaseRenewal();
  assert.equal(await first.next(), null);

  const second = await openStream();
  assert.equal(await second.next(), 'ready');
  await leaseTableGone(() => app.live.simulateLeaseRenewal());
  assert.equal(await second.next(), null);
});

it('the first page waits for a lead change that ran before any lease, so its refetch sees it', async () => {
  await noLeaseLeft();
  const leadId = await submitLead();
  const writer = new pg.Client({ connectionString: app.db.url });
  await writer.connect();
  try {
    await writer.query('BEGIN');
    // Its trigger runs now, unwatched: this change will never be announced.
    await writer.query("UPDATE leads SET status = 'needs_human' WHERE id = $1", [leadId]);
    let subscribed = false;
    const subscription = app.live
      .subscribe(ws.workspaceId, () => {})
      .then((unsubscribe) => {
        subscribed = true;
        return unsubscribe;
      });
    for (let i = 0; i < 500 && (await leases()) === 0; i++) await new Promise((r) => setImmediate(r));
    assert.equal(await leases(), 1);
    await app.db.pool.query('SELECT 1');
    assert.equal(subscribed, false, 'told ready while a change it cannot see or hear was uncommitted');
    await writer.query('COMMIT');
    (await subscription)();
  } finally {
    await writer.end();
  }
});

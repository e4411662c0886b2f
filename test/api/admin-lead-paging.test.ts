import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { LONG, seedLongHistory } from '../helpers/long-lead.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The lead page of a long conversation (docs/DASHBOARD.md, "Lead page"): one small first answer
// without provider payloads, then keyset pages of the thread, the timeline and the provider
// traffic that reach the oldest row exactly once each — also while new rows arrive — scoped to
// the operator's workspace.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let other: Awaited<ReturnType<TestApp['createWorkspace']>>;
let viewer: AdminSession;
let outsider: AdminSession;
let leadId: string;
let otherLeadId: string;
const leadUrl = () => `/api/admin/workspaces/${ws.slug}/leads/${leadId}`;

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  other = await app.createWorkspace('whatsapp');
  const created = await postLead(app.http, ws.apiKey, validLead({ name: 'Lena Long' }));
  assert.equal(created.status, 201);
  leadId = created.body.leadId;
  otherLeadId = (await postLead(app.http, other.apiKey, validLead())).body.leadId;
  await seedLongHistory(app.db.pool, leadId, ws.workspaceId);
  const v = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  viewer = (await signIn(app.http, v.email, v.password)).session!;
  const o = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  outsider = (await signIn(app.http, o.email, o.password)).session!;
});
after(() => app?.close());

/** The ids of `table`'s rows of the lead, newest first by (time, id). */
async function newestFirst(table: string, time: string): Promise<number[]> {
  const { rows } = await app.db.pool.query(
    `SELECT id FROM ${table} WHERE lead_id = $1 ORDER BY ${time} DESC, id DESC`,
    [leadId],
  );
  return rows.map((r) => Number(r.id));
}

/** Follows `olderCursor` from `first` to the end; returns the ids newest first and the pages. */
type First = { items: Array<{ id: number }>; older: string | null };
async function chain(path: string, key: string, first: First, chronological = true) {
  const ids = (items: Array<{ id: number }>) => (chronological ? [...items].reverse() : items).map((i) => i.id);
  const seen = ids(first.items);
  let cursor = first.older;
  let pages = 1;
  while (cursor) {
    const r = await admin(app.http, viewer, 'GET', `${leadUrl()}/${path}?before=${encodeURIComponent(cursor)}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.ok(r.body[key].length > 0 && r.body[key].length <= 50);
    seen.push(...ids(r.body[key]));
    cursor = r.body.olderCursor;
    pages += 1;
  }
  return { seen, pages };
}

describe('a lead with over a thousand messages and events', () => {
  it('answers its page small, without provider payloads, with the newest 50 of each oldest first', async () => {
    const r = await app.http.inject({ method: 'GET', url: leadUrl(), headers: { cookie: viewer.cookie } });
    assert.equal(r.statusCode, 200);
    assert.ok(r.body.length < 200_000, `the lead page is ${r.body.length} bytes`);
    const body = r.json();
    assert.equal(body.integrationLog, undefined);
    assert.ok(!r.body.includes('xxxxxxxx'), 'no provider payload');
    assert.equal(body.messages.length, 50);
    assert.equal(body.timeline.length, 50);
    const ids = (items: Array<{ id: number }>) => items.map((i) => i.id);
    assert.deepEqual(ids(body.messages), (await newestFirst('whatsapp_messages', 'created_at')).slice(0, 50).reverse());
    assert.deepEqual(ids(body.timeline), (await newestFirst('lead_events', 'at')).slice(0, 50).reverse());
    assert.ok(body.messagesOlderCursor && body.timelineOlderCursor);
  });

  it('chains the thread and the timeline to the oldest item exactly once each, in (time, id) order', async () => {
    const page = (await admin(app.http, viewer, 'GET', leadUrl())).body;
    const messages = await chain('messages', 'messages', { items: page.messages, older: page.messagesOlderCursor });
    assert.deepEqual(messages.seen, await newestFirst('whatsapp_messages', 'created_at'));
    assert.equal(messages.seen.length, LONG.messages);
    assert.equal(messages.pages, Math.ceil(LONG.messages / 50));
    const timeline = await chain('timeline', 'timeline', { items: page.timeline, older: page.timelineOlderCursor });
    assert.deepEqual(timeline.seen, await newestFirst('lead_events', 'at'));
    assert.equal(timeline.seen.length, LONG.events);
  });

  it('keeps older pages where they were while new messages arrive (keyset, not offset)', async () => {
    const before = await newestFirst('whatsapp_messages', 'created_at');
    const page = (await admin(app.http, viewer, 'GET', leadUrl())).body;
    const second = await admin(
      app.http,
      viewer,
      'GET',
      `${leadUrl()}/messages?before=${encodeURIComponent(page.messagesOlderCursor)}`,
    );
    await app.db.pool.query(
      `INSERT INTO whatsapp_messages (lead_id, direction, provider, kind, body, status, provider_message_id)
       SELECT $1::uuid, 'inbound', 'twilio', 'text', 'late ' || g, 'received', 'late-' || $1::text || g
         FROM generate_series(1, 7) g`,
      [leadId],
    );
    const rest = await chain('messages', 'messages', { items: [], older: second.body.olderCursor });
    const seen = [...[...page.messages].reverse(), ...[...second.body.messages].reverse()].map(
      (m: { id: number }) => m.id,
    );
    assert.deepEqual([...seen, ...rest.seen], before);
  });

  it('pages the provider traffic newest first, without payloads', async () => {
    const first = await admin(app.http, viewer, 'GET', `${leadUrl()}/provider-traffic`);
    assert.equal(first.status, 200);
    assert.equal(first.body.entries.length, 50);
    assert.deepEqual(Object.keys(first.body.entries[0]).sort(), [
      'createdAt',
      'direction',
      'httpStatus',
      'id',
      'kind',
      'outcome',
      'provider',
    ]);
    const first50 = { items: first.body.entries, older: first.body.olderCursor };
    const all = await chain('provider-traffic', 'entries', first50, false);
    assert.deepEqual(all.seen, await newestFirst('integration_events', 'created_at'));
    assert.equal(all.seen.length, LONG.traffic);
  });

  it('refuses a cursor that is not one of its own, and a limit over 200', async () => {
    const millisecondCursor = Buffer.from('2026-01-01T00:00:00.000Z|1').toString('base64url');
    for (const q of ['before=abc', `before=${millisecondCursor}`, 'limit=201', 'limit=0']) {
      const r = await admin(app.http, viewer, 'GET', `${leadUrl()}/messages?${q}`);
      assert.equal(r.status, 400, q);
    }
  });

  it("is scoped to the operator's workspaces: another workspace's lead or operator gets 404", async () => {
    for (const path of ['messages', 'timeline', 'provider-traffic']) {
      const otherLead = `/api/admin/workspaces/${ws.slug}/leads/${otherLeadId}/${path}`;
      const mine = await admin(app.http, viewer, 'GET', otherLead);
      assert.equal(mine.status, 404, path);
      assert.equal(mine.body.error, 'Lead not found.');
      const theirs = await admin(app.http, outsider, 'GET', `/api/admin/workspaces/${ws.slug}/leads/${leadId}/${path}`);
      assert.equal(theirs.status, 404, path);
      const signedOut = await admin(app.http, null, 'GET', `${leadUrl()}/${path}`);
      assert.equal(signedOut.status, 401, path);
    }
  });
});

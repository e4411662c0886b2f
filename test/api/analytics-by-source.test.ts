import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { HISTORY_FROM, HISTORY_TO, seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The Analytics page's "By source" table (docs/DASHBOARD.md, "Analytics"): the known history of
// test/helpers/analytics-history.ts with a source given to each lead, and the exact figures per
// source. F and A came by the hosted form, B and C by Meta, D and E by the API; the sandbox lead
// S by the form too.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let other: Awaited<ReturnType<TestApp['createWorkspace']>>;
let viewer: AdminSession;
let outsider: AdminSession;
const url = (slug: string, extra = '') =>
  `/api/admin/workspaces/${slug}/analytics?period=custom&from=${HISTORY_FROM}&to=${HISTORY_TO}${extra}`;

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  other = await app.createWorkspace('whatsapp');
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  // The other workspace's leads in the same period must not count here.
  await seedAnalyticsHistory(app.db.pool, other.workspaceId);
  const sources: Record<string, string> = { F: 'form', A: 'form', S: 'form', B: 'meta', C: 'meta' };
  for (const [lead, source] of Object.entries(sources))
    await app.db.pool.query(`UPDATE leads SET source = $3 WHERE workspace_id = $1 AND name = $2`, [
      ws.workspaceId,
      `History ${lead}`,
      source,
    ]);
  await app.db.pool.query(`UPDATE leads SET source = 'webhook' WHERE workspace_id = $1`, [other.workspaceId]);
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  viewer = (await signIn(app.http, op.email, op.password)).session!;
  const out = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  outsider = (await signIn(app.http, out.email, out.password)).session!;
});

after(async () => {
  await app?.close();
});

describe('analytics by source', () => {
  it('counts each source’s leads, speed to lead and funnel shares (live leads only)', async () => {
    const r = await admin(app.http, viewer, 'GET', url(ws.slug));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.deepEqual(r.body.bySource, [
      // D: contacted after 20 s and answered (needs_human); E: never contacted.
      {
        source: 'api',
        leads: 2,
        contacted: 1,
        conversation: 1,
        booked: 0,
        contactedShare: 0.5,
        conversationShare: 0.5,
        bookedShare: 0,
        speedP50Seconds: 20,
      },
      // F (10 s) and A (30 s): both answered and booked.
      {
        source: 'form',
        leads: 2,
        contacted: 2,
        conversation: 2,
        booked: 2,
        contactedShare: 1,
        conversationShare: 1,
        bookedShare: 1,
        speedP50Seconds: 20,
      },
      // B (5 s, answered, unqualified) and C (120 s, no answer).
      {
        source: 'meta',
        leads: 2,
        contacted: 2,
        conversation: 1,
        booked: 0,
        contactedShare: 1,
        conversationShare: 0.5,
        bookedShare: 0,
        speedP50Seconds: 62.5,
      },
    ]);
    // The sources add up to the page's totals.
    const sum = (k: string) => r.body.bySource.reduce((n: number, s: Record<string, number>) => n + s[k]!, 0);
    assert.deepEqual(
      [sum('leads'), sum('contacted'), sum('conversation'), sum('booked')],
      [r.body.totals.leads, r.body.totals.contacted, r.body.totals.conversation, r.body.totals.booked],
    );
  });

  it('adds the sandbox leads with the Sandbox switch, most leads first', async () => {
    const r = await admin(app.http, viewer, 'GET', url(ws.slug, '&sandbox=true'));
    assert.equal(r.status, 200);
    assert.deepEqual(
      r.body.bySource.map((s: Record<string, unknown>) => [s.source, s.leads, s.booked, s.speedP50Seconds]),
      [
        // S: contacted after 1 s, booked. Speeds 1, 10, 30: the median is 10.
        ['form', 3, 3, 10],
        ['api', 2, 0, 20],
        ['meta', 2, 0, 62.5],
      ],
    );
    assert.equal(r.body.bySource[0].bookedShare, 1);
  });

  it('is empty for a period without leads, and each workspace sees only its own', async () => {
    const empty = await admin(app.http, viewer, 'GET', `/api/admin/workspaces/${ws.slug}/analytics?period=7d`);
    assert.equal(empty.status, 200);
    assert.deepEqual(empty.body.bySource, []);
    const theirs = await admin(app.http, outsider, 'GET', url(other.slug));
    assert.deepEqual(
      theirs.body.bySource.map((s: Record<string, unknown>) => [s.source, s.leads]),
      [['webhook', 6]],
    );
    const mine = await admin(app.http, outsider, 'GET', url(ws.slug));
    assert.equal(mine.status, 404);
  });
});

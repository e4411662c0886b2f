import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { LEAD_STATUSES } from '../../src/leads/lead-state.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { insertLead } from '../helpers/agent-harness.ts';
import { HISTORY_FROM, HISTORY_TO, seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The inbox's tab counts tell the truth (docs/DASHBOARD.md, "Inbox"): with a search or a filter,
// each status's count is the number of leads that tab lists with the same search and filters, and
// `all` the number the All tab lists. The leads: the known history of
// test/helpers/analytics-history.ts (F and A by the form, B and C by Meta, D, E and the two just
// outside the period by the API, the sandbox lead S by the form), plus three "Counted" leads.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let viewer: AdminSession;
const TABS = [...LEAD_STATUSES, 'all'] as const;

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  const other = await app.createWorkspace('whatsapp');
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  await seedAnalyticsHistory(app.db.pool, other.workspaceId);
  const sources: Record<string, string> = { F: 'form', A: 'form', S: 'form', B: 'meta', C: 'meta' };
  for (const [lead, source] of Object.entries(sources)) {
    await app.db.pool.query(`UPDATE leads SET source = $3 WHERE workspace_id = $1 AND name = $2`, [
      ws.workspaceId,
      `History ${lead}`,
      source,
    ]);
  }
  for (const status of ['booked', 'booked', 'new'] as const) {
    await insertLead(app.db.pool, ws.workspaceId, { name: 'Counted Person', status });
  }
  // The other workspace's matching lead counts nowhere here.
  await insertLead(app.db.pool, other.workspaceId, { name: 'Counted Person', status: 'booked' });
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  viewer = (await signIn(app.http, op.email, op.password)).session!;
});
after(async () => {
  await app?.close();
});

type Counts = Record<(typeof TABS)[number], number>;

/** The counts the inbox answers for `query`, and how many leads each tab lists with the same query. */
async function countsAndLists(query: string): Promise<{ counts: Counts; listed: Counts }> {
  const get = async (extra: string) => {
    const r = await admin(app.http, viewer, 'GET', `/api/admin/workspaces/${ws.slug}/leads?limit=100&${query}${extra}`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.nextCursor, null, 'one page holds every lead of the test');
    return r.body as { counts: Counts; leads: unknown[] };
  };
  const first = await get('');
  const listed = {} as Counts;
  for (const tab of TABS) {
    const r = await get(tab === 'all' ? '' : `&status=${tab}`);
    listed[tab] = r.leads.length;
    // Choosing a tab changes the list, not the counts.
    assert.deepEqual(r.counts, first.counts, `${query} with the ${tab} tab`);
  }
  return { counts: first.counts, listed };
}

const counts = (c: Partial<Counts>): Counts => ({
  new: 0,
  in_conversation: 0,
  booked: 0,
  unqualified: 0,
  needs_human: 0,
  all: 0,
  ...c,
});

describe('the counts per status follow the search and filters', () => {
  test('a name search', async () => {
    const r = await countsAndLists('q=Counted');
    assert.deepEqual(r.counts, counts({ booked: 2, new: 1, all: 3 }));
    assert.deepEqual(r.counts, r.listed);
  });

  test('a phone search', async () => {
    const { rows } = await app.db.pool.query(`SELECT phone FROM leads WHERE workspace_id = $1 AND name = $2`, [
      ws.workspaceId,
      'History B',
    ]);
    const r = await countsAndLists(`q=${encodeURIComponent(rows[0].phone)}`);
    assert.deepEqual(r.counts, counts({ unqualified: 1, all: 1 }));
    assert.deepEqual(r.counts, r.listed);
  });

  test('a source, with the Sandbox switch off and on', async () => {
    const meta = await countsAndLists('source=meta');
    assert.deepEqual(meta.counts, counts({ unqualified: 1, in_conversation: 1, all: 2 }));
    assert.deepEqual(meta.counts, meta.listed);
    const form = await countsAndLists('source=form&sandbox=true');
    assert.deepEqual(form.counts, counts({ booked: 3, all: 3 }));
    assert.deepEqual(form.counts, form.listed);
  });

  test('a period and a stage reached, and a search with them', async () => {
    const period = `from=${HISTORY_FROM}&to=${HISTORY_TO}`;
    const reached = await countsAndLists(`${period}&reached=conversation`);
    // F, A (booked), B (unqualified), D (needs human): the live leads of the period that answered.
    assert.deepEqual(reached.counts, counts({ booked: 2, unqualified: 1, needs_human: 1, all: 4 }));
    assert.deepEqual(reached.counts, reached.listed);
    const all = await countsAndLists(period);
    assert.deepEqual(
      all.counts,
      counts({ booked: 2, unqualified: 1, in_conversation: 1, needs_human: 1, new: 1, all: 6 }),
    );
    assert.deepEqual(all.counts, all.listed);
    const none = await countsAndLists(`${period}&q=Counted`);
    assert.deepEqual(none.counts, counts({}));
    assert.deepEqual(none.counts, none.listed);
  });

  test('the "Waiting longest" sort: each tab counts the waiting leads it lists', async () => {
    // The sort lists only the leads waiting for a person (needs_human): D alone; the other tabs list none.
    const r = await countsAndLists('sort=waiting');
    assert.deepEqual(r.counts, counts({ needs_human: 1, all: 1 }));
    assert.deepEqual(r.counts, r.listed);
    const searched = await countsAndLists('sort=waiting&q=Counted');
    assert.deepEqual(searched.counts, counts({}));
    assert.deepEqual(searched.counts, searched.listed);
  });

  test('without a search or filter, every lead of the workspace', async () => {
    const r = await countsAndLists('');
    assert.deepEqual(
      r.counts,
      counts({ booked: 4, unqualified: 1, in_conversation: 1, needs_human: 1, new: 4, all: 11 }),
    );
    assert.deepEqual(r.counts, r.listed);
  });
});

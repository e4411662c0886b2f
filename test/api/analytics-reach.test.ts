import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { analytics } from '../../src/admin/analytics/analytics-days.ts';
import { analyticsFromLeads, type AnalyticsQuery } from '../../src/admin/analytics/analytics-queries.ts';
import { endPlan, recordAttempt, scheduleStep } from '../../src/contact-plan/contact-plan-queries.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The Analytics page's reach figures (docs/DASHBOARD.md, "Analytics"; issue 36): leads reached on
// their 1st, 2nd, 3rd and 4th-or-later attempt, the time to first reach, and the contacted leads
// whose contact plan ended without reaching them. Leads of a past day (so the page reads the day
// summaries, migration 047), with their attempts counted by recordAttempt, plans ended by endPlan,
// and `contact.reached` entries at known moments (the entry recordReached writes).

const DAY = '2026-03-10';
let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: AdminSession;
const leads: Record<string, string> = {};
const query = (): AnalyticsQuery => ({
  workspaceId: ws.workspaceId,
  sandbox: false,
  timeZone: 'UTC',
  from: DAY,
  to: DAY,
});

/** A lead created at `hhmm` (UTC) on DAY; contacted 5 s later unless `contacted` is false. */
async function lead(name: string, hhmm: string, contacted = true): Promise<string> {
  const at = `${DAY}T${hhmm}:00Z`;
  const { rows } = await app.db.pool.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, created_at, status)
     VALUES ($1, $2, $3, $3, $4, $4, 'in_conversation') RETURNING id`,
    [ws.workspaceId, name, `+1555777${String(Object.keys(leads).length).padStart(4, '0')}`, at],
  );
  const id = rows[0].id as string;
  if (contacted)
    await app.db.pool.query(
      `INSERT INTO lead_events (lead_id, type, at) VALUES ($1, 'message.sent', $2::timestamptz + interval '5 seconds')`,
      [id, at],
    );
  leads[name] = id;
  return id;
}

async function attempts(leadId: string, n: number): Promise<void> {
  for (let i = 0; i < n; i++)
    await recordAttempt(app.db.pool, leadId, {
      channel: 'whatsapp',
      kind: i === 0 ? 'first_contact' : 'template',
      outcome: 'sent',
    });
}

/** The lead replied on `attempt`, `afterSeconds` after it came in. */
async function reached(leadId: string, attempt: number, afterSeconds: number): Promise<void> {
  await app.db.pool.query(
    `INSERT INTO lead_events (lead_id, type, data, at)
     SELECT id, 'contact.reached', jsonb_build_object('channel', 'whatsapp', 'attempt', $2::int),
            created_at + make_interval(secs => $3) FROM leads WHERE id = $1`,
    [leadId, attempt, afterSeconds],
  );
}

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }]);
  owner = (await signIn(app.http, op.email, op.password)).session!;

  const a = await lead('Reached first', '10:00');
  await attempts(a, 1);
  await reached(a, 1, 30);

  const b = await lead('Reached second', '11:00');
  await attempts(b, 2);
  await reached(b, 2, 1800);

  const c = await lead('Reached third', '12:00');
  await attempts(c, 3);
  await reached(c, 3, 7200);
  await endPlan(app.db.pool, c, 'booked'); // reached, then its plan ended: not "never reached"

  const fifth = await lead('Reached fifth', '13:00');
  await attempts(fifth, 5);
  await reached(fifth, 5, 600);

  const never = await lead('Never reached', '14:00');
  await attempts(never, 4);
  await endPlan(app.db.pool, never, 'not_reached');

  const retried = await lead('Ended then retried', '15:00');
  await attempts(retried, 2);
  await endPlan(app.db.pool, retried, 'not_reached');

  const running = await lead('Plan running', '16:00');
  await attempts(running, 1);

  // Never contacted (its plan ended before a first contact went out): not in the share's base.
  const silent = await lead('Not contacted', '17:00', false);
  await scheduleStep(app.db.pool, silent, { kind: 'call', at: new Date(`${DAY}T17:00:00Z`), reason: 'first contact' });
  await endPlan(app.db.pool, silent, 'agent_off');
});

after(async () => {
  await app?.close();
});

describe('reach figures', () => {
  it(
    'counts leads reached by attempt number, the time to first ' + 'reach, and the contacted leads never reached',
    async () => {
      const r = await admin(
        app.http,
        owner,
        'GET',
        `/api/admin/workspaces/${ws.slug}/analytics?period=custom&from=${DAY}&to=${DAY}`,
      );
      assert.equal(r.status, 200, JSON.stringify(r.body));
      assert.equal(r.body.totals.leads, 8);
      assert.equal(r.body.totals.contacted, 7);
      assert.equal(r.body.totals.speedP50Seconds, 5); // time to first contact, shown beside
      assert.deepEqual(r.body.reach, {
        reached: 4,
        byAttempt: [1, 1, 1, 1], // 1st, 2nd, 3rd, 4th and later (the 5th)
        // "Never reached" and "Ended then retried" (its plan has ended; it is retried below).
        neverReached: 2,
        neverReachedShare: 0.2857,
        // 30, 600, 1800, 7200 s: the median between 600 and 1800; p90 at 2.7 of 3 steps.
        reachP50Seconds: 1200,
        reachP90Seconds: 5580,
      });
      // The day summary (analytics_days) was written, and the plain queries agree with it.
      const { rows } = await app.db.pool.query(
        'SELECT reached, reached_by_attempt, never_reached FROM analytics_days WHERE workspace_id = $1',
        [ws.workspaceId],
      );
      assert.deepEqual(rows, [{ reached: 4, reached_by_attempt: [1, 1, 1, 1], never_reached: 2 }]);
      const timeline = await analyticsFromLeads(app.db.pool, query(), 'timeline');
      assert.deepEqual(await analyticsFromLeads(app.db.pool, query(), 'funnel'), timeline);
      assert.deepEqual(await analytics(app.db.pool, query()), timeline);
    },
  );

  it('stays exact when a plan is scheduled again and when a lead given up on replies later', async () => {
    // An operator's retry: the plan runs again, the lead is no longer "never reached".
    await scheduleStep(app.db.pool, leads['Ended then retried']!, {
      kind: 'template',
      at: new Date(),
      reason: 'operator retry',
      data: { byOperator: true },
    });
    let now = await analytics(app.db.pool, query());
    assert.equal(now.reach.neverReached, 1);
    assert.equal(now.reach.neverReachedShare, 0.1429);
    // The lead given up on writes back a day later: reached on its 4th attempt.
    await reached(leads['Never reached']!, 4, 86_400);
    now = await analytics(app.db.pool, query());
    assert.deepEqual(now.reach, {
      reached: 5,
      byAttempt: [1, 1, 1, 2],
      neverReached: 0,
      neverReachedShare: 0,
      reachP50Seconds: 1800,
      reachP90Seconds: 54_720, // 7200 + 0.6 × (86400 − 7200)
    });
    const timeline = await analyticsFromLeads(app.db.pool, query(), 'timeline');
    assert.deepEqual(now, timeline);
    assert.deepEqual(await analyticsFromLeads(app.db.pool, query(), 'funnel'), timeline);
  });
});

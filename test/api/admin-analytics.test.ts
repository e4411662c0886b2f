import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { analytics, maintainAnalyticsDays } from '../../src/admin/analytics/analytics-days.ts';
import { analyticsFromLeads } from '../../src/admin/analytics/analytics-queries.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import type { Role } from '../../src/operators/roles.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { HISTORY_FROM, HISTORY_TO, seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

// The Analytics page's admin API (docs/DASHBOARD.md, "Analytics"): the figures of a known
// history in Europe/Berlin (test/helpers/analytics-history.ts), local days across the change to
// summer time, the period rules, and who may read it.

let app: TestApp;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let other: Awaited<ReturnType<TestApp['createWorkspace']>>;
const sessions = {} as Record<Role, AdminSession>;
let outsider: AdminSession;
const url = (query: string) => `/api/admin/workspaces/${ws.slug}/analytics?${query}`;
const custom = `period=custom&from=${HISTORY_FROM}&to=${HISTORY_TO}`;

before(async () => {
  app = await startTestApp();
  ws = await app.createWorkspace('whatsapp');
  other = await app.createWorkspace('whatsapp');
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role }]);
    sessions[role] = (await signIn(app.http, op.email, op.password)).session!;
  }
  const op = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  outsider = (await signIn(app.http, op.email, op.password)).session!;
});

after(async () => {
  await app?.close();
});

describe('analytics in the admin API', () => {
  it("counts the seeded history's funnel, speed to lead and bookings (live leads only)", async () => {
    const r = await admin(app.http, sessions.owner, 'GET', url(custom));
    assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(r.body.channel, 'whatsapp');
    assert.equal(r.body.timeZone, 'Europe/Berlin');
    assert.equal(r.body.sandbox, false);
    assert.deepEqual(r.body.totals, {
      leads: 6,
      contacted: 5,
      conversation: 4,
      booked: 2,
      unqualified: 1,
      needsHuman: 1,
      // speeds 5, 10, 20, 30, 120 s; bookings after 3600 and 7200 s
      speedP50Seconds: 20,
      speedP90Seconds: 84,
      medianTimeToBookingSeconds: 5400,
    });
    assert.deepEqual(r.body.speedBuckets, [10, 30, 60, 120, 300, 900, 3600, 86400]);
    assert.deepEqual(r.body.speedHistogram, [1, 2, 1, 0, 1, 0, 0, 0, 0]);
  });

  it("puts each lead on the workspace's local day, across the change to summer time", async () => {
    const r = await admin(app.http, sessions.viewer, 'GET', url(custom));
    assert.equal(r.status, 200);
    const days = Object.fromEntries(r.body.days.map((d: Record<string, unknown>) => [d.day, d]));
    assert.deepEqual(Object.keys(days), ['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30']);
    // 22:59 UTC on the 27th is 23:59 in Berlin (winter time): still the 27th.
    assert.deepEqual(
      [days['2026-03-27'].leads, days['2026-03-27'].booked, days['2026-03-27'].speedP50Seconds],
      [1, 1, 10],
    );
    assert.deepEqual([days['2026-03-28'].leads, days['2026-03-28'].booked], [1, 1]);
    // 23:30 UTC on the 28th is 00:30 on the 29th in Berlin: it counts on the next local day.
    assert.deepEqual(
      [days['2026-03-29'].leads, days['2026-03-29'].unqualified, days['2026-03-29'].inConversation],
      [2, 1, 1],
    );
    assert.deepEqual([days['2026-03-29'].speedP50Seconds, days['2026-03-29'].speedP90Seconds], [62.5, 108.5]);
    // 22:30 UTC on the 29th is 00:30 on the 30th in summer time (UTC+2).
    assert.deepEqual(
      [
        days['2026-03-30'].leads,
        days['2026-03-30'].needsHuman,
        days['2026-03-30'].new,
        days['2026-03-30'].speedP50Seconds,
      ],
      [2, 1, 1, 20],
    );
  });

  it('counts sandbox leads too with the Sandbox switch', async () => {
    const r = await admin(app.http, sessions.agent, 'GET', url(`${custom}&sandbox=true`));
    assert.equal(r.status, 200);
    assert.equal(r.body.sandbox, true);
    assert.deepEqual([r.body.totals.leads, r.body.totals.booked, r.body.totals.contacted], [7, 3, 6]);
  });

  it('answers the presets ending today, 30 days by default', async () => {
    const r = await admin(app.http, sessions.admin, 'GET', url(''));
    assert.equal(r.status, 200);
    assert.equal(r.body.period, '30d');
    assert.equal(r.body.days.length, 30);
    assert.equal(r.body.to, new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date()));
    for (const [period, n] of [
      ['7d', 7],
      ['90d', 90],
    ] as const) {
      const p = await admin(app.http, sessions.admin, 'GET', url(`period=${period}`));
      assert.equal(p.status, 200);
      assert.equal(p.body.days.length, n);
      assert.equal(p.body.days[0].day, p.body.from);
    }
  });

  it('refuses a bad period with a message that says what to fix', async () => {
    const cases: Array<[string, string, RegExp]> = [
      ['period=1y', 'period', /one of 7d, 30d, 90d, custom/],
      ['period=custom&from=2026-03-27', 'to', /needs to/],
      ['period=custom&from=2026-02-30&to=2026-03-01', 'from', /calendar date/],
      ['period=custom&from=27.03.2026&to=2026-03-30', 'from', /YYYY-MM-DD/],
      ['period=custom&from=2026-03-30&to=2026-03-27', 'to', /before from/],
      ['period=custom&from=2024-01-01&to=2026-03-27', 'to', /at most 366/],
      ['period=7d&from=2026-03-27', 'from', /period=custom/],
      ['sandbox=yes', 'sandbox', /true or false/],
    ];
    for (const [query, field, message] of cases) {
      const r = await admin(app.http, sessions.owner, 'GET', url(query));
      assert.equal(r.status, 400, query);
      assert.equal(r.body.error, 'Validation failed.');
      assert.deepEqual(r.body.issues[0].path, [field], query);
      assert.match(r.body.issues[0].message, message, query);
    }
  });

  it('answers 404 to an operator of another workspace and 401 without a session', async () => {
    const r = await admin(app.http, outsider, 'GET', url(custom));
    assert.equal(r.status, 404);
    assert.equal(r.body.error, 'Workspace not found.');
    const anonymous = await app.http.inject({ method: 'GET', url: url(custom) });
    assert.equal(anonymous.statusCode, 401);
  });
});

describe(
  'the day summaries (analytics_days, migration 020) and the ' + 'per-lead rollup (lead_funnel, migration 017)',
  () => {
    const query = (sandbox: boolean) => ({
      workspaceId: ws.workspaceId,
      sandbox,
      timeZone: 'Europe/Berlin',
      from: HISTORY_FROM,
      to: HISTORY_TO,
    });
    const agree = async () => {
      for (const sandbox of [false, true]) {
        const timeline = await analyticsFromLeads(app.db.pool, query(sandbox), 'timeline');
        assert.deepEqual(await analyticsFromLeads(app.db.pool, query(sandbox), 'funnel'), timeline);
        assert.deepEqual(await analytics(app.db.pool, query(sandbox)), timeline);
      }
    };

    it('agrees with the plain query over the timeline, and stays exact through changes', async () => {
      await agree();
      const id = async (name: string) =>
        (await app.db.pool.query(`SELECT id FROM leads WHERE name = $1`, [name])).rows[0].id as string;
      // A status change through the state machine (its timeline entry in the same statement).
      const c = await id('History C');
      assert.equal(
        (
          await transitionLead(app.db.pool, {
            leadId: c,
            to: 'booked',
            actor: 'agent',
            event: { type: 'booking.created' },
          })
        ).ok,
        true,
      );
      // A first contact for the new lead, an earlier first contact that arrives late, an erased lead.
      const e = await id('History E');
      // …and a later message of a lead already contacted, which must not move its first contact.
      await app.db.pool.query(
        `INSERT INTO lead_events (lead_id, type, at) VALUES ($1, 'message.sent', '2026-03-30T08:00:40Z'),
        ($2, 'message.sent', '2026-03-29T22:30:01Z'), ($3, 'message.sent', '2026-03-28T12:00:00Z')`,
        [e, await id('History D'), await id('History A')],
      );
      await app.db.pool.query(`DELETE FROM leads WHERE id = $1`, [await id('History B')]);
      // A lead and its timeline in one statement, as the public API's batch writes them.
      await app.db.pool.query(
        `WITH l AS (INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, created_at)
                  VALUES ($1, 'History G', '+15559990001', '+15559990001',
                  '2026-03-28T09:00:00Z', '2026-03-28T09:00:00Z') RETURNING id)
       INSERT INTO lead_events (lead_id, type, at) SELECT id, 'message.sent', '2026-03-28T09:00:07Z' FROM l`,
        [ws.workspaceId],
      );
      await agree();
      const now = await analytics(app.db.pool, query(false));
      assert.deepEqual(
        [now.totals.leads, now.totals.contacted, now.totals.booked, now.totals.unqualified],
        [6, 6, 3, 0],
      );
      assert.equal(now.days.find((d) => d.day === '2026-03-30')!.speedP50Seconds, 20.5); // D now 1 s, E 40 s
      assert.equal(now.days.find((d) => d.day === '2026-03-28')!.speedP50Seconds, 18.5); // A still 30 s, G 7 s
    });

    it(
      'keeps a summary per past day only, notes changes of old leads only; ' +
        'the maintenance pass folds them and keeps the last 90 days',
      async () => {
        const rows = async (sql: string) => (await app.db.pool.query(sql, [ws.workspaceId])).rows;
        await analytics(app.db.pool, query(false));
        assert.deepEqual(
          (
            await rows(
              `SELECT to_char(day, 'YYYY-MM-DD') AS d FROM analytics_days
            WHERE workspace_id = $1 AND NOT with_sandbox AND day < '2026-04-01' ORDER BY day`,
            )
          ).map((r) => r.d),
          ['2026-03-27', '2026-03-28', '2026-03-29', '2026-03-30'],
        );
        assert.equal((await rows(`SELECT count(*)::int AS n FROM analytics_changes WHERE workspace_id = $1`))[0].n, 0);
        // Today's days are never kept: the preset reads them live.
        await admin(app.http, sessions.owner, 'GET', url('period=7d'));
        const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Europe/Berlin' }).format(new Date());
        assert.equal(
          (await rows(`SELECT count(*)::int AS n FROM analytics_days WHERE workspace_id = $1 AND day = '${today}'`))[0]
            .n,
          0,
        );
        // A lead created just now notes nothing: its day cannot have a summary yet.
        const posted = await app.http.inject({
          method: 'POST',
          url: '/api/public/leads',
          headers: { authorization: `Bearer ${ws.apiKey}` },
          payload: { name: 'Fresh', phone: '+12025550177', consent: true },
        });
        assert.equal(posted.statusCode, 201, posted.body);
        assert.equal((await rows(`SELECT count(*)::int AS n FROM analytics_changes WHERE workspace_id = $1`))[0].n, 0);
        // A change to an old lead is noted; the maintenance pass drops the stale summary with it.
        await app.db.pool.query(
          `UPDATE leads SET status = 'unqualified' WHERE workspace_id = $1 AND name = 'History C'`,
          [ws.workspaceId],
        );
        assert.equal((await rows(`SELECT count(*)::int AS n FROM analytics_changes WHERE workspace_id = $1`))[0].n, 1);
        assert.equal(await maintainAnalyticsDays(app.db.pool), 1);
        // The pass also wrote the last 90 past days of the workspace (it has a recent lead), so a
        // page load of the 90-day preset computes no day itself.
        const kept = async () =>
          (await rows(`SELECT count(*)::int AS n FROM analytics_days WHERE workspace_id = $1`))[0].n;
        const before = await kept();
        await app.db.pool.query(`DELETE FROM analytics_days WHERE workspace_id = $1 AND day > '2026-04-01'`, [
          ws.workspaceId,
        ]);
        await maintainAnalyticsDays(app.db.pool);
        assert.equal(await kept(), before);
        assert.equal((await admin(app.http, sessions.owner, 'GET', url('period=90d'))).status, 200);
        assert.equal(await kept(), before);
        assert.equal((await rows(`SELECT count(*)::int AS n FROM analytics_changes WHERE workspace_id = $1`))[0].n, 0);
        assert.deepEqual(
          (
            await rows(
              `SELECT to_char(day, 'YYYY-MM-DD') AS d FROM analytics_days
            WHERE workspace_id = $1 AND NOT with_sandbox AND day < '2026-04-01' ORDER BY day`,
            )
          ).map((r) => r.d),
          ['2026-03-27', '2026-03-28', '2026-03-30'],
        );
        await agree();
        assert.equal(
          (await analytics(app.db.pool, query(false))).days.find((d) => d.day === '2026-03-29')!.unqualified,
          1,
        );
      },
    );
  },
);

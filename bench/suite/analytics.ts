// The Analytics page on a large workspace (docs/PERFORMANCE.md, "Analytics"): the timeline of
// the last 91 days of a workspace of 1,000,000 leads (bench/lib/inbox-seed.ts: one lead every 30 s,
// so 30 days hold 86,400 leads and 90 days 259,200) — a first contact for every lead not `new`,
// an answer from the lead for most, a booking entry for the booked — then what the admin route
// runs (analytics() of src/admin/analytics-days.ts) for 7, 30 and 90 days in Europe/Berlin:
// once with no day summary kept (the first load after a deploy or a change of time zone), then
// N times (BENCH_ANALYTICS_RUNS, default 100) with BENCH_ANALYTICS_CHANGES (default 5) leads of
// the period changed between two loads, the realistic case (late bookings of older leads make
// their days' summaries stale). Beside it, in the same run: a trivial indexed query (today's
// leads, counted off the inbox index), the same figures from the per-lead rollup (lead_funnel)
// and by the plain query over the timeline. Measured at the query layer, like the inbox.
// bench/suite/inbox.ts calls benchAnalytics on its own seeded leads (npm run bench); alone:
//   node bench/suite/analytics.ts        (embedded PostgreSQL in a temporary folder, or BENCH_DATABASE_URL)
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { localToday } from '../../src/admin/analytics/analytics-admin-routes.ts';
import { analytics, maintainAnalyticsDays } from '../../src/admin/analytics/analytics-days.ts';
import { analyticsFromLeads, type AnalyticsSource } from '../../src/admin/analytics/analytics-queries.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { openBenchServer } from '../lib/db.ts';
import { seedLeads } from '../lib/inbox-seed.ts';
import { progress } from '../lib/procs.ts';

const RUNS = Number(process.env.BENCH_ANALYTICS_RUNS ?? 100);
const PLAIN_RUNS = Number(process.env.BENCH_ANALYTICS_PLAIN_RUNS ?? 10);
const CHANGES = Number(process.env.BENCH_ANALYTICS_CHANGES ?? 5);
const TZ = 'Europe/Berlin';

async function timed(
  label: string,
  fn: () => Promise<unknown>,
  runs = RUNS,
  between?: () => Promise<unknown>,
): Promise<void> {
  for (let i = 0; i < Math.min(5, runs); i++) await fn(); // warm the cache
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
    await between?.();
    const t = performance.now();
    await fn();
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(1);
  console.log(`| ${label} | ${at(0.5)} | ${at(0.95)} | ${at(0.99)} |`);
}

/** Seeds the last 91 days' timeline of the workspace's leads, then measures the analytics query. */
export async function benchAnalytics(pool: Pool, workspaceId: string, leads: number): Promise<void> {
  progress('analytics: seeding the last 91 days of lead timelines');
  const started = performance.now();
  await pool.query(
    `WITH recent AS (
       SELECT id, status, created_at, abs(hashtext(id::text)) AS h FROM leads
        WHERE workspace_id = $1 AND created_at >= now() - interval '91 days' AND status <> 'new')
     INSERT INTO lead_events (lead_id, type, data, at)
     SELECT id, 'message.sent', '{"from":"new","to":"in_conversation"}'::jsonb,
     created_at + make_interval(secs => 1 + h % 900) FROM recent
     UNION ALL
     SELECT id, 'message.received', '{}', created_at + make_interval(secs => 1000 + h % 600)
     FROM recent WHERE status <> 'in_conversation' OR h % 2 = 0
     UNION ALL
     SELECT id, 'booking.created', '{"from":"in_conversation","to":"booked"}',
     created_at + make_interval(secs => 2000 + h % 7200) FROM recent WHERE status = 'booked'`,
    [workspaceId],
  );
  await pool.query('VACUUM ANALYZE lead_events');
  await pool.query('VACUUM ANALYZE lead_funnel');
  await pool.query('DELETE FROM analytics_changes');
  // The workspace's own time zone: the maintenance pass keeps the days in it.
  await pool.query(`UPDATE workspaces SET agent = jsonb_set(agent, '{timeZone}', to_jsonb($2::text)) WHERE id = $1`, [
    workspaceId,
    TZ,
  ]);
  progress(`analytics: seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const to = localToday(new Date(), TZ);
  const from = (days: number) =>
    new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const q = (days: number) => ({ workspaceId, sandbox: false, timeZone: TZ, from: from(days), to });
  const page = (days: number) => () => analytics(pool, q(days));
  const fromLeads = (days: number, source: AnalyticsSource) => () => analyticsFromLeads(pool, q(days), source);
  // Late news of older leads: a few leads of the last 90 days change status between two loads,
  // each making its day's summary stale (statuses swap between the two closed outcomes).
  const change = () =>
    pool.query(
      `UPDATE leads SET status = CASE status WHEN 'unqualified' THEN 'needs_human' ELSE 'unqualified' END
      WHERE id IN (SELECT id FROM leads WHERE workspace_id = $1 AND status IN ('unqualified', 'needs_human')
                     AND created_at BETWEEN now() - interval '90 days' AND now() - interval '1 day'
                   ORDER BY random() LIMIT $2)`,
      [workspaceId, CHANGES],
    );
  console.log(`\nAnalytics, ${leads.toLocaleString('en')} leads in one workspace, ${TZ}, ${RUNS} runs each (ms)\n`);
  console.log('| query | p50 | p95 | p99 |\n|---|---|---|---|');
  await timed("baseline: count of today's leads (index)", () =>
    pool.query(
      `SELECT count(*) FROM leads WHERE workspace_id = $1 AND livemode
        AND created_at >= ($2::date)::timestamp AT TIME ZONE $3`,
      [workspaceId, to, TZ],
    ),
  );
  for (const days of [7, 30, 90]) {
    await pool.query('DELETE FROM analytics_days');
    const t = performance.now();
    await page(days)();
    console.log(
      `| analytics, ${days} days, first load (no day kept yet; one run) | ${(performance.now() - t).toFixed(1)} | | |`,
    );
  }
  // What a deploy or a change of time zone costs once: the maintenance pass (every ten minutes in
  // every `serve`) writes the missing days, so the next load computes none itself.
  await pool.query('DELETE FROM analytics_days');
  let t = performance.now();
  await maintainAnalyticsDays(pool);
  console.log(`| maintenance pass writing the 90 past days (one run) | ${(performance.now() - t).toFixed(1)} | | |`);
  t = performance.now();
  await page(90)();
  console.log(
    `| analytics, 90 days, first load after that pass (one run) | ${(performance.now() - t).toFixed(1)} | | |`,
  );
  for (const days of [7, 30, 90])
    await timed(
      `analytics, ${days} days, ${CHANGES} older leads changed before each load (what the page runs)`,
      page(days),
      RUNS,
      change,
    );
  await timed('analytics, 90 days, nothing changed between loads', page(90));
  // Baselines: the same figures from one row per lead, and straight from the timeline (one index
  // look-up per lead: seconds each, so only PLAIN_RUNS runs).
  for (const days of [30, 90])
    await timed(
      `analytics, ${days} days, per-lead rollup lead_funnel (${PLAIN_RUNS} runs)`,
      fromLeads(days, 'funnel'),
      PLAIN_RUNS,
    );
  for (const days of [30, 90])
    await timed(
      `analytics, ${days} days, plain query over lead_events (${PLAIN_RUNS} runs)`,
      fromLeads(days, 'timeline'),
      PLAIN_RUNS,
    );
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const leads = Number(process.env.BENCH_INBOX_LEADS ?? 1_000_000);
  const server = await openBenchServer();
  const pool = createPool(server.url, 4, 'leadintake-bench-analytics');
  try {
    await migrate(pool);
    const { rows } = await pool.query(
      `INSERT INTO workspaces (slug, name, channel) VALUES ('analytics', 'Analytics', 'whatsapp') RETURNING id`,
    );
    progress(`seeding ${leads.toLocaleString('en')} leads`);
    await seedLeads(pool, rows[0].id, leads);
    await pool.query('VACUUM ANALYZE leads');
    await benchAnalytics(pool, rows[0].id, leads);
  } finally {
    await pool.end();
    await server.close();
  }
}

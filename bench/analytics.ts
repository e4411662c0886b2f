// The Analytics page on a large workspace (docs/PERFORMANCE.md, "Analytics"): the timeline of
// the last 91 days of a workspace of 1,000,000 leads (bench/inbox-seed.ts: one lead every 30 s,
// so 30 days hold 86,400 leads and 90 days 259,200) — a first contact for every lead not `new`,
// an answer from the lead for most, a booking entry for the booked — then, N times each
// (BENCH_ANALYTICS_RUNS, default 100), the query the admin route runs for 7, 30 and 90 days in
// Europe/Berlin from the rollup (lead_funnel, migration 017), beside two baselines in the same
// run: a trivial indexed query (today's leads, counted off the inbox index) and the same figures
// by the plain query over the timeline, without the rollup. Measured at the query layer, like the inbox.
// bench/inbox.ts calls benchAnalytics on its own seeded leads (npm run bench); alone:
//   node bench/analytics.ts        (embedded PostgreSQL in a temporary folder, or BENCH_DATABASE_URL)
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { localToday } from '../src/admin/analytics-admin-routes.ts';
import { analytics, type AnalyticsSource } from '../src/admin/analytics-queries.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { openBenchServer } from './db.ts';
import { seedLeads } from './inbox-seed.ts';
import { progress } from './procs.ts';

const RUNS = Number(process.env.BENCH_ANALYTICS_RUNS ?? 100);
const PLAIN_RUNS = Number(process.env.BENCH_ANALYTICS_PLAIN_RUNS ?? 10);
const TZ = 'Europe/Berlin';

async function timed(label: string, fn: () => Promise<unknown>, runs = RUNS): Promise<void> {
  for (let i = 0; i < Math.min(5, runs); i++) await fn(); // warm the cache
  const ms: number[] = [];
  for (let i = 0; i < runs; i++) {
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
     SELECT id, 'message.sent', '{"from":"new","to":"in_conversation"}'::jsonb, created_at + make_interval(secs => 1 + h % 900) FROM recent
     UNION ALL
     SELECT id, 'message.received', '{}', created_at + make_interval(secs => 1000 + h % 600) FROM recent WHERE status <> 'in_conversation' OR h % 2 = 0
     UNION ALL
     SELECT id, 'booking.created', '{"from":"in_conversation","to":"booked"}', created_at + make_interval(secs => 2000 + h % 7200) FROM recent WHERE status = 'booked'`,
    [workspaceId],
  );
  await pool.query('VACUUM ANALYZE lead_events');
  await pool.query('VACUUM ANALYZE lead_funnel');
  progress(`analytics: seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);
  const to = localToday(new Date(), TZ);
  const from = (days: number) => new Date(Date.parse(`${to}T00:00:00Z`) - (days - 1) * 86_400_000).toISOString().slice(0, 10);
  const query = (days: number, source: AnalyticsSource) => () => analytics(pool, { workspaceId, sandbox: false, timeZone: TZ, from: from(days), to }, source);
  console.log(`\nAnalytics, ${leads.toLocaleString('en')} leads in one workspace, ${TZ}, ${RUNS} runs each (ms)\n`);
  console.log('| query | p50 | p95 | p99 |\n|---|---|---|---|');
  await timed('baseline: count of today\'s leads (index)', () =>
    pool.query(`SELECT count(*) FROM leads WHERE workspace_id = $1 AND livemode AND created_at >= ($2::date)::timestamp AT TIME ZONE $3`, [workspaceId, to, TZ]));
  for (const days of [7, 30, 90]) await timed(`analytics, ${days} days (rollup lead_funnel: what the page runs)`, query(days, 'rollup'));
  // The same figures straight from the timeline, one index look-up per lead: seconds each, so
  // only PLAIN_RUNS runs.
  for (const days of [30, 90]) await timed(`analytics, ${days} days, plain query over lead_events (${PLAIN_RUNS} runs)`, query(days, 'timeline'), PLAIN_RUNS);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const leads = Number(process.env.BENCH_INBOX_LEADS ?? 1_000_000);
  const server = await openBenchServer();
  const pool = createPool(server.url, 4, 'leadintake-bench-analytics');
  try {
    await migrate(pool);
    const { rows } = await pool.query(`INSERT INTO workspaces (slug, name, channel) VALUES ('analytics', 'Analytics', 'whatsapp') RETURNING id`);
    progress(`seeding ${leads.toLocaleString('en')} leads`);
    await seedLeads(pool, rows[0].id, leads);
    await pool.query('VACUUM ANALYZE leads');
    await benchAnalytics(pool, rows[0].id, leads);
  } finally {
    await pool.end();
    await server.close();
  }
}

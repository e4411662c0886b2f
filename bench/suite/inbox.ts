// The dashboard's inbox on a large workspace (docs/PERFORMANCE.md, "Dashboard inbox"): 1,000,000
// leads (BENCH_INBOX_LEADS) in one workspace with statuses spread like a busy one, and a
// WhatsApp message and `message.sent` event for the newest 10,000; then, each N times
// (BENCH_INBOX_RUNS, default 300), what the inbox asks on every load: the first page (50 leads,
// newest first) with the counts per status, the Needs human tab, a search by phone written in
// another format, a search by e-mail, one by part of a name (rare, and common: a part most names
// share), the third keyset page, the first and third pages by last activity, and the counts with a
// filter no lead matches (their slowest case). Measured at the query layer
// (the functions the admin route calls, one pool connection each), so the figures are the
// database's share of the answer; HTTP adds about a millisecond.
// Then the Analytics page's query on the same leads (bench/suite/analytics.ts).
//   node bench/suite/inbox.ts            (embedded PostgreSQL in a temporary folder, or BENCH_DATABASE_URL)
import { performance } from 'node:perf_hooks';
import { countInbox, listInbox } from '../../src/admin/leads/inbox-queries.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { benchAnalytics } from './analytics.ts';
import { openBenchServer } from '../lib/db.ts';
import { seedLeads } from '../lib/inbox-seed.ts';
import { progress } from '../lib/procs.ts';

const LEADS = Number(process.env.BENCH_INBOX_LEADS ?? 1_000_000);
const RUNS = Number(process.env.BENCH_INBOX_RUNS ?? 300);

const server = await openBenchServer();
const pool = createPool(server.url, 4, 'leadintake-bench-inbox');
try {
  await migrate(pool);
  const { rows } = await pool.query(
    `INSERT INTO workspaces (slug, name, channel) VALUES ('inbox', 'Inbox', 'whatsapp') RETURNING id`,
  );
  const workspaceId: string = rows[0].id;
  progress(`seeding ${LEADS.toLocaleString('en')} leads`);
  const started = performance.now();
  await seedLeads(pool, workspaceId, LEADS);
  await pool.query(
    `WITH recent AS (SELECT id, created_at FROM leads WHERE workspace_id = $1 ORDER BY created_at DESC LIMIT 10000)
     INSERT INTO lead_events (lead_id, type, data, at) SELECT id,
     'message.sent', '{}', created_at + interval '2 seconds' FROM recent`,
    [workspaceId],
  );
  await pool.query('VACUUM ANALYZE leads');
  await pool.query('VACUUM ANALYZE lead_events');
  progress(`seeded in ${((performance.now() - started) / 1000).toFixed(0)} s`);

  const measure = async (label: string, fn: () => Promise<unknown>, runs = RUNS) => {
    for (let i = 0; i < Math.min(20, runs); i++) await fn(); // warm the cache
    const ms: number[] = [];
    for (let i = 0; i < runs; i++) {
      const t = performance.now();
      await fn();
      ms.push(performance.now() - t);
    }
    ms.sort((a, b) => a - b);
    const at = (q: number) => ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]!.toFixed(1);
    console.log(`| ${label} | ${at(0.5)} | ${at(0.95)} | ${at(0.99)} |`);
  };
  const base = { workspaceId, sandbox: false, limit: 50 };
  const page2 = await listInbox(pool, base);
  const page3 = await listInbox(pool, { ...base, cursor: page2.nextCursor! });
  console.log(`\nInbox, ${LEADS.toLocaleString('en')} leads in one workspace, ${RUNS} runs each (ms)\n`);
  console.log('| query | p50 | p95 | p99 |\n|---|---|---|---|');
  await measure('first page (50) + counts per status', () =>
    Promise.all([listInbox(pool, base), countInbox(pool, workspaceId, false)]),
  );
  await measure('Needs human tab, first page', () => listInbox(pool, { ...base, status: 'needs_human' }));
  await measure('search by phone ("+1 (444) 0012-3457")', () =>
    listInbox(pool, { ...base, search: '+1 (444) 0012-3457' }),
  );
  await measure('search by e-mail', () => listInbox(pool, { ...base, search: 'LEAD777777@example.com' }));
  await measure('search by part of a name ("ead 77777")', () => listInbox(pool, { ...base, search: 'ead 77777' }));
  await measure('search by a common part of a name ("ead 1")', () => listInbox(pool, { ...base, search: 'ead 1' }));
  await measure('third page (keyset)', () => listInbox(pool, { ...base, cursor: page3.nextCursor! }));
  // The slowest counts: a filter no lead matches reads every lead of the workspace (20 runs).
  await measure(
    'counts per status, a filter no lead matches (20 runs)',
    () => countInbox(pool, workspaceId, false, { filters: { source: 'meta', timeZone: 'UTC' } }),
    20,
  );
  const byActivity = { ...base, sort: 'activity' as const };
  const activity2 = await listInbox(pool, byActivity);
  const activity3 = await listInbox(pool, { ...byActivity, cursor: activity2.nextCursor! });
  await measure('by last activity, first page', () => listInbox(pool, byActivity));
  await measure('by last activity, third page (keyset)', () =>
    listInbox(pool, { ...byActivity, cursor: activity3.nextCursor! }),
  );
  // The Analytics page on the same seeded leads (seeding a million is the slow part).
  await benchAnalytics(pool, workspaceId, LEADS);
} finally {
  await pool.end();
  await server.close();
}

// The relay keeps the statistics of the tables a burst grows in step with it
// (src/jobs/table-statistics.ts): after many new jobs it looks at the lead tables, analyzes those
// that outgrew their statistics, and analyzes pg-boss's job table at most every five seconds —
// on the real database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ANALYZE_AFTER_JOBS, JOB_TABLE_INTERVAL_MS, LOOK_INTERVAL_MS, SAMPLE_TARGET, TableStatistics } from '../src/jobs/table-statistics.ts';
import { createLogger } from '../src/shared/logger.ts';
import { flushTableCounts, insertBulkLeads } from './helpers/table-growth.ts';
import { startTestApp, TestClock, type TestApp } from './helpers/test-app.ts';

let app: TestApp;
let workspaceId: string;
before(async () => {
  app = await startTestApp();
  ({ workspaceId } = await app.createWorkspace('whatsapp'));
});
after(() => app.close());

let next = 1;
/** `n` leads written in one statement, their counts flushed to PostgreSQL's statistics at once. */
async function addLeads(n: number): Promise<void> {
  const client = await app.db.pool.connect();
  try {
    await insertBulkLeads(client, workspaceId, next, n);
    next += n;
    await flushTableCounts(client);
  } finally {
    client.release();
  }
}

const analyzeCount = async (table: string) =>
  Number((await app.db.pool.query(`SELECT analyze_count FROM pg_stat_user_tables WHERE relid = $1::regclass`, [table])).rows[0].analyze_count);

test('analyzes pg-boss\'s job table and the lead tables that outgrew their statistics, no more often than allowed', async () => {
  const clock = new TestClock(Date.parse('2026-11-26T10:00:00Z'));
  const sent: string[] = [];
  const db = { query: (text: string, values?: unknown[]) => (sent.push(text), app.db.pool.query(text, values)) } as unknown as typeof app.db.pool;
  const stats = new TableStatistics({ db, clock: clock.read, log: createLogger('silent') });
  const analyzed = () => sent.filter((s) => s.includes('ANALYZE ')).map((s) => s.slice(s.indexOf('ANALYZE ')));

  await addLeads(1_200);
  assert.equal(stats.created(ANALYZE_AFTER_JOBS - 1), null, 'not yet');
  await stats.created(1);
  // A lead's insert adds its row to lead_funnel (migration 017), so both grew from nothing.
  assert.deepEqual(analyzed(), ['ANALYZE pgboss.job, leads, lead_funnel']);
  const { rows } = await app.db.pool.query(`SELECT reltuples::int AS n FROM pg_class WHERE oid = 'leads'::regclass`);
  assert.ok(rows[0].n >= 1_200, 'PostgreSQL has statistics for the leads table');
  // Sampled small (SAMPLE_TARGET): the histogram of a column has SAMPLE_TARGET + 1 bounds, not the default 101.
  const { rows: [hist] } = await app.db.pool.query(
    `SELECT cardinality(histogram_bounds::text::text[]) AS n FROM pg_stats WHERE tablename = 'leads' AND attname = 'name'`);
  assert.equal(hist.n, SAMPLE_TARGET + 1);

  assert.equal(stats.created(10 * ANALYZE_AFTER_JOBS), null, 'within a second of the last look');
  clock.advance(LOOK_INTERVAL_MS);
  await stats.created(0);
  assert.equal(analyzed().length, 1, 'the leads did not grow since, and the job table waits for its own interval');

  const leadsBefore = await analyzeCount('leads');
  await addLeads(1_100);
  clock.advance(LOOK_INTERVAL_MS);
  await stats.created(ANALYZE_AFTER_JOBS);
  assert.equal(analyzed().length, 1, '1,100 more rows (more than GROWTH_ROWS) do not outgrow statistics taken at 1,200');
  await addLeads(200);
  clock.advance(LOOK_INTERVAL_MS);
  await stats.created(ANALYZE_AFTER_JOBS);
  assert.deepEqual(analyzed().slice(1), ['ANALYZE leads, lead_funnel'], 'more changes than rows at the last ANALYZE');
  assert.equal(await analyzeCount('leads'), leadsBefore + 1);

  clock.advance(JOB_TABLE_INTERVAL_MS);
  await stats.created(ANALYZE_AFTER_JOBS);
  assert.deepEqual(analyzed().slice(2), ['ANALYZE pgboss.job']);
});

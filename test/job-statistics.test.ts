// The relay keeps the job table's statistics in step with a burst (src/jobs/job-statistics.ts):
// after many new jobs it analyzes pg-boss's table, at most once per interval, on the real database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ANALYZE_AFTER_JOBS, ANALYZE_INTERVAL_MS, JobStatistics } from '../src/jobs/job-statistics.ts';
import { createLogger } from '../src/shared/logger.ts';
import { startTestApp, TestClock, type TestApp } from './helpers/test-app.ts';

let app: TestApp;
before(async () => {
  app = await startTestApp();
});
after(() => app.close());

test('analyzes the job table once enough jobs were created, and not again within the interval', async () => {
  const clock = new TestClock(Date.parse('2026-11-25T10:00:00Z'));
  const sent: string[] = [];
  const db = { query: (text: string) => (sent.push(text), app.db.pool.query(text)) } as unknown as typeof app.db.pool;
  const stats = new JobStatistics({ db, clock: clock.read, log: createLogger('silent') });
  assert.equal(stats.created(ANALYZE_AFTER_JOBS - 1), null, 'not yet');
  const first = stats.created(1);
  assert.ok(first);
  await first;
  assert.deepEqual(sent, ['ANALYZE pgboss.job']);
  assert.equal(stats.created(10 * ANALYZE_AFTER_JOBS), null, 'within the interval');
  clock.advance(ANALYZE_INTERVAL_MS);
  const second = stats.created(0);
  assert.ok(second, 'the jobs created meanwhile count once the interval is over');
  await second;
  assert.equal(sent.length, 2);
  const { rows } = await app.db.pool.query(`SELECT reltuples >= 0 AS analyzed FROM pg_class WHERE oid = 'pgboss.job_common'::regclass`);
  assert.equal(rows[0].analyzed, true, 'PostgreSQL has statistics for the table');
});

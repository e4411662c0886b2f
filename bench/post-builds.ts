// POST with many keys, build against build: `node bench/post-builds.ts` runs POST /api/public/leads
// with 200 workspaces' keys (one each, requests spread at random) at 64 connections against each
// compiled build named in BENCH_BUILDS (folders under the repository holding a `cli/main.js`, e.g.
// `dist,dist-b`; default `dist`, which `npm run build` writes), one after the other, for
// BENCH_ROUNDS rounds (default 3), so that builds alternate and a drift of the machine hits them
// alike. Each run: a fresh `serve --no-worker`, 3 s of warm-up, the outbox drained, then
// BENCH_SECONDS (default 10) of load. It prints req/s, p50 and p99, the service's peak RSS
// (VmHWM) and, at the highest RSS sampled (every 0.5 s), where the memory was: file-backed pages,
// anonymous memory, V8's heap and its spaces, and the buffers V8 tracks (from /metrics).
// Embedded PostgreSQL in a temp folder (or BENCH_DATABASE_URL). Needs wrk or autocannon (bench/load.ts).
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { openBenchServer, settle } from './db.ts';
import { loadGenerator } from './load.ts';
import { benchNodeFlags, benchServiceEnv, freePort, procStatusMb, progress, startChild, stopAllChildren, stopChild, waitForHttp200 } from './procs.ts';
import { createTenants } from './tenants.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const builds = (process.env.BENCH_BUILDS ?? 'dist').split(',').map((b) => b.trim()).filter(Boolean);
const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
const seconds = Number(process.env.BENCH_SECONDS ?? 10);
for (const b of builds) {
  if (!fs.existsSync(path.join(ROOT, b, 'cli', 'main.js'))) throw new Error(`${b}/cli/main.js not found: build it first (npm run build writes dist/)`);
}

const mb = (bytes: number) => (bytes / 1e6).toFixed(1);

/**
 * Where the process's memory is now: /proc and the service's own /metrics, on its metrics port
 * (builds older than METRICS_PORT for `serve` answered it on the public port: tried second).
 */
async function memoryNow(urls: string[], pid: number): Promise<{ rss: number; line: string }> {
  let metrics = '';
  for (const url of urls) {
    const res = await fetch(`${url}/metrics`).catch(() => null);
    if (res?.status === 200) {
      metrics = await res.text();
      break;
    }
  }
  const value = (name: string, labels = '') => Number(metrics.match(new RegExp(`^${name}${labels.replace(/[{}"]/g, '\\$&')} ([0-9.e+]+)$`, 'm'))?.[1] ?? NaN);
  const space = (s: string) => mb(value('nodejs_heap_space_size_total_bytes', `{space="${s}"}`));
  const rollup = fs.readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kb = (field: string) => Number(rollup.match(new RegExp(`^${field}:\\s+(\\d+)`, 'm'))?.[1] ?? 0) * 1024;
  const rss = kb('Rss');
  const anon = kb('Anonymous');
  return {
    rss,
    line: `RSS ${mb(rss)} MB = file-backed ${mb(rss - anon)} + anonymous ${mb(anon)}; V8 heap ${mb(value('nodejs_heap_size_total_bytes'))} ` +
      `(used ${mb(value('nodejs_heap_size_used_bytes'))}; old ${space('old')}, young ${space('new')}, code ${space('code')}, large objects ${space('large_object')}), ` +
      `buffers outside the heap ${mb(value('nodejs_external_memory_bytes'))}`,
  };
}

const server = await openBenchServer();
try {
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const pool = createPool(server.url, 2, 'leadintake-bench');
  await migrate(pool);
  progress('creating 200 workspaces with one key each');
  const keys = (await createTenants(pool, encryptionKey, 200, 'tenant')).map((t) => t.key);
  const load = loadGenerator();
  let run = 0;
  const results: string[] = [];
  for (let r = 1; r <= rounds; r++) {
    for (const build of builds) {
      const port = await freePort();
      const url = `http://127.0.0.1:${port}`;
      const metricsPort = await freePort();
      const env = {
        ...process.env, ...benchServiceEnv(), DATABASE_URL: server.url, LEADINTAKE_ENCRYPTION_KEY: encryptionKey,
        LOG_LEVEL: 'info', METRICS_PORT: String(metricsPort),
      };
      const service = startChild(`serve (${build})`, process.execPath, [...benchNodeFlags(), path.join(ROOT, build, 'cli', 'main.js'), 'serve', '--no-worker', '--port', String(port)], { cwd: ROOT, env });
      await waitForHttp200(`${url}/readyz`, service, 60_000);
      const pid = service.child.pid!;
      await load.run({ url, connections: 16, seconds: 3, workload: { kind: 'lead-post-multi', run: ++run, keys } });
      await settle(pool, { relayRunning: true });
      let peak = { rss: 0, line: 'no sample' };
      const sampler = setInterval(() => {
        const sample = memoryNow([`http://127.0.0.1:${metricsPort}`, url], pid);
        sample.then((m) => { if (m.rss > peak.rss) peak = m; }, () => {});
      }, 500);
      const res = await load.run({ url, connections: 64, seconds, workload: { kind: 'lead-post-multi', run: ++run, keys } });
      clearInterval(sampler);
      const hwm = procStatusMb(pid, 'VmHWM');
      await stopChild(service);
      const line = `round ${r}, ${build}: ${res.rps.toFixed(0)} req/s, p50 ${res.p50.toFixed(1)} ms, p99 ${res.p99.toFixed(1)} ms, non-2xx ${res.non2xx}, peak RSS (VmHWM) ${hwm?.toFixed(1) ?? '?'} MB\n  at the highest sample: ${peak.line}`;
      progress(line);
      results.push(line);
    }
  }
  console.log(results.join('\n'));
  await pool.end();
} finally {
  await stopAllChildren();
  await server.close();
}

// Node's flags for the service, set against set: `node bench/flag-variants.ts` (after `npm run
// build`) starts one `serve --no-worker` per flag set of BENCH_FLAG_SETS (sets separated by `|`,
// default the service's flags against them with `--max-semi-space-size=4`), all on one fresh
// database (embedded PostgreSQL in a temp folder, or BENCH_DATABASE_URL) with one workspace, its
// key and 10,000 seeded leads, and 200 workspaces with a key each. Then BENCH_ROUNDS rounds
// (default 4): in each, every set in turn (the order rotated every round, so a drift of the machine
// hits them alike) takes the loads of issue 2's and issue 15's checks — GET with one key at
// 16 connections, POST with one key at 64, GET with 200 keys at 64 — BENCH_SECONDS each (default
// 5). It prints each run's req/s and p99 and, per set, the summed rates, the worst p99 and the
// peak RSS (VmHWM: the whole run, every set under the same loads).
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { openBenchServer, seededId, seedLeads, settle } from './db.ts';
import { loadGenerator, type Workload } from './load.ts';
import { benchServiceEnv, freePort, procStatusMb, progress, SERVICE_NODE_FLAGS, startChild, stopAllChildren, stopChild, waitForHttp200 } from './procs.ts';
import { createTenants, seedTenantLeads } from './tenants.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 4);
const seconds = Number(process.env.BENCH_SECONDS ?? 5);
const SEEDED = 10_000;
const defaultSets = [SERVICE_NODE_FLAGS, SERVICE_NODE_FLAGS.map((f) => (f.startsWith('--max-semi-space-size=') ? '--max-semi-space-size=4' : f))];
const sets = process.env.BENCH_FLAG_SETS
  ? process.env.BENCH_FLAG_SETS.split('|').map((s) => s.trim().split(/\s+/).filter(Boolean))
  : defaultSets;

const server = await openBenchServer();
try {
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const pool = createPool(server.url, 2, 'leadintake-bench');
  await migrate(pool);
  progress('creating 201 workspaces and seeding leads');
  const [single] = await createTenants(pool, encryptionKey, 1, 'single');
  await seedLeads(pool, single!.workspaceId, SEEDED);
  const ids = Array.from({ length: SEEDED }, (_, i) => seededId(crypto.createHash('md5').update(String(i + 1)).digest('hex')));
  const many = await createTenants(pool, encryptionKey, 200, 'tenant');
  const pairs = await seedTenantLeads(pool, many, SEEDED / 200, 2 * SEEDED);
  const env = { ...process.env, ...benchServiceEnv(), DATABASE_URL: server.url, LEADINTAKE_ENCRYPTION_KEY: encryptionKey, LOG_LEVEL: 'info' };
  const services: Array<{ flags: string; url: string; child: ReturnType<typeof startChild>; runs: Map<string, { rps: number; p99: number }[]> }> = [];
  for (const flags of sets) {
    const port = await freePort();
    const child = startChild(`serve ${flags.join(' ')}`, process.execPath, [...flags, path.join(ROOT, 'dist', 'cli', 'main.js'), 'serve', '--no-worker', '--port', String(port)], { cwd: ROOT, env });
    services.push({ flags: flags.join(' '), url: `http://127.0.0.1:${port}`, child, runs: new Map<string, { rps: number; p99: number }[]>() });
  }
  for (const s of services) await waitForHttp200(`${s.url}/readyz`, s.child, 60_000);

  const load = loadGenerator();
  const headers = { authorization: `Bearer ${single!.key}`, 'content-type': 'application/json' };
  let postRun = 0;
  const loads: Array<{ name: string; connections: number; headers?: Record<string, string>; workload: () => Workload }> = [
    { name: 'GET one key, 16 conns', connections: 16, headers, workload: () => ({ kind: 'lead-get', ids }) },
    { name: 'POST one key, 64 conns', connections: 64, headers, workload: () => ({ kind: 'lead-post', run: ++postRun }) },
    { name: 'GET 200 keys, 64 conns', connections: 64, workload: () => ({ kind: 'lead-get-multi', pairs }) },
  ];
  progress('warm-up: 3 s of each load on each service');
  for (const s of services) for (const l of loads) await load.run({ url: s.url, connections: l.connections, seconds: 3, headers: l.headers, workload: l.workload() });

  for (let r = 0; r < rounds; r++) {
    const order = services.map((_, i) => services[(i + r) % services.length]!);
    for (const l of loads) {
      for (const s of order) {
        await settle(pool, { relayRunning: true });
        const res = await load.run({ url: s.url, connections: l.connections, seconds, headers: l.headers, workload: l.workload() });
        progress(`round ${r + 1}, ${l.name}, ${s.flags}: ${res.rps.toFixed(0)} req/s, p99 ${res.p99.toFixed(1)} ms, non-2xx ${res.non2xx + res.errors}`);
        s.runs.set(l.name, [...(s.runs.get(l.name) ?? []), { rps: res.rps, p99: res.p99 }]);
      }
    }
  }
  const lines: string[] = [];
  for (const s of services) {
    lines.push(`${s.flags}: peak RSS ${procStatusMb(s.child.child.pid!, 'VmHWM')?.toFixed(1)} MB`);
    for (const l of loads) {
      const runs = s.runs.get(l.name)!;
      const sum = runs.reduce((n, x) => n + x.rps, 0);
      lines.push(`  ${l.name}: Σ ${sum.toFixed(0)} req/s over ${runs.length} runs (${runs.map((x) => x.rps.toFixed(0)).join(', ')}); ` +
        `p99 ${runs.map((x) => x.p99.toFixed(1)).join(', ')} ms`);
    }
  }
  for (const s of services) await stopChild(s.child);
  console.log(lines.join('\n'));
  await pool.end();
} finally {
  await stopAllChildren();
  await server.close();
}

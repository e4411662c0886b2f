// POST with one key against POST with many, and what a change of the database does to both:
// `node bench/post-variants.ts` (after `npm run build`) starts one `serve --no-worker` on a fresh
// database (embedded PostgreSQL in a temp folder, or BENCH_DATABASE_URL) with one workspace and
// its key, and BENCH_TENANTS (default 200) workspaces with a key each; by default 10,000 leads are
// seeded in the one and 50 in each of the others, as `npm run bench` does (BENCH_SEED=0: none,
// like a new installation). Then, for each variant, BENCH_ROUNDS rounds (default 2) of POST with
// the one key and POST spread at random over the many, BENCH_SECONDS (default 8) at 64
// connections each after a 2-s warm-up, the database settled between runs as `npm run bench`
// does. It prints req/s, p50, p99, WAL bytes per request and the most-read tables (sequential
// scans), so that a scan of a whole table shows.
//
// BENCH_VARIANTS: variants separated by a line holding `---`, each `name=SQL`, the SQL run once
// before the variant's rounds (they accumulate: undo in a later variant what an earlier one did).
// Default `base=` (no change). Example (docs/PERFORMANCE.md, "2026-11-26"):
//   BENCH_VARIANTS=$'base=\n---\nrow=<SQL restoring the row trigger>' node bench/post-variants.ts
// BENCH_BUILD: the compiled build to serve (default dist).
import crypto from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { openBenchServer, seedLeads, settle } from './db.ts';
import { loadGenerator } from './load.ts';
import { benchNodeFlags, benchServiceEnv, freePort, progress, startChild, stopAllChildren, stopChild, waitForHttp200 } from './procs.ts';
import { createTenants, seedTenantLeads } from './tenants.ts';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const seconds = Number(process.env.BENCH_SECONDS ?? 8);
const tenantCount = Number(process.env.BENCH_TENANTS ?? 200);
const build = process.env.BENCH_BUILD ?? 'dist';
const variants = (process.env.BENCH_VARIANTS ?? 'base=').split(/\n---\n/).map((v) => {
  const i = v.indexOf('=');
  if (i < 1) throw new Error(`BENCH_VARIANTS: "${v.slice(0, 40)}" is not name=SQL`);
  return { name: v.slice(0, i), sql: v.slice(i + 1).trim() };
});

const server = await openBenchServer();
try {
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const pool = createPool(server.url, 2, 'leadintake-bench');
  await migrate(pool);
  const many = await createTenants(pool, encryptionKey, tenantCount, 'tenant');
  const [single] = await createTenants(pool, encryptionKey, 1, 'single');
  if (process.env.BENCH_SEED !== '0') {
    await seedLeads(pool, single!.workspaceId, 10_000);
    await seedTenantLeads(pool, many, 50, 20_000);
  }
  const loads = [['one key', [single!.key]], [`${tenantCount} keys`, many.map((t) => t.key)]] as const;
  const load = loadGenerator();
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const env = { ...process.env, ...benchServiceEnv(), DATABASE_URL: server.url, LEADINTAKE_ENCRYPTION_KEY: encryptionKey, LOG_LEVEL: 'info' };
  const service = startChild('serve', process.execPath, [...benchNodeFlags(), path.join(ROOT, build, 'cli', 'main.js'), 'serve', '--no-worker', '--port', String(port)], { cwd: ROOT, env });
  await waitForHttp200(`${url}/readyz`, service, 60_000);
  let run = 0;
  const results: string[] = [];
  for (const v of variants) {
    if (v.sql) await pool.query(v.sql);
    for (let r = 1; r <= rounds; r++) {
      for (const [label, keys] of loads) {
        await load.run({ url, connections: 16, seconds: 2, workload: { kind: 'lead-post-multi', run: ++run, keys } });
        await settle(pool, { relayRunning: true });
        const { rows: [before] } = await pool.query('SELECT pg_current_wal_lsn() AS lsn');
        const res = await load.run({ url, connections: 64, seconds, workload: { kind: 'lead-post-multi', run: ++run, keys } });
        const { rows: [wal] } = await pool.query('SELECT pg_current_wal_lsn() - $1::pg_lsn AS bytes', [before.lsn]);
        const { rows: scans } = await pool.query(
          `SELECT relname, seq_scan, seq_tup_read FROM pg_stat_user_tables WHERE seq_tup_read > 0 ORDER BY seq_tup_read DESC LIMIT 3`);
        const line = `${v.name}, round ${r}, ${label}: ${res.rps.toFixed(0)} req/s, p50 ${res.p50.toFixed(1)} ms, p99 ${res.p99.toFixed(1)} ms, ` +
          `WAL ${(Number(wal.bytes) / (res.rps * seconds)).toFixed(0)} B/req, non-2xx ${res.non2xx}; rows read by scans so far: ` +
          scans.map((s) => `${s.relname} ${s.seq_tup_read} (${s.seq_scan} scans)`).join(', ');
        progress(line);
        results.push(line);
      }
    }
  }
  await stopChild(service);
  console.log(results.join('\n'));
  await pool.end();
} finally {
  await stopAllChildren();
  await server.close();
}

// PostgreSQL's cost of the public API's batch statement alone (src/leads/lead-batch-statement.ts),
// without HTTP or a second process: `node bench/lead-batch-cost.ts` sends BENCH_BATCHES (default
// 1000) batches of BENCH_BATCH_SIZE (default 32) new WhatsApp leads, one statement at a time on
// one connection, and reads that backend's CPU time from /proc, for three kinds of batch taking
// turns for BENCH_ROUNDS rounds (default 3; the order reversed every other round):
//   one     — every lead of one workspace, counted on its one key (one counter row per batch)
//   multi   — each lead of one of 200 workspaces at random, counted on its own key
//   leased  — the same spread, every request admitted from a lease (no counter row written)
// After a warm-up of each kind. One backend, one statement at a time: a far steadier figure than CPU per request under HTTP
// load, and it isolates what the schema costs. BENCH_PRE_SQL: statements (`;`-separated) run
// after the setup, to measure a variant of the schema, e.g. `DROP INDEX leads_inbox_activity`.
// Embedded PostgreSQL in a temp folder (or BENCH_DATABASE_URL), seeded like `npm run bench`.
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { BatchOp, KeyCount } from '../src/auth/rate-limiter.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { leadBatchStatement, type LeadOp } from '../src/leads/lead-batch-statement.ts';
import type { NewLead } from '../src/leads/lead-queries.ts';
import { openBenchServer, seedLeads } from './db.ts';
import { progress } from './procs.ts';
import { createTenants, seedTenantLeads } from './tenants.ts';

const BATCHES = Number(process.env.BENCH_BATCHES ?? 1000);
const SIZE = Number(process.env.BENCH_BATCH_SIZE ?? 32);
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);

/** CPU seconds (user + system) of a process, from /proc. */
function cpuSeconds(pid: number): number {
  const f = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

const server = await openBenchServer();
if (!server.embedded) progress('BENCH_DATABASE_URL: the backend must be on this machine for its CPU time to be read');
try {
  const pool = createPool(server.url, 1, 'leadintake-bench');
  await migrate(pool);
  const encryptionKey = crypto.randomBytes(32).toString('hex');
  const tenants = await createTenants(pool, encryptionKey, 200, 'tenant');
  const [single] = await createTenants(pool, encryptionKey, 1, 'single');
  await seedLeads(pool, single!.workspaceId, 10_000);
  await seedTenantLeads(pool, tenants, 50, 20_000);
  const keyOf = new Map((await pool.query('SELECT id, workspace_id FROM api_keys')).rows.map((r) => [r.workspace_id as string, r.id as string]));
  for (const sql of (process.env.BENCH_PRE_SQL ?? '').split(';').filter((s) => s.trim())) {
    progress(`BENCH_PRE_SQL: ${sql.trim()}`);
    await pool.query(sql);
  }
  await pool.query('VACUUM ANALYZE');
  const backend = (await pool.query('SELECT pg_backend_pid() AS pid')).rows[0].pid as number;

  let n = 0;
  const lead = (workspaceId: string): NewLead => {
    const phone = `+4930${String(++n).padStart(10, '0')}`;
    const apiKeyId = keyOf.get(workspaceId)!;
    return {
      workspaceId, name: `Lead ${n}`, phone, phoneNormalized: phone, email: `lead${n}@example.com`, goal: null, consentIp: '127.0.0.1',
      consentUserAgent: 'bench', metadata: {}, formResponses: {}, createdEvent: { channel: 'whatsapp', apiKeyId }, livemode: true, apiKeyId,
    };
  };
  const spread = () => Array.from({ length: SIZE }, () => tenants[Math.floor(Math.random() * tenants.length)]!.workspaceId);
  const batchOf: Record<string, () => { keys: KeyCount[]; ops: BatchOp<LeadOp>[] }> = {
    one: () => ({
      keys: [{ apiKeyId: keyOf.get(single!.workspaceId)!, size: SIZE, limit: 1e9 }],
      ops: Array.from({ length: SIZE }, (_, i) => ({ key: 0, ord: i + 1, op: { kind: 'insert', lead: lead(single!.workspaceId) } })),
    }),
    multi: () => {
      const ws = spread();
      const ids = [...new Set(ws.map((w) => keyOf.get(w)!))].sort();
      const keys = ids.map((apiKeyId) => ({ apiKeyId, size: 0, limit: 1e9 }));
      const ops = ws.map((w) => {
        const key = ids.indexOf(keyOf.get(w)!);
        return { key, ord: ++keys[key]!.size, op: { kind: 'insert' as const, lead: lead(w) } };
      });
      return { keys, ops };
    },
    leased: () => ({ keys: [], ops: spread().map((w) => ({ key: -1, ord: 0, op: { kind: 'insert' as const, lead: lead(w) } })) }),
  };
  const kinds = Object.keys(batchOf);
  // A warm-up of each kind first: the first change of a page after a checkpoint writes the whole
  // page to the WAL, and 200 workspaces have many more such pages than one.
  for (const kind of kinds) {
    const window = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
    for (let i = 0; i < BATCHES / 4; i++) {
      const b = batchOf[kind]!();
      await leadBatchStatement.run(pool, window, b.keys, b.ops);
    }
  }
  const perLead: Record<string, number[]> = Object.fromEntries(kinds.map((k) => [k, []]));
  for (let r = 0; r < ROUNDS; r++) {
    for (const kind of r % 2 ? [...kinds].reverse() : kinds) {
      const batches = Array.from({ length: BATCHES }, () => batchOf[kind]!());
      const window = new Date(Math.floor(Date.now() / 3_600_000) * 3_600_000);
      const before = cpuSeconds(backend);
      for (const b of batches) await leadBatchStatement.run(pool, window, b.keys, b.ops);
      const us = ((cpuSeconds(backend) - before) * 1e6) / (BATCHES * SIZE);
      perLead[kind]!.push(us);
      progress(`round ${r + 1}, ${kind}: ${us.toFixed(1)} µs of the backend's CPU per lead`);
      await pool.query('DELETE FROM outbox');
    }
  }
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  console.log(`backend CPU per lead, mean of ${ROUNDS} rounds of ${BATCHES} batches of ${SIZE}:`);
  for (const kind of kinds) console.log(`  ${kind}: ${mean(perLead[kind]!).toFixed(1)} µs (rounds ${perLead[kind]!.map((x) => x.toFixed(1)).join(', ')}; ×${(mean(perLead[kind]!) / mean(perLead.one!)).toFixed(2)} of one)`);
  await pool.end();
} finally {
  await server.close();
}

// The benchmark's PostgreSQL: the embedded server in a temporary folder (or the server of
// BENCH_DATABASE_URL), a fresh `leadintake_bench` database on it, the seeded leads, and the
// settling between configurations.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ensureEmbeddedPostgres } from '../../src/db/embedded.ts';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { progress, sleep } from './procs.ts';

export const BENCH_DB = 'leadintake_bench';
/** Seeded leads have phones '+1444' + 8 digits; everything else is benchmark traffic. */
const SEED_PHONE_PREFIX = '+1444';

export interface BenchServer {
  /** URL of the `leadintake_bench` database. */
  url: string;
  embedded: boolean;
  /** Data folder of the embedded server (for CPU accounting), null for BENCH_DATABASE_URL. */
  pgDataDir: string | null;
  close(): Promise<void>;
}

export function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

export async function openBenchServer(): Promise<BenchServer> {
  const external = process.env.BENCH_DATABASE_URL?.trim();
  let tmpDir: string | null = null;
  let stopEmbedded: () => Promise<void> = async () => {};
  let serverUrl: string;
  if (external) {
    serverUrl = external;
    progress(`using BENCH_DATABASE_URL server ${new URL(external).host}`);
  } else {
    tmpDir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-bench-'));
    progress(`starting embedded PostgreSQL in ${tmpDir}`);
    const pg = await ensureEmbeddedPostgres(tmpDir, createLogger('warn', process.stderr));
    stopEmbedded = pg.stop;
    // The superuser: the benchmark's own cluster gets server settings (preallocateWal) and a fresh database.
    serverUrl = pg.adminUrl;
  }
  const removeTmp = () => {
    if (tmpDir) fs.rmSync(tmpDir, { recursive: true, force: true });
  };
  try {
    const admin = createPool(serverUrl, 1, 'leadintake-bench');
    try {
      await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`);
      await admin.query(`CREATE DATABASE ${BENCH_DB}`);
      if (!external) await preallocateWal(admin);
    } finally {
      await admin.end();
    }
  } catch (err) {
    await stopEmbedded();
    removeTmp();
    throw err;
  }
  return {
    url: withDatabase(serverUrl, BENCH_DB),
    embedded: !external,
    pgDataDir: tmpDir ? path.join(tmpDir, 'pg') : null,
    close: async () => {
      if (external) {
        const admin = createPool(serverUrl, 1, 'leadintake-bench');
        await admin.query(`DROP DATABASE IF EXISTS ${BENCH_DB} WITH (FORCE)`).finally(() => admin.end());
      } else {
        progress('stopping embedded PostgreSQL');
        await stopEmbedded();
        removeTmp();
      }
    },
  };
}

/**
 * A fresh cluster has no WAL segments to reuse: every 16 MB of WAL, the committing statement
 * creates and zero-fills a new segment file (about 50 ms here, wait events WalInitWrite and
 * WalInitSync), which set the p99 of every write run. A server that has been running recycles
 * its old segments at each checkpoint instead. So the benchmark's own cluster keeps 1 GB of
 * recycled segments and writes ~400 MB of WAL once before any run: pgbench and the service
 * then both write into recycled segments, as on a server in service (docs/PERFORMANCE.md, "Reading the figures").
 */
async function preallocateWal(admin: Pool): Promise<void> {
  progress('pre-allocating WAL segments (min_wal_size 1GB, ~400 MB of WAL, CHECKPOINT)');
  await admin.query(`ALTER SYSTEM SET min_wal_size = '1GB'`);
  await admin.query(`ALTER SYSTEM SET max_wal_size = '2GB'`);
  await admin.query('SELECT pg_reload_conf()');
  await admin.query(
    `CREATE TABLE bench_wal_fill AS SELECT g, repeat('x', 1000) AS pad FROM generate_series(1, 350000) g`,
  );
  await admin.query('DROP TABLE bench_wal_fill');
  await admin.query('CHECKPOINT');
}

/** Inserts `count` leads of the workspace into the real table, with ids md5(n)::uuid. */
export async function seedLeads(pool: Pool, workspaceId: string, count: number): Promise<void> {
  await pool.query(
    `INSERT INTO leads (id, workspace_id, name, phone, phone_normalized, email, goal, consented_at,
                        consent_ip, metadata, form_responses)
     SELECT md5(n::text)::uuid, $1, 'Seed Lead ' || n, '${SEED_PHONE_PREFIX}' || lpad(n::text, 8, '0'),
            '${SEED_PHONE_PREFIX}' || lpad(n::text, 8, '0'), 'seed' || n || '@example.com', 'Learn more',
            now(), '127.0.0.1', jsonb_build_object('source', 'bench', 'n', n), '{"How did you hear of us?":"Search"}'
       FROM generate_series(1, $2::int) AS n`,
    [workspaceId, count],
  );
}

/** The id the service knows for seeded lead n (same as PostgreSQL's md5(n::text)::uuid). */
export function seededId(md5hex: string): string {
  const part = (from: number, to: number) => md5hex.slice(from, to);
  return `${part(0, 8)}-${part(8, 12)}-${part(12, 16)}-${part(16, 20)}-${part(20, 32)}`;
}

export interface DbCounters {
  walBytes: number;
  /** Next transaction id: the number of transactions that wrote something. */
  xid: number;
}

/** WAL position and transaction-id counter; exact and instant, unlike the cumulative statistics. */
export async function dbCounters(pool: Pool): Promise<DbCounters> {
  const { rows } = await pool.query(
    `SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '0/0')::float8 AS wal,
            pg_snapshot_xmax(pg_current_snapshot())::text::float8 AS xid`,
  );
  return { walBytes: rows[0].wal, xid: rows[0].xid };
}

export async function outboxBacklog(pool: Pool): Promise<number> {
  const { rows } = await pool.query('SELECT count(*)::int AS n FROM outbox');
  return rows[0].n;
}

/**
 * Brings the database to the same state before every configuration: waits (bounded) for the
 * service's relay to empty the outbox, removes all non-seed leads and outbox rows, then
 * VACUUM ANALYZE and CHECKPOINT.
 */
export async function settle(pool: Pool, opts: { relayRunning: boolean }): Promise<void> {
  if (opts.relayRunning) {
    const deadline = Date.now() + 30_000;
    while ((await outboxBacklog(pool)) > 0 && Date.now() < deadline) await sleep(250);
  }
  await pool.query(`DELETE FROM leads WHERE phone_normalized NOT LIKE '${SEED_PHONE_PREFIX}%'`);
  await pool.query('DELETE FROM outbox');
  await pool.query('VACUUM ANALYZE leads, lead_events, outbox, rate_limit_counters');
  // CHECKPOINT needs superuser or pg_checkpoint; an external server may not grant it.
  await pool.query('CHECKPOINT').catch((err: Error) => progress(`CHECKPOINT skipped: ${err.message}`));
  await sleep(1_000);
}

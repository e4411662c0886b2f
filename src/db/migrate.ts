import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../shared/logger.ts';
import type { Pool, PoolClient } from './pool.ts';

const MIGRATIONS_DIR = fileURLToPath(new URL('../../migrations/', import.meta.url));
// Any constant works; it only has to be the same in every process of ours.
const MIGRATION_LOCK = 7_413_220_001;

export interface Migration {
  version: number;
  name: string;
  sql: string;
  /** Data changes that need our code (not expressible in SQL), run after `sql` in its transaction. */
  dataStep?: (db: PoolClient, log?: Logger) => Promise<unknown>;
}

export type DataSteps = Record<number, NonNullable<Migration['dataStep']>>;

// A data step is feature code (migration 007's is src/leads/phone-renormalization.ts), and db/ sits
// below the feature folders, so the caller hands the steps in (src/runtime.ts). Each migration
// with a step names the table the step rewrites: on a database where that table is empty (every
// fresh one: the test template, the benches) the step has nothing to do and may be absent;
// anywhere else `migrate` refuses to apply the migration without it, so no caller skips it by
// forgetting to pass it.
const DATA_STEP_TABLES: Record<number, string> = {
  7: 'leads',
};

export function readMigrations(dataSteps: DataSteps = {}, dir = MIGRATIONS_DIR): Migration[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /^\d{3,}_[\w-]+\.sql$/.test(f))
    .sort()
    .map((file) => ({
      version: Number(file.split('_')[0]),
      name: file.replace(/\.sql$/, ''),
      sql: fs.readFileSync(path.join(dir, file), 'utf8'),
    }))
    .map((m) => (dataSteps[m.version] ? { ...m, dataStep: dataSteps[m.version] } : m));
}

async function assertNoDataStepNeeded(client: PoolClient, m: Migration): Promise<void> {
  const table = DATA_STEP_TABLES[m.version];
  if (table === undefined) return;
  const { rowCount } = await client.query(`SELECT 1 FROM ${table} LIMIT 1`);
  if (rowCount)
    throw new Error(`its data step was not passed (readMigrations(dataSteps)) and ${table} has rows it must rewrite`);
}

/**
 * Applies the numbered, forward-only migrations that are not yet applied, each in its own
 * transaction. A session advisory lock makes concurrent starts wait for each other instead
 * of applying the same file twice. Returns the names applied by this call.
 */
export async function migrate(pool: Pool, migrations = readMigrations(), log?: Logger): Promise<string[]> {
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
    const done = new Set((await client.query('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    for (const m of migrations) {
      if (done.has(m.version)) continue;
      await client.query('BEGIN');
      try {
        await client.query(m.sql);
        if (m.dataStep) await m.dataStep(client, log);
        else await assertNoDataStepNeeded(client, m);
        await client.query('INSERT INTO schema_migrations (version, name) VALUES ($1, $2)', [m.version, m.name]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => {});
        throw new Error(`Migration ${m.name} failed: ${(err as Error).message}`);
      }
      applied.push(m.name);
    }
  } finally {
    // An unlock that fails means a lost connection (which freed the lock): the pool drops it.
    const broken = await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK]).then(
      () => undefined,
      (e: Error) => e,
    );
    client.release(broken);
  }
  return applied;
}

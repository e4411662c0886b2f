import type { Config } from './config/config.ts';
import { ensureEmbeddedPostgres } from './db/embedded.ts';
import { migrate } from './db/migrate.ts';
import { createPool, type Pool } from './db/pool.ts';
import type { Logger } from './shared/logger.ts';
import { resolveEncryptionKey, SecretBox } from './workspaces/secret-box.ts';
import { WorkspaceService } from './workspaces/workspace-service.ts';

export interface Database {
  url: string;
  pool: Pool;
  close(): Promise<void>;
}

/** DATABASE_URL when set; otherwise the embedded PostgreSQL in LEADINTAKE_DATA_DIR. Migrated. */
export async function openDatabase(config: Config, log: Logger, opts: { poolMax?: number } = {}): Promise<Database> {
  const embedded = config.DATABASE_URL ? null : await ensureEmbeddedPostgres(config.LEADINTAKE_DATA_DIR, log);
  const url = config.DATABASE_URL ?? embedded!.url;
  const pool = createPool(url, opts.poolMax ?? config.DB_POOL_MAX);
  try {
    const applied = await migrate(pool);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
  } catch (err) {
    await pool.end();
    await embedded?.stop();
    throw err;
  }
  return {
    url,
    pool,
    close: async () => {
      await pool.end();
      await embedded?.stop();
    },
  };
}

export function workspaceService(config: Config, pool: Pool): WorkspaceService {
  const key = resolveEncryptionKey({
    envKey: config.LEADINTAKE_ENCRYPTION_KEY,
    databaseUrl: config.DATABASE_URL,
    dataDir: config.LEADINTAKE_DATA_DIR,
  });
  return new WorkspaceService(pool, new SecretBox(key), config.DEFAULT_HOURLY_LIMIT);
}

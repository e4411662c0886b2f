import type { Config } from './config/config.ts';
import { ensureEmbeddedPostgres } from './db/embedded.ts';
import { migrate, readMigrations, type DataSteps } from './db/migrate.ts';
import { createPool, type Pool } from './db/pool.ts';
import { ALL_QUEUES } from './jobs/queues.ts';
import { renormalizeLeadPhones } from './leads/phone-renormalization.ts';
import { OperatorService } from './operators/operator-service.ts';
import { scryptParams } from './operators/password.ts';
import type { Clock } from './shared/clock.ts';
import type { Logger } from './shared/logger.ts';
import { WebhookEndpointService } from './webhooks/webhook-endpoint-service.ts';
import { resolveEncryptionKey, SecretBox } from './workspaces/secret-box.ts';
import { WorkspaceService } from './workspaces/workspace-service.ts';

const POOL_NAME = 'leadintake';

/** The migrations' data steps, by version: feature code that db/migrate.ts is handed, not imports. */
export const MIGRATION_DATA_STEPS: DataSteps = { 7: renormalizeLeadPhones };

export interface Database {
  url: string;
  pool: Pool;
  close(): Promise<void>;
}

/**
 * DATABASE_URL when set; otherwise the embedded PostgreSQL in LEADINTAKE_DATA_DIR, as its service
 * role (no superuser; it owns the database). Migrated: our SQL migrations, then pg-boss's schema
 * and our job queues.
 */
export async function openDatabase(
  config: Config,
  log: Logger,
  opts: { poolMax?: number; migrate?: boolean } = {},
): Promise<Database> {
  const embedded = config.DATABASE_URL ? null : await ensureEmbeddedPostgres(config.LEADINTAKE_DATA_DIR, log);
  const url = config.DATABASE_URL ?? embedded!.url;
  const pool = createPool(url, opts.poolMax ?? config.DB_POOL_MAX, POOL_NAME, log);
  try {
    // MIGRATE_ON_START=false (serve, worker): a `leadintake migrate` job does it; /readyz waits for it.
    if (opts.migrate === false) return { url, pool, close: closer(pool, embedded) };
    const applied = await migrate(pool, readMigrations(MIGRATION_DATA_STEPS), log);
    if (applied.length > 0) log.info({ applied }, 'migrations applied');
    if (!(await jobQueuesExist(pool))) {
      // Loaded only when needed: most commands find the queues and never start pg-boss.
      const { installJobQueues } = await import('./jobs/boss.ts');
      await installJobQueues(url, { heartbeatSeconds: config.JOB_HEARTBEAT_SECONDS });
    }
  } catch (err) {
    await pool.end();
    await embedded?.stop();
    throw err;
  }
  return { url, pool, close: closer(pool, embedded) };
}

function closer(pool: Pool, embedded: { stop(): Promise<void> } | null): () => Promise<void> {
  return async () => {
    // The embedded PostgreSQL stops at once ("fast" shutdown) and cuts any connection still
    // open, whose owner then logs an error: pg-boss's pool closes its connections without
    // waiting for them. Ours is the last pool to close, so it waits (briefly) to be alone.
    if (embedded) await untilLastConnection(pool).catch(() => {});
    await pool.end();
    await embedded?.stop();
  };
}

/** The installation's key: LEADINTAKE_ENCRYPTION_KEY, or generated into the embedded data folder. */
export function installationKey(config: Config): Buffer {
  return resolveEncryptionKey({
    envKey: config.LEADINTAKE_ENCRYPTION_KEY,
    databaseUrl: config.DATABASE_URL,
    dataDir: config.LEADINTAKE_DATA_DIR,
  });
}

/**
 * The secrets and the services on them that the CLI commands share with the processes (src/composition.ts builds on
 * it).
 */
export interface Core {
  config: Config;
  log: Logger;
  clock: Clock;
  pool: Pool;
  secrets: SecretBox;
  workspaces: WorkspaceService;
  operators: OperatorService;
  webhookEndpoints: WebhookEndpointService;
}

export function composeCore(
  config: Config,
  log: Logger,
  clock: Clock,
  pool: Pool,
  key = installationKey(config),
): Core {
  const secrets = new SecretBox(key);
  return {
    config,
    log,
    clock,
    pool,
    secrets,
    workspaces: new WorkspaceService(pool, secrets, config.DEFAULT_HOURLY_LIMIT),
    operators: operatorService(config, pool, clock),
    webhookEndpoints: new WebhookEndpointService(
      pool,
      secrets,
      clock,
      { allowPrivateNetworks: config.EGRESS_ALLOW_PRIVATE_NETWORKS },
      config.MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE,
    ),
  };
}

export function operatorService(config: Config, pool: Pool, clock: Clock): OperatorService {
  return new OperatorService({
    pool,
    clock,
    idleMs: config.SESSION_IDLE_MINUTES * 60_000,
    maxAgeMs: config.SESSION_MAX_HOURS * 3_600_000,
    throttle: {
      windowMs: config.SIGN_IN_WINDOW_MINUTES * 60_000,
      maxPerAccount: config.SIGN_IN_MAX_FAILURES,
      maxPerIp: config.SIGN_IN_MAX_FAILURES_PER_IP,
    },
    password: scryptParams(config.PASSWORD_SCRYPT_LOG2_N),
  });
}

/** Whether pg-boss's schema and our queues are there (one cheap look, before any pg-boss start). */
async function jobQueuesExist(pool: Pool): Promise<boolean> {
  const { rows } = await pool.query(`SELECT to_regclass('pgboss.queue') IS NOT NULL AS installed`);
  if (!rows[0].installed) return false;
  // A queue added by an upgrade (webhook-delivery) is created by the first command after it.
  const found = await pool.query('SELECT count(*)::int AS n FROM pgboss.queue WHERE name = ANY($1)', [[...ALL_QUEUES]]);
  return found.rows[0].n === ALL_QUEUES.length;
}

/** Waits, at most about two seconds, until the connections of this database's user are this pool's only. */
async function untilLastConnection(pool: Pool): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND usename = current_user AND application_name <> $1`,
      [POOL_NAME],
    );
    if (rows[0].n === 0) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

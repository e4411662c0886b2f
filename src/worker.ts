import type { PgBoss } from 'pg-boss';
import type { Config } from './config/config.ts';
import { defaultConversationProviders, type ConversationProviders } from './conversation/conversation-providers.ts';
import { TurnEngine } from './conversation/turn-engine.ts';
import { TurnWorker } from './conversation/turn-worker.ts';
import { createPool, type Pool } from './db/pool.ts';
import { startBoss } from './jobs/boss.ts';
import { OutboxRelay } from './jobs/outbox-relay.ts';
import { openDatabase, workspaceService } from './runtime.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import type { Logger } from './shared/logger.ts';
import type { WorkspaceService } from './workspaces/workspace-service.ts';

export interface JobHandlerDeps {
  config: Config;
  /** Turns hold a connection each for their whole run: give them a pool apart from the API's. */
  pool: Pool;
  boss: PgBoss;
  log: Logger;
  workspaces: WorkspaceService;
  clock?: Clock;
  providers?: ConversationProviders;
}

/** The job handlers on an open database and pg-boss; `serve` runs them in-process, `worker` alone. */
export async function startJobHandlers(d: JobHandlerDeps): Promise<TurnWorker> {
  const engine = new TurnEngine({
    pool: d.pool,
    log: d.log,
    clock: d.clock ?? systemClock,
    workspaces: d.workspaces,
    providers: d.providers ?? defaultConversationProviders(d.config),
    ...(d.config.OPENAI_API_KEY ? { globalLlmKey: d.config.OPENAI_API_KEY } : {}),
  });
  const worker = new TurnWorker({ boss: d.boss, engine, log: d.log, concurrency: d.config.WORKER_CONCURRENCY, pollSeconds: d.config.JOB_POLL_SECONDS });
  await worker.start();
  return worker;
}

/**
 * A pool sized for WORKER_CONCURRENCY turns: each holds one connection (its lead lock, which also
 * runs its queries), plus a few for the agent's tools.
 */
export function turnPool(url: string, config: Config): Pool {
  return createPool(url, config.WORKER_CONCURRENCY + 2, 'leadintake-worker');
}

export interface RunningWorker {
  close(): Promise<void>;
}

/**
 * `leadintake worker`: the job handlers without HTTP. Also runs an outbox relay, the safety net
 * that moves rows an API process committed but did not relay before it died.
 */
export async function worker(config: Config, log: Logger): Promise<RunningWorker> {
  const db = await openDatabase(config, log, { poolMax: 4 });
  const boss = await startBoss(db.url, log, { heartbeatSeconds: config.JOB_HEARTBEAT_SECONDS, monitorIntervalSeconds: config.JOB_MONITOR_SECONDS });
  const relay = new OutboxRelay({ pool: db.pool, boss, log, pollMs: config.OUTBOX_POLL_MS });
  relay.start();
  const pool = turnPool(db.url, config);
  await startJobHandlers({ config, pool, boss, log, workspaces: workspaceService(config, db.pool) });
  log.info({ concurrency: config.WORKER_CONCURRENCY }, 'leadintake worker running');
  return {
    close: async () => {
      await relay.stop();
      // Graceful: running turns get the time to finish; those still running after it are failed
      // (and so retried elsewhere) and their abort signal fires.
      await boss.stop({ graceful: true, timeout: config.SHUTDOWN_GRACE_SECONDS * 1000 });
      await pool.end();
      await db.close();
    },
  };
}

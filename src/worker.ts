import type { PgBoss } from 'pg-boss';
import type { Config } from './config/config.ts';
import { defaultConversationProviders, type ConversationProviders } from './whatsapp/turn-providers.ts';
import { TurnEngine } from './whatsapp/turn-engine.ts';
import { TurnWorker } from './whatsapp/turn-worker.ts';
import { ModelGate } from './agent/model-gate.ts';
import { createPool, type Pool } from './db/pool.ts';
import { startBoss } from './jobs/boss.ts';
import { startMetricsServer } from './metrics/metrics-routes.ts';
import { OutboxRelay } from './jobs/outbox-relay.ts';
import { encryptionKey, openDatabase, workspaceService } from './runtime.ts';
import { lazySandbox, type Sandbox } from './sandbox/sandbox.ts';
import { systemClock, type Clock } from './shared/clock.ts';
import type { Logger } from './shared/logger.ts';
import type { WorkspaceService } from './workspaces/workspace-service.ts';
import { SecretBox } from './workspaces/secret-box.ts';
import { WebhookDeliveryService } from './webhooks/webhook-delivery-service.ts';
import { startWebhookWorker } from './webhooks/webhook-worker.ts';

export interface JobHandlerDeps {
  config: Config;
  /** Turns hold a connection each for their whole run: give them a pool apart from the API's. */
  pool: Pool;
  boss: PgBoss;
  log: Logger;
  workspaces: WorkspaceService;
  clock?: Clock;
  providers?: ConversationProviders;
  /** Sandbox leads' simulated providers. */
  sandbox: Sandbox;
  /** `serve`: whether its public API is under pressure (turns then run one at a time, TurnWorkerOptions.yieldToApi). */
  apiUnderPressure?: () => boolean;
}

/** The job handlers on an open database and pg-boss; `serve` runs them in-process, `worker` alone. */
export async function startJobHandlers(d: JobHandlerDeps): Promise<TurnWorker> {
  const engine = new TurnEngine({
    pool: d.pool,
    log: d.log,
    clock: d.clock ?? systemClock,
    workspaces: d.workspaces,
    providers: d.providers ?? defaultConversationProviders(d.config),
    sandbox: d.sandbox,
    maxAgentTurns: d.config.MAX_AGENT_TURNS_PER_LEAD,
    modelGate: modelGate(d.config),
    maxModelWaitMs: d.config.LLM_RETRY_AFTER_MAX_SECONDS * 1000,
    ...(d.config.OPENAI_API_KEY ? { globalLlmKey: d.config.OPENAI_API_KEY } : {}),
  });
  const worker = new TurnWorker({
    boss: d.boss, engine, log: d.log, concurrency: d.config.WORKER_CONCURRENCY, batchSize: d.config.WORKER_BATCH_SIZE, pollSeconds: d.config.JOB_POLL_SECONDS,
    ...(d.apiUnderPressure ? { yieldToApi: d.apiUnderPressure } : {}),
  });
  await worker.start();
  await startWebhookWorker({ boss: d.boss, service: webhookDeliveryService(d), log: d.log, pollSeconds: d.config.JOB_POLL_SECONDS });
  return worker;
}

/**
 * The per-workspace limits of model calls (src/agent/model-gate.ts) from the config. Wall-clock
 * time, like the pg-boss schedule its refusals are rescheduled on.
 */
export function modelGate(config: Config): ModelGate {
  return new ModelGate({
    maxConcurrent: config.LLM_MAX_CONCURRENCY_PER_WORKSPACE ?? Math.max(1, Math.floor(config.WORKER_CONCURRENCY / 2)),
    failureThreshold: config.LLM_BREAKER_FAILURES,
    cooldownMs: config.LLM_BREAKER_COOLDOWN_SECONDS * 1000,
    now: Date.now,
  });
}

/** The outbound webhooks' sender (docs/OUTBOUND-WEBHOOKS.md). */
export function webhookDeliveryService(d: Pick<JobHandlerDeps, 'config' | 'pool' | 'boss' | 'log' | 'clock'>): WebhookDeliveryService {
  return new WebhookDeliveryService({
    pool: d.pool,
    boss: d.boss,
    log: d.log,
    clock: d.clock ?? systemClock,
    secrets: new SecretBox(encryptionKey(d.config)),
    timeoutMs: d.config.WEBHOOK_TIMEOUT_MS,
    allowPrivateNetworks: d.config.EGRESS_ALLOW_PRIVATE_NETWORKS,
  });
}

/**
 * A pool sized for WORKER_CONCURRENCY turns: each holds one connection (its lead lock, which also
 * runs its queries), plus a few for the agent's tools.
 */
export function turnPool(url: string, config: Config, log: Logger): Pool {
  return createPool(url, config.WORKER_CONCURRENCY + 2, 'leadintake-worker', log);
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
  const pool = turnPool(db.url, config, log);
  const sandbox = lazySandbox({ config, log, secret: encryptionKey(config) }, () => import('./sandbox/sandbox-providers.ts'));
  await startJobHandlers({ config, pool, boss, log, workspaces: workspaceService(config, db.pool), sandbox });
  const metrics = config.METRICS_PORT === undefined ? null : await startMetricsServer({ host: config.HOST, port: config.METRICS_PORT, pool: db.pool, log });
  log.info({ concurrency: config.WORKER_CONCURRENCY, metrics: metrics?.address ?? null }, 'leadintake worker running');
  return {
    close: async () => {
      await metrics?.close();
      await relay.stop();
      // Graceful: running turns get the time to finish; those still running after it are failed
      // (and so retried elsewhere) and their abort signal fires.
      await boss.stop({ graceful: true, timeout: config.SHUTDOWN_GRACE_SECONDS * 1000 });
      await pool.end();
      await sandbox.close();
      await db.close();
    },
  };
}

import type { Config } from './config/config.ts';
import { compose, jobServices, type Composition } from './composition.ts';
import { TurnWorker } from './whatsapp/turn-worker.ts';
import { createPool, type Pool } from './db/pool.ts';
import { startBoss } from './jobs/boss.ts';
import { startMetricsServer } from './metrics/metrics-routes.ts';
import { openDatabase } from './runtime.ts';
import { systemClock } from './shared/clock.ts';
import type { Logger } from './shared/logger.ts';
import { startWebhookWorker } from './webhooks/webhook-worker.ts';
import { startContactAttemptWorker } from './contact-plan/contact-attempt-worker.ts';
import { CallSweep, startCallSweep } from './voice/call-sweep.ts';
import { startMetaLeadRetryWorker } from './intake/meta/meta-lead-retry.ts';

export interface JobHandlerOptions {
  /** `serve`: whether its public API is under pressure (turns then run one at a time, TurnWorkerOptions.yieldToApi). */
  apiUnderPressure?: () => boolean;
}

/**
 * The job handlers on an open database and pg-boss; `serve` runs them in-process, `worker` alone.
 * `pool`: the turns' own (turnPool): each holds a connection for its whole run, apart from the API's.
 */
export async function startJobHandlers(c: Composition, pool: Pool, opts: JobHandlerOptions = {}): Promise<TurnWorker> {
  const { engine, webhookDelivery } = jobServices(c, pool);
  const { config, boss, log } = c;
  const worker = new TurnWorker({
    boss,
    engine,
    log,
    concurrency: config.WORKER_CONCURRENCY,
    batchSize: config.WORKER_BATCH_SIZE,
    pollSeconds: config.JOB_POLL_SECONDS,
    ...(opts.apiUnderPressure ? { yieldToApi: opts.apiUnderPressure } : {}),
  });
  await worker.start();
  await startWebhookWorker({ boss, service: webhookDelivery, log, pollSeconds: config.JOB_POLL_SECONDS });
  await startContactAttemptWorker({ boss, service: c.contactPlans, log, pollSeconds: config.JOB_POLL_SECONDS });
  await startMetaLeadRetryWorker({ boss, run: c.metaIntake.retry, log, pollSeconds: config.JOB_POLL_SECONDS });
  // Calls whose end never came, and held calls to cancel (docs/VOICE.md): every minute, until pg-boss stops.
  const calls = c.callControl;
  const sweep = startCallSweep(new CallSweep({ pool: c.pool, log, clock: c.clock, calls, workspaces: c.workspaces }));
  boss.once('stopped', () => void sweep.stop());
  return worker;
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
  const db = await openDatabase(config, log, { poolMax: 4, migrate: config.MIGRATE_ON_START });
  const boss = await startBoss(db.url, log, {
    heartbeatSeconds: config.JOB_HEARTBEAT_SECONDS,
    monitorIntervalSeconds: config.JOB_MONITOR_SECONDS,
  });
  const c = compose({ config, log, clock: systemClock, pool: db.pool, boss });
  const { relay, sandbox } = c;
  relay.start();
  const pool = turnPool(db.url, config, log);
  await startJobHandlers(c, pool);
  const metrics =
    config.METRICS_PORT === undefined
      ? null
      : await startMetricsServer({ host: config.HOST, port: config.METRICS_PORT, pool: db.pool, log });
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

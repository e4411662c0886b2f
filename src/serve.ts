import type { Config } from './config/config.ts';
import { buildApp } from './app.ts';
import { startBoss } from './jobs/boss.ts';
import { OutboxRelay } from './jobs/outbox-relay.ts';
import { openDatabase, workspaceService } from './runtime.ts';
import { systemClock } from './shared/clock.ts';
import type { Logger } from './shared/logger.ts';
import { VapiClient } from './voice/vapi-client.ts';
import { startJobHandlers, turnPool } from './worker.ts';

export interface RunningServer {
  address: string;
  close(): Promise<void>;
}

/**
 * `leadintake serve`: database, queue relay, the job handlers (unless `worker: false`, for
 * deployments that run `leadintake worker` apart), HTTP; stops them in reverse order.
 */
export async function serve(config: Config, log: Logger, opts: { worker?: boolean } = {}): Promise<RunningServer> {
  const db = await openDatabase(config, log);
  const workspaces = workspaceService(config, db.pool);
  const boss = await startBoss(db.url, log, { heartbeatSeconds: config.JOB_HEARTBEAT_SECONDS, monitorIntervalSeconds: config.JOB_MONITOR_SECONDS });
  const relay = new OutboxRelay({ pool: db.pool, boss, log, pollMs: config.OUTBOX_POLL_MS });
  relay.start();
  const voice = new VapiClient({ baseUrl: config.VAPI_BASE_URL, timeoutMs: config.VAPI_TIMEOUT_MS });
  const app = buildApp({ config, pool: db.pool, log, clock: systemClock, voice, relay, workspaces });
  const jobsPool = opts.worker === false ? null : turnPool(db.url, config);
  if (jobsPool) await startJobHandlers({ config, pool: jobsPool, boss, log, workspaces });
  const pruner = setInterval(() => app.rateLimiter.prune().catch((err) => log.warn({ err }, 'rate-limit prune failed')), 600_000);
  pruner.unref();
  const address = await app.http.listen({ port: config.PORT, host: config.HOST });
  log.info({ address }, 'leadintake listening');
  return {
    address,
    close: async () => {
      clearInterval(pruner);
      await app.http.close();
      await relay.stop();
      await boss.stop({ graceful: true, timeout: config.SHUTDOWN_GRACE_SECONDS * 1000 });
      await jobsPool?.end();
      await db.close();
    },
  };
}

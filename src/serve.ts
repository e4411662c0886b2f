import type { Config } from './config/config.ts';
import { buildApp } from './app.ts';
import { startBoss } from './jobs/boss.ts';
import { OutboxRelay } from './jobs/outbox-relay.ts';
import { encryptionKey, openDatabase, workspaceService } from './runtime.ts';
import { lazySandbox } from './sandbox/sandbox.ts';
import { demoOperatorLines, ensureDemoOperator } from './sandbox/demo-operator.ts';
import {
  demoBanner, demoKeysFile, ensureDemoWorkspaces, isFirstEmbeddedStart, laterStartBanner, writeDemoKeysFile,
} from './sandbox/demo-workspaces.ts';
import type { WorkspaceService } from './workspaces/workspace-service.ts';
import type { Pool } from './db/pool.ts';
import { systemClock } from './shared/clock.ts';
import { listenPublic } from './http/accept-sockets.ts';
import { startMemoryReducer } from './http/memory-reducer.ts';
import { startMetricsServer } from './metrics/metrics-routes.ts';
import type { Logger } from './shared/logger.ts';
import { VapiClient } from './voice/vapi/vapi-client.ts';
import { startJobHandlers, turnPool } from './worker.ts';
import type { OperatorService } from './operators/operator-service.ts';

export interface RunningServer {
  address: string;
  pool: Pool;
  workspaces: WorkspaceService;
  /** The dashboard's operators (the demo creates its operator with it). */
  operators: OperatorService;
  /**
   * What the CLI prints once started: on the first start of an empty embedded database the demo's
   * keys and curls; on a later one the dashboard's address and where those keys were saved.
   */
  demo: string | null;
  close(): Promise<void>;
}

/**
 * `leadintake serve`: database, queue relay, the job handlers (unless `worker: false`, for
 * deployments that run `leadintake worker` apart), HTTP; stops them in reverse order.
 */
export async function serve(config: Config, log: Logger, opts: { worker?: boolean; firstRunDemo?: boolean } = {}): Promise<RunningServer> {
  const db = await openDatabase(config, log);
  const workspaces = workspaceService(config, db.pool);
  const boss = await startBoss(db.url, log, { heartbeatSeconds: config.JOB_HEARTBEAT_SECONDS, monitorIntervalSeconds: config.JOB_MONITOR_SECONDS });
  const relay = new OutboxRelay({ pool: db.pool, boss, log, pollMs: config.OUTBOX_POLL_MS });
  relay.start();
  const voice = new VapiClient({ baseUrl: config.VAPI_BASE_URL, timeoutMs: config.VAPI_TIMEOUT_MS });
  const sandbox = lazySandbox({ config, log, secret: encryptionKey(config) }, () => import('./sandbox/sandbox-providers.ts'));
  const app = buildApp({ config, pool: db.pool, log, clock: systemClock, voice, relay, workspaces, sandbox });
  const jobsPool = opts.worker === false ? null : turnPool(db.url, config, log);
  // Requests first: while the public API sheds or queues requests, the in-process turns run one
  // at a time (docs/RELIABILITY.md, "Overload").
  const apiUnderPressure = () => {
    const p = app.pressure();
    return p.underPressure || p.waiting > 0;
  };
  if (jobsPool) await startJobHandlers({ config, pool: jobsPool, boss, log, workspaces, sandbox, apiUnderPressure });
  const pruner = setInterval(() => app.rateLimiter.prune().catch((err) => log.warn({ err }, 'rate-limit prune failed')), 600_000);
  pruner.unref();
  // Gives back the memory a flood grew into once the public API is quiet again.
  const stopMemoryReducer = startMemoryReducer(app.pressure, log);
  // /metrics only on a port of its own, never on the public one, and before it: a taken
  // metrics port stops the start before any request is accepted (src/metrics/metrics-routes.ts).
  const metrics = config.METRICS_PORT === undefined
    ? null
    : await startMetricsServer({ host: config.HOST, port: config.METRICS_PORT, pool: db.pool, log });
  // Node's default backlog (511) overflows under a flood of new connections; the kernel then
  // drops them and clients wait for SYN retries (1 s, then 3 s) before they are even read. Several
  // sockets, so that a flood of connections is accepted quickly (src/http/accept-sockets.ts).
  const listener = await listenPublic(app.http, { port: config.PORT, host: config.HOST, backlog: 4096, sockets: config.HTTP_ACCEPT_SOCKETS });
  const address = listener.address;
  log.info({ address, metrics: metrics?.address ?? null }, 'leadintake listening');
  // A newcomer's first `npm start` (embedded database, empty data folder) gets the demo workspaces.
  let demo: string | null = null;
  if (opts.firstRunDemo !== false && (await isFirstEmbeddedStart(config.LEADINTAKE_DATA_DIR, !config.DATABASE_URL, workspaces))) {
    const keys = await ensureDemoWorkspaces(workspaces);
    const operator = demoOperatorLines(config.PUBLIC_BASE_URL, await ensureDemoOperator(app.operators, workspaces));
    const file = writeDemoKeysFile(config.LEADINTAKE_DATA_DIR, demoBanner(config.PUBLIC_BASE_URL, keys, null, operator));
    demo = demoBanner(config.PUBLIC_BASE_URL, keys, file, operator);
  } else if (opts.firstRunDemo !== false) {
    demo = laterStartBanner(config.PUBLIC_BASE_URL, demoKeysFile(config.LEADINTAKE_DATA_DIR, !config.DATABASE_URL));
  }
  return {
    address,
    pool: db.pool,
    workspaces,
    operators: app.operators,
    demo,
    close: async () => {
      clearInterval(pruner);
      stopMemoryReducer();
      await listener.close();
      await metrics?.close();
      await relay.stop();
      await boss.stop({ graceful: true, timeout: config.SHUTDOWN_GRACE_SECONDS * 1000 });
      await jobsPool?.end();
      await sandbox.close();
      await db.close();
    },
  };
}

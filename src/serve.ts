import type { Config } from './config/config.ts';
import { buildApp } from './app.ts';
import { startBoss } from './jobs/boss.ts';
import { compose } from './composition.ts';
import { retentionPolicy, startMaintenance } from './maintenance.ts';
import { openDatabase } from './runtime.ts';
import { demoOperatorLines, ensureDemoOperator } from './sandbox/demo-operator.ts';
import {
  demoBanner,
  demoKeysFile,
  ensureDemoWorkspaces,
  isFirstEmbeddedStart,
  laterStartBanner,
  writeDemoKeysFile,
} from './sandbox/demo-workspaces.ts';
import type { WorkspaceService } from './workspaces/workspace-service.ts';
import type { Pool } from './db/pool.ts';
import { systemClock } from './shared/clock.ts';
import { startMetricsServer } from './metrics/metrics-routes.ts';
import type { Logger } from './shared/logger.ts';
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
 * `leadintake serve`: database, the composition (src/composition.ts) and its relay, the job
 * handlers (unless `worker: false`, for deployments that run `leadintake worker` apart), the
 * maintenance timer (src/maintenance.ts), HTTP; stops them in reverse order.
 */
export async function serve(
  config: Config,
  log: Logger,
  opts: { worker?: boolean; firstRunDemo?: boolean } = {},
): Promise<RunningServer> {
  const db = await openDatabase(config, log, { migrate: config.MIGRATE_ON_START });
  const boss = await startBoss(db.url, log, {
    heartbeatSeconds: config.JOB_HEARTBEAT_SECONDS,
    monitorIntervalSeconds: config.JOB_MONITOR_SECONDS,
  });
  const c = compose({ config, log, clock: systemClock, pool: db.pool, boss });
  const { relay, workspaces, sandbox } = c;
  relay.start();
  const app = buildApp(c);
  const jobsPool = opts.worker === false ? null : turnPool(db.url, config, log);
  // Requests first: while the public API sheds or queues requests, the in-process turns run one
  // at a time (docs/RELIABILITY.md, "Overload").
  const apiUnderPressure = () => {
    const p = app.pressure();
    return p.underPressure || p.waiting > 0;
  };
  if (jobsPool) await startJobHandlers(c, jobsPool, { apiUnderPressure });
  const maintenance = startMaintenance({ pool: db.pool, log, policy: retentionPolicy(config) });
  // /metrics only on a port of its own, never on the public one, and before it: a taken
  // metrics port stops the start before any request is accepted (src/metrics/metrics-routes.ts).
  const metrics =
    config.METRICS_PORT === undefined
      ? null
      : await startMetricsServer({ host: config.HOST, port: config.METRICS_PORT, pool: db.pool, log });
  // Node's default backlog (511) overflows under a flood of new connections; the kernel then
  // drops them and clients wait for SYN retries (1 s, then 3 s) before they are even read. A
  // flood of new connections belongs in front of the service, in a proxy (docs/OPERATIONS.md).
  const address = await app.http.listen({ port: config.PORT, host: config.HOST, backlog: 4096 });
  log.info({ address, metrics: metrics?.address ?? null }, 'leadintake listening');
  // A newcomer's first `npm start` (embedded database, empty data folder) gets the demo workspaces.
  let demo: string | null = null;
  if (
    opts.firstRunDemo !== false &&
    (await isFirstEmbeddedStart(config.LEADINTAKE_DATA_DIR, !config.DATABASE_URL, workspaces))
  ) {
    const keys = await ensureDemoWorkspaces(workspaces, db.pool);
    const operator = demoOperatorLines(config.PUBLIC_BASE_URL, await ensureDemoOperator(app.operators, workspaces));
    const file = writeDemoKeysFile(
      config.LEADINTAKE_DATA_DIR,
      demoBanner(config.PUBLIC_BASE_URL, keys, null, operator),
    );
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
      await maintenance.stop();
      await app.http.close();
      await metrics?.close();
      await relay.stop();
      await boss.stop({ graceful: true, timeout: config.SHUTDOWN_GRACE_SECONDS * 1000 });
      await jobsPool?.end();
      await sandbox.close();
      await db.close();
    },
  };
}

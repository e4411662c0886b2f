import { maintainAnalyticsDays } from './admin/analytics/analytics-days.ts';
import { pruneRateLimitCounters } from './auth/rate-limiter.ts';
import { pruneIntakeCounters } from './auth/intake-limits.ts';
import type { Config } from './config/config.ts';
import type { Pool } from './db/pool.ts';
import { pruneIntegrationEvents, type RetentionPolicy } from './integration-log/integration-log.ts';
import { pruneSandboxLeads } from './sandbox/sandbox-retention.ts';
import type { Logger } from './shared/logger.ts';
import { pruneVoiceToolCalls } from './voice/call-session-queries.ts';

// The housekeeping of a `serve` process, on one timer: the integration log's retention, then the
// tables kept under the same age limit (voice tool-call answers), the public API's ended rate-limit
// windows, sandbox leads' retention and the analytics day summaries. Every `serve` process runs it
// (a `worker` does not): each step is idempotent or skips what another process holds, so several
// processes at once only repeat each other's work.

/** One step of a pass; returns how many rows it deleted (0 for a step that deletes none). */
export type MaintenanceTask = (pool: Pool, maxAgeDays: number) => Promise<number>;

export interface MaintenanceOptions {
  pool: Pool;
  log: Logger;
  policy: RetentionPolicy;
  /** Default 10 minutes. */
  intervalMs?: number;
  /** The steps after the integration log's pruning; default maintenanceTasks(log). */
  tasks?: MaintenanceTask[];
}

export interface Maintenance {
  /** One pass now (or the pass in progress); returns how many rows went. */
  runOnce(): Promise<number>;
  /** Stops the timer and waits for a pass in progress. */
  stop(): Promise<void>;
}

export function retentionPolicy(config: Config): RetentionPolicy {
  return {
    maxAgeDays: config.INTEGRATION_LOG_RETENTION_DAYS,
    maxPerWorkspace: config.INTEGRATION_LOG_MAX_PER_WORKSPACE,
  };
}

export function maintenanceTasks(log: Logger): MaintenanceTask[] {
  return [
    pruneVoiceToolCalls,
    pruneRateLimitCounters,
    // The hosted form's and publishable keys' counters (F1/F2 share the table): hours over two hours old.
    (pool) => pruneIntakeCounters(pool, new Date()),
    pruneSandboxLeads,
    // It deletes no rows, so it adds nothing to the pass's count.
    async (pool) => (await maintainAnalyticsDays(pool, log), 0),
  ];
}

/** Starts the timer (it does not keep the process alive); the first pass runs one interval from now. */
export function startMaintenance(opts: MaintenanceOptions): Maintenance {
  const tasks = opts.tasks ?? maintenanceTasks(opts.log);
  let running: Promise<number> | null = null;
  const runOnce = (): Promise<number> => {
    running ??= (async () => {
      try {
        let deleted = await pruneIntegrationEvents(opts.pool, opts.policy);
        for (const task of tasks) deleted += await task(opts.pool, opts.policy.maxAgeDays);
        if (deleted > 0) opts.log.info({ deleted }, 'integration log pruned');
        return deleted;
      } catch (err) {
        opts.log.warn({ err }, 'integration log pruning failed');
        return 0;
      } finally {
        running = null;
      }
    })();
    return running;
  };
  const timer = setInterval(() => void runOnce(), opts.intervalMs ?? 600_000);
  timer.unref();
  return {
    runOnce,
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

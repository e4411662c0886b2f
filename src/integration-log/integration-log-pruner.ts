import type { FastifyInstance } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../shared/logger.ts';
import { pruneIntegrationEvents, type RetentionPolicy } from './integration-log.ts';

export interface PrunerOptions {
  pool: Pool;
  log: Logger;
  policy: RetentionPolicy;
  /** Default 10 minutes. */
  intervalMs?: number;
  /** Feature tables kept under the same age limit (e.g. the voice tool-call answers). */
  alsoPrune?: Array<(pool: Pool, maxAgeDays: number) => Promise<number>>;
}

export interface Pruner {
  /** One pass now; returns how many rows went. */
  runOnce(): Promise<number>;
  stop(): Promise<void>;
}

/**
 * Prunes the integration log on a timer, in every `serve` process: deletes are idempotent, so
 * several processes pruning at once only repeat each other's work. The timer does not keep the
 * process alive, and stop() waits for a pass in progress.
 */
export function startIntegrationLogPruner(opts: PrunerOptions): Pruner {
  let running: Promise<number> | null = null;
  const runOnce = (): Promise<number> => {
    running ??= (async () => {
      try {
        let deleted = await pruneIntegrationEvents(opts.pool, opts.policy);
        for (const prune of opts.alsoPrune ?? []) deleted += await prune(opts.pool, opts.policy.maxAgeDays);
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

/** The pruner as a Fastify plugin: started when the app is ready, stopped when it closes. */
export function integrationLogPruning(opts: PrunerOptions) {
  return async function (scope: FastifyInstance): Promise<void> {
    let pruner: Pruner | null = null;
    scope.addHook('onReady', async () => {
      pruner = startIntegrationLogPruner(opts);
    });
    scope.addHook('onClose', async () => {
      await pruner?.stop();
    });
  };
}

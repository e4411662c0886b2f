import type { Pool } from '../../db/pool.ts';
import type { IntegrationLogWriter } from '../../integration-log/integration-log-writer.ts';
import type { Clock } from '../../shared/clock.ts';
import type { SecretBox } from '../../workspaces/secret-box.ts';
import type { IntakeService } from '../intake-service.ts';
import { recordSourceError } from '../lead-source-queries.ts';
import { backfillMetaSource, type BackfillReport } from './meta-backfill.ts';
import { type MetaIntakeDeps, MetaIntakeService } from './meta-intake-service.ts';
import { metaIntakeRoutes } from './meta-intake-routes.ts';
import { type MetaLeadRetryJob, queueLeadRetry, runLeadRetry } from './meta-lead-retry.ts';
import type { Logger } from '../../shared/logger.ts';
import { MetaSources } from './meta-sources.ts';

// Meta Lead Ads put together from the process's parts: app.ts registers `routes`, the CLI's
// `source backfill` calls `backfill`, the Form page connects a Page through `sources`, the
// meta-lead-retry jobs (src/worker.ts) call `retry`.

export interface MetaIntakeParts {
  pool: Pool;
  secrets: SecretBox;
  clock: Clock;
  integrationLog: Pick<IntegrationLogWriter, 'record'>;
  intake: Pick<IntakeService, 'submit' | 'rejected'>;
  /** The Graph client of a source's Page token (src/composition.ts builds it). */
  leadClient: MetaIntakeDeps['leadClient'];
}

export function metaIntake(p: MetaIntakeParts) {
  const sources = new MetaSources({ pool: p.pool, secrets: p.secrets });
  const recordError = (sourceId: string, message: string) => recordSourceError(p.pool, sourceId, message, p.clock());
  const service = new MetaIntakeService({
    findSource: (token) => sources.byToken(token),
    submit: (source, delivery) => p.intake.submit(source.row, delivery),
    recordError,
    rejected: (source, httpStatus, reason, payload) => p.intake.rejected(source.row, httpStatus, reason, payload),
    scheduleRetry: (source, leadgenId, pageId) =>
      queueLeadRetry(p.pool, { sourceId: source.id, leadgenId, ...(pageId ? { pageId } : {}), retry: 1 }, p.clock()),
    integrationLog: p.integrationLog,
    leadClient: p.leadClient,
  });
  return {
    service,
    sources,
    routes: metaIntakeRoutes({ meta: service }),
    /** null: no live `meta` source with this id. */
    async backfill(
      sourceId: string,
      opts: { since?: Date; formIds?: string[]; pageSize?: number } = {},
    ): Promise<BackfillReport | null> {
      const source = await sources.byId(sourceId);
      if (!source) return null;
      return backfillMetaSource({ meta: service, db: p.pool, recordError }, source, opts);
    },
    /** One meta-lead-retry job: the lead read and submitted again, or the next retry queued. */
    retry: (job: MetaLeadRetryJob, log: Logger) =>
      runLeadRetry(
        { meta: service, db: p.pool, clock: p.clock, sourceById: (id) => sources.byId(id), recordError },
        job,
        log,
      ),
  };
}

import type { Pool } from '../../db/pool.ts';
import type { Clock } from '../../shared/clock.ts';
import type { SecretBox } from '../../workspaces/secret-box.ts';
import type { IntakeService } from '../intake-service.ts';
import { recordSourceError } from '../lead-source-queries.ts';
import { backfillMetaSource, type BackfillReport } from './meta-backfill.ts';
import type { MetaIntakePorts, MetaIntakeService } from './meta-intake-service.ts';
import { metaIntakeRoutes } from './meta-intake-routes.ts';
import { MetaSources } from './meta-sources.ts';

// Meta Lead Ads put together from the process's parts: app.ts builds the service on `ports` and
// registers `routes`, the CLI's `source backfill` calls `backfill`, the Form page connects a Page
// through `sources`.

export interface MetaIntakeParts {
  pool: Pool;
  secrets: SecretBox;
  clock: Clock;
  intake: Pick<IntakeService, 'submit'>;
}

/** The `meta` sources and what MetaIntakeService asks of the intake (buildApp builds the service on them). */
export function metaIntakePorts(p: MetaIntakeParts): { sources: MetaSources; ports: MetaIntakePorts } {
  const sources = new MetaSources({ pool: p.pool, secrets: p.secrets });
  return {
    sources,
    ports: {
      findSource: (token) => sources.byToken(token),
      submit: (source, delivery) => p.intake.submit(source.row, delivery),
      recordError: (sourceId, message) => recordSourceError(p.pool, sourceId, message, p.clock()),
    },
  };
}

/** The webhook's routes and the backfill around the service buildApp built. */
export function metaIntake(p: {
  pool: Pool;
  sources: MetaSources;
  ports: MetaIntakePorts;
  service: MetaIntakeService;
}) {
  const { sources, service } = p;
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
      return backfillMetaSource({ meta: service, db: p.pool, recordError: p.ports.recordError }, source, opts);
    },
  };
}

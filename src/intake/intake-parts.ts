import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import type { IntegrationLogWriter } from '../integration-log/integration-log-writer.ts';
import type { LeadService } from '../leads/lead-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { SecretBox } from '../workspaces/secret-box.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { IntakeService } from './intake-service.ts';
import { intakeRoutes } from './intake-routes.ts';
import { LeadSourceService } from './lead-source-service.ts';

/** The connected sources' services and routes, built by buildApp from the composition and its LeadService. */
export function intakeParts(
  deps: {
    config: Config;
    pool: Pool;
    secrets: SecretBox;
    workspaces: WorkspaceService;
    integrationLog: IntegrationLogWriter;
    clock: Clock;
    log: Logger;
  },
  leads: LeadService,
) {
  const sources = new LeadSourceService({
    pool: deps.pool,
    secrets: deps.secrets,
    publicBaseUrl: deps.config.PUBLIC_BASE_URL,
  });
  const intake = new IntakeService({
    pool: deps.pool,
    leads,
    workspaces: deps.workspaces,
    integrationLog: deps.integrationLog,
    clock: deps.clock,
    log: deps.log,
    formKeyHourlyLimit: deps.config.DEFAULT_HOURLY_LIMIT,
  });
  return { sources, intake, routes: intakeRoutes({ sources, intake }) };
}

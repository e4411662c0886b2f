import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import type { IntakeLimits } from '../auth/intake-limits.ts';
import type { LeadService } from '../leads/lead-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { FormAbuseGuard } from './form-abuse.ts';
import { formRoutes } from './form-routes.ts';
import type { FormSettingsService } from './form-settings-service.ts';
import type { TurnstileClient } from './turnstile-client.ts';

/** The hosted form's routes from the composition's parts (buildApp builds the abuse checks and registers them). */
export function hostedForm(
  deps: {
    config: Config;
    pool: Pool;
    clock: Clock;
    log: Logger;
    workspaces: WorkspaceService;
    turnstile: TurnstileClient;
  },
  parts: { leads: LeadService; formSettings: FormSettingsService; abuse: FormAbuseGuard; limits: IntakeLimits },
) {
  return formRoutes({
    pool: deps.pool,
    clock: deps.clock,
    log: deps.log,
    workspaces: deps.workspaces,
    leads: parts.leads,
    formSettings: parts.formSettings,
    abuse: parts.abuse,
    limits: parts.limits,
    turnstile: deps.turnstile,
    formKeyHourlyLimit: deps.config.DEFAULT_HOURLY_LIMIT,
  });
}

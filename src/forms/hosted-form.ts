import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import type { LeadService } from '../leads/lead-service.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { SecretBox } from '../workspaces/secret-box.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { IntakeLimits } from '../auth/intake-limits.ts';
import { ADDRESS_HOURLY_LIMIT as FORM_ADDRESS_HOURLY_LIMIT, FormAbuseGuard } from './form-abuse.ts';
import { formRoutes } from './form-routes.ts';
import type { FormSettingsService } from './form-settings-service.ts';
import { TurnstileClient } from './turnstile-client.ts';

/** The hosted form's routes from the composition's parts (buildApp registers them). */
export function hostedForm(
  deps: { config: Config; pool: Pool; clock: Clock; log: Logger; workspaces: WorkspaceService; secrets: SecretBox },
  parts: { leads: LeadService; formSettings: FormSettingsService },
) {
  return formRoutes({
    pool: deps.pool,
    clock: deps.clock,
    log: deps.log,
    workspaces: deps.workspaces,
    leads: parts.leads,
    formSettings: parts.formSettings,
    abuse: new FormAbuseGuard(deps.secrets.derive('hosted-form')),
    limits: new IntakeLimits({
      db: deps.pool,
      clock: deps.clock,
      addressKey: deps.secrets.derive('intake-address'),
      scope: 'form',
      // The workspace's limit is its form setting (hourlyLimit), given with each admit.
      limits: { perAddress: FORM_ADDRESS_HOURLY_LIMIT },
    }),
    turnstile: new TurnstileClient(deps.config.TURNSTILE_VERIFY_URL),
    formKeyHourlyLimit: deps.config.DEFAULT_HOURLY_LIMIT,
  });
}

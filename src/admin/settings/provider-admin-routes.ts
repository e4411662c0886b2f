import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../auth/authenticator.ts';
import type { Config } from '../../config/config.ts';
import { isSandboxOnly } from '../sandbox-only.ts';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import { llmSettingsProblem } from '../../workspaces/model-endpoint.ts';
import { checkWorkspace, type VerifyClients } from '../../workspaces/verify/workspace-checks.ts';
import { parseWorkspaceConfig } from '../../workspaces/workspace-config.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './settings-admin-contracts.ts';
import {
  maskedSettings,
  mergeSecrets,
  pasteUrls,
  publicUrlWarning,
  SECRET_FIELDS,
  voiceAuthKind,
  type ProviderSection,
} from './provider-settings.ts';

// The Providers page's admin API (docs/DASHBOARD.md, "Providers, API keys and team"): the
// workspace's provider settings with secrets masked, saving one section through
// WorkspaceService.update (encrypted, like `leadintake workspace update`), and Test connection,
// which runs the checks of `leadintake workspace verify` (src/workspaces/verify/). Owners and
// admins only (`settings.manage`): even masked, the page says which credentials exist.

export interface ProviderAdminDeps {
  config: Config;
  pool: Pool;
  log: Logger;
  operators: OperatorService;
  workspaces: WorkspaceService;
  /** Its cache holds workspace rows (with their settings): dropped after a save in this process. */
  authenticator: Authenticator;
  /** The clients a Test connection asks (src/verify-clients.ts). */
  verify: VerifyClients;
}

export function providerAdminRoutes(deps: ProviderAdminDeps) {
  const workspaceOf = async (
    request: FastifyRequest<{ Params: { slug: string } }>,
    permission: Permission = 'settings.manage',
  ) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, permission);
    const workspace = await deps.workspaces.findBySlug(membership.slug);
    if (!workspace) throw new AppError('workspace_not_found');
    return workspace;
  };

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.getProvidersRoute, async (request) => {
      const workspace = await workspaceOf(request);
      const settings = deps.workspaces.settingsOf(workspace);
      return {
        ok: true as const,
        channel: workspace.channel,
        providers: maskedSettings(settings),
        secretFields: Object.fromEntries(Object.entries(SECRET_FIELDS).map(([k, v]) => [k, [...v]])),
        voiceAuth: voiceAuthKind(workspace, settings),
        urls: pasteUrls(deps.config.PUBLIC_BASE_URL, workspace),
        publicBaseUrl: deps.config.PUBLIC_BASE_URL,
        warning: publicUrlWarning(deps.config.PUBLIC_BASE_URL),
        sandboxOnly: await isSandboxOnly(deps.pool, workspace.id),
      };
    });

    // The answer says only "saved": the page reads the masked view again.
    registerRoute(
      scope,
      c.saveProviderRoute,
      async (request, _reply, input) => {
        const workspace = await workspaceOf(request);
        const { provider } = input.params();
        const sent = input.body();
        const stored = deps.workspaces.settingsOf(workspace)[provider] as Record<string, unknown> | undefined;
        const parsed = parseWorkspaceConfig({ [provider]: mergeSecrets(provider as ProviderSection, sent, stored) });
        if (!parsed.ok) {
          // The schema's messages name the field (`voice.apiKey: …`); never its value.
          throw new AppError('validation_failed', {
            issues: parsed.message.split('; ').map((m) => {
              const [path, ...rest] = m.split(': ');
              return { path: (path ?? '').split('.'), message: rest.join(': ') || m };
            }),
          });
        }
        // The installation's model key goes only to its own model server; a workspace's server must be allowed.
        const llm = llmSettingsProblem(parsed.config.llm, deps.config);
        if (llm) {
          throw new AppError('validation_failed', { issues: [{ path: ['llm', llm.field], message: llm.message }] });
        }
        if (!(await deps.workspaces.update(workspace.slug, parsed.config))) throw new AppError('workspace_not_found');
        deps.authenticator.invalidate();
        return { ok: true as const };
      },
      { audit: 'providers.updated' },
    );

    registerRoute(
      scope,
      c.testProviderRoute,
      async (request, _reply, input) => {
        const workspace = await workspaceOf(request);
        const { provider } = input.params();
        const result = await checkWorkspace(
          workspace,
          deps.workspaces.settingsOf(workspace),
          { ...deps, clients: deps.verify },
          provider === 'llm' ? 'model' : provider,
        );
        return {
          ok: true as const,
          passed: result.missing.length === 0 && result.lines.every((l) => l.ok),
          checks: result.lines,
          notConfigured: result.missing,
        };
      },
      { audit: 'providers.tested' },
    );
  };
}

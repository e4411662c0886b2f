import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import { setAgentEnabled } from '../../whatsapp/conversation-queries.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './form-agent-admin-contracts.ts';
import { agentEnabled, agentView, applyAgent, previewPrompt } from './agent-settings.ts';
import { applyForm, formView } from './form-settings.ts';

// The Form and Agent pages' admin API (docs/DASHBOARD.md, "Form builder and agent settings").
// Everyone in the workspace reads (`settings.read`); owners and admins save (`settings.manage`).
// Saves are read-modify-writes under the workspace's row lock with a version check (409).

export interface FormAgentAdminDeps {
  pool: Pool;
  clock: Clock;
  operators: OperatorService;
  workspaces: WorkspaceService;
  publicBaseUrl: string;
}

type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;

export function formAgentAdminRoutes(deps: FormAgentAdminDeps) {
  const member = async (request: SlugRequest, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, permission);
    const workspace = await deps.workspaces.findBySlug(membership.slug);
    if (!workspace) throw new AppError('workspace_not_found');
    return workspace;
  };
  const modify = async (slug: string, change: Parameters<WorkspaceService['modify']>[1]) => {
    const done = await deps.workspaces.modify(slug, change);
    if (!done) throw new AppError('workspace_not_found');
    return done.workspace;
  };
  const leadsUrl = `${deps.publicBaseUrl.replace(/\/+$/, '')}/api/public/leads`;

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.getFormRoute, async (request) => {
      const workspace = await member(request, 'settings.read');
      return { ok: true as const, ...formView(workspace), leadsUrl };
    });
    registerRoute(
      scope,
      c.saveFormRoute,
      async (request, _reply, input) => {
        const slug = (await member(request, 'settings.manage')).slug;
        const body = input.body();
        const workspace = await modify(slug, (w) => ({ agent: applyForm(w, body), result: null }));
        return { ok: true as const, ...formView(workspace), leadsUrl };
      },
      { audit: 'form.updated' },
    );
    registerRoute(scope, c.getAgentRoute, async (request) => {
      const workspace = await member(request, 'settings.read');
      return {
        ok: true as const,
        ...agentView(workspace, deps.workspaces.settingsOf(workspace), await agentEnabled(deps.pool, workspace.id)),
      };
    });
    registerRoute(
      scope,
      c.saveAgentRoute,
      async (request, _reply, input) => {
        const slug = (await member(request, 'settings.manage')).slug;
        const body = input.body();
        const workspace = await modify(slug, (w, settings) => ({ ...applyAgent(w, settings, body), result: null }));
        return {
          ok: true as const,
          ...agentView(workspace, deps.workspaces.settingsOf(workspace), await agentEnabled(deps.pool, workspace.id)),
        };
      },
      { audit: 'agent.updated' },
    );
    // Changes nothing, so readers may preview too; a POST only because the draft is a body.
    registerRoute(scope, c.previewAgentRoute, async (request, _reply, input) => {
      const workspace = await member(request, 'settings.read');
      const draft = input.body();
      return { ok: true as const, prompt: previewPrompt(workspace, draft, deps.clock()) };
    });
    // Two routes rather than one with a flag: the audit log names which way it was switched.
    for (const [route, enabled, audit] of [
      [c.switchOnRoute, true, 'agent.switched_on'],
      [c.switchOffRoute, false, 'agent.switched_off'],
    ] as const) {
      registerRoute(
        scope,
        route,
        async (request) => {
          const workspace = await member(request, 'settings.manage');
          if (!(await setAgentEnabled(deps.pool, workspace.id, enabled))) throw new AppError('workspace_not_found');
          return { ok: true as const, enabled };
        },
        { audit },
      );
    }
  };
}

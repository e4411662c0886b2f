import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool } from '../db/pool.ts';
import type { OperatorService } from '../operators/operator-service.ts';
import type { Permission } from '../operators/roles.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import { setAgentEnabled } from '../whatsapp/conversation-queries.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from './admin-auth.ts';
import { parse } from './admin-parse.ts';
import { agentEnabled, agentView, applyAgent, previewPrompt } from './agent-settings.ts';
import { applyForm, formView } from './form-settings.ts';
import * as s from './form-agent-admin-schemas.ts';

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
  const base = '/api/admin/workspaces/:slug';

  return async function (scope: FastifyInstance): Promise<void> {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    scope.get<{ Params: { slug: string } }>(`${base}/form`, async (request) => {
      const workspace = await member(request, 'settings.read');
      return { ok: true as const, ...formView(workspace), leadsUrl };
    });
    scope.put<{ Params: { slug: string } }>(`${base}/form`, { config: { audit: 'form.updated' } }, async (request) => {
      const slug = (await member(request, 'settings.manage')).slug;
      const body = parse(s.formBody, request.body);
      const workspace = await modify(slug, (w) => ({ agent: applyForm(w, body), result: null }));
      return { ok: true as const, ...formView(workspace), leadsUrl };
    });
    scope.get<{ Params: { slug: string } }>(`${base}/agent`, async (request) => {
      const workspace = await member(request, 'settings.read');
      return { ok: true as const, ...agentView(workspace, deps.workspaces.settingsOf(workspace), await agentEnabled(deps.pool, workspace.id)) };
    });
    scope.put<{ Params: { slug: string } }>(`${base}/agent`, { config: { audit: 'agent.updated' } }, async (request) => {
      const slug = (await member(request, 'settings.manage')).slug;
      const body = parse(s.agentBody, request.body);
      const workspace = await modify(slug, (w, settings) => ({ ...applyAgent(w, settings, body), result: null }));
      return { ok: true as const, ...agentView(workspace, deps.workspaces.settingsOf(workspace), await agentEnabled(deps.pool, workspace.id)) };
    });
    // Changes nothing, so readers may preview too; a POST only because the draft is a body.
    scope.post<{ Params: { slug: string } }>(`${base}/agent/preview`, async (request) => {
      const workspace = await member(request, 'settings.read');
      const draft = parse(s.agentDraft, request.body);
      return { ok: true as const, prompt: previewPrompt(workspace, draft, deps.clock()) };
    });
    // Two routes rather than one with a flag: the audit log names which way it was switched.
    for (const [path, enabled, audit] of [['switch-on', true, 'agent.switched_on'], ['switch-off', false, 'agent.switched_off']] as const) {
      scope.post<{ Params: { slug: string } }>(`${base}/agent/${path}`, { config: { audit } }, async (request) => {
        const workspace = await member(request, 'settings.manage');
        if (!(await setAgentEnabled(deps.pool, workspace.id, enabled))) throw new AppError('workspace_not_found');
        return { ok: true as const, enabled };
      });
    }
  };
}

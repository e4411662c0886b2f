import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { FormSettingsService, FormSettingsView } from '../../forms/form-settings-service.ts';
import { registerRoute } from '../../http/route-contract.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import * as c from './intake-settings-admin-contracts.ts';
import type { FormSettingsAnswer } from './intake-settings-admin-schemas.ts';

// The Form page's form settings and logo (docs/INTAKE.md, "The Form page"), through the hosted
// form's own service (FormSettingsService): everyone in the workspace reads; owners and admins
// save (`settings.manage`), each save in the audit log. A changed consent text is a new version at
// once, so the next page shown and the lead it makes name the text the operator just saved.

export interface IntakeSettingsAdminDeps {
  operators: OperatorService;
  workspaces: WorkspaceService;
  forms: FormSettingsService;
}

type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;

/** The logo travels as base64 in JSON: 256 KiB of image is about 342 KiB of text. */
const LOGO_BODY_LIMIT = 400 * 1024;

export function intakeSettingsAdminRoutes(deps: IntakeSettingsAdminDeps) {
  const workspaceOf = async (request: SlugRequest, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, permission);
    const workspace = await deps.workspaces.findBySlug(membership.slug);
    if (!workspace) throw new AppError('workspace_not_found');
    return workspace;
  };
  const answer = async (workspaceId: string, view: FormSettingsView): Promise<FormSettingsAnswer> => {
    const { consent, ...settings } = view;
    const logo = await deps.forms.logo(workspaceId);
    return {
      ok: true,
      settings,
      consent,
      logo: logo
        ? { contentType: logo.contentType, bytes: logo.bytes.length, updatedAt: logo.updatedAt.toISOString() }
        : null,
    };
  };

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = route.url.endsWith('/logo') ? LOGO_BODY_LIMIT : 64 * 1024;
    });
    registerRoute(scope, c.getFormSettingsRoute, async (request) => {
      const workspace = await workspaceOf(request, 'settings.read');
      return answer(workspace.id, await deps.forms.read(workspace));
    });
    registerRoute(
      scope,
      c.saveFormSettingsRoute,
      async (request) => {
        const workspace = await workspaceOf(request, 'settings.manage');
        // The service parses the body with the form's own schema (field-named 400s).
        return answer(workspace.id, await deps.forms.save(workspace, request.body));
      },
      { audit: 'form_settings.updated' },
    );
    registerRoute(
      scope,
      c.saveLogoRoute,
      async (request, _reply, input) => {
        const workspace = await workspaceOf(request, 'settings.manage');
        const body = input.body();
        await deps.forms.saveLogo(workspace.id, body.contentType, Buffer.from(body.data, 'base64'));
        return answer(workspace.id, await deps.forms.read(workspace));
      },
      { audit: 'form_logo.updated' },
    );
    registerRoute(
      scope,
      c.deleteLogoRoute,
      async (request) => {
        const workspace = await workspaceOf(request, 'settings.manage');
        await deps.forms.deleteLogo(workspace.id);
        return answer(workspace.id, await deps.forms.read(workspace));
      },
      { audit: 'form_logo.deleted' },
    );
  };
}

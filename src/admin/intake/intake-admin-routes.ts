import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerRoute } from '../../http/route-contract.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import * as c from './intake-admin-contracts.ts';
import type { IntakeOverview } from './intake-admin-schemas.ts';

// The Form page's intake sections (docs/INTAKE.md, "The Form page"): where the hosted form is,
// its preview and the embed snippet. Everyone in the workspace reads (`settings.read`).

export interface IntakeAdminDeps {
  operators: OperatorService;
  publicBaseUrl: string;
}

type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;

/** The snippet a site pastes (docs/INTAKE.md, "Embed and publishable keys"): the target, then the script. */
export function embedSnippet(scriptUrl: string, slug: string): string {
  return `<div data-leadintake-form="${slug}"></div>\n<script src="${scriptUrl}" async></script>`;
}

export function intakeOverview(publicBaseUrl: string, slug: string): IntakeOverview {
  // Slugs are [A-Za-z0-9-] (workspace-config.ts): safe in a URL and in the snippet's attribute.
  const path = `/forms/${encodeURIComponent(slug)}`;
  const base = publicBaseUrl.replace(/\/+$/, '');
  const scriptUrl = `${base}${path}/embed.js`;
  return {
    ok: true,
    formUrl: `${base}${path}`,
    // Relative: the dashboard frames it from its own origin, whatever name the browser used.
    previewPath: `${path}?embed=1`,
    embedScriptUrl: scriptUrl,
    embedSnippet: embedSnippet(scriptUrl, slug),
  };
}

export function intakeAdminRoutes(deps: IntakeAdminDeps) {
  const member = async (request: SlugRequest, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    return requireMembership(session, request.params.slug, permission);
  };
  return async (scope: FastifyInstance): Promise<void> => {
    registerRoute(scope, c.intakeOverviewRoute, async (request) => {
      const membership = await member(request, 'settings.read');
      return intakeOverview(deps.publicBaseUrl, membership.slug);
    });
  };
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { registerRoute } from '../../http/route-contract.ts';
import type { LeadSourceService, LeadSourceView } from '../../intake/lead-source-service.ts';
import type { MetaSources } from '../../intake/meta/meta-sources.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import * as c from './intake-source-admin-contracts.ts';
import type { SourceAnswer } from './intake-source-admin-schemas.ts';
import { metaSettingsView, requireFormQuestions } from './meta-mapping-admin.ts';

// The Form page's connected sources (docs/INTAKE.md, "The Form page"), through the sources' own
// services (LeadSourceService for webhooks and Google, MetaSources for a Page). Everyone in the
// workspace sees them (URL, status, last lead, last error; never a secret); owners and admins
// connect, edit, rotate and disconnect (`settings.manage`), each in the audit log.

export interface IntakeSourceAdminDeps {
  operators: OperatorService;
  sources: LeadSourceService;
  meta: MetaSources;
  /** The workspace's form questions: a Meta mapping's `question:<id>` targets must be among them. */
  workspaces: Pick<WorkspaceService, 'findBySlug'>;
}

type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;

const iso = (d: Date | null) => d?.toISOString() ?? null;
const view = (v: LeadSourceView): SourceAnswer => ({
  id: v.id,
  kind: v.kind,
  name: v.name,
  url: v.url,
  status: v.status,
  sandbox: v.sandbox,
  // Meta's mapping lives in its own settings; the generic one would only show defaults.
  mapping: v.kind === 'meta' ? {} : v.mapping,
  meta: v.kind === 'meta' ? metaSettingsView(v.config) : null,
  createdAt: v.createdAt.toISOString(),
  revokedAt: iso(v.revokedAt),
  lastLeadAt: iso(v.lastLeadAt),
  lastError: v.lastError,
  lastErrorAt: iso(v.lastErrorAt),
});

export function intakeSourceAdminRoutes(deps: IntakeSourceAdminDeps) {
  const member = async (request: SlugRequest, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    return requireMembership(session, request.params.slug, permission);
  };
  const formQuestions = async (slug: string, mapping: Parameters<typeof requireFormQuestions>[1] | undefined) => {
    if (mapping === undefined) return;
    const workspace = await deps.workspaces.findBySlug(slug);
    if (!workspace) throw new AppError('workspace_not_found');
    requireFormQuestions(workspace, mapping);
  };
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.listSourcesRoute, async (request) => {
      const m = await member(request, 'settings.read');
      return { ok: true as const, sources: (await deps.sources.list(m.workspaceId)).map(view) };
    });
    registerRoute(
      scope,
      c.createSourceRoute,
      async (request, _reply, input) => {
        const m = await member(request, 'settings.manage');
        const body = input.body();
        if (body.kind === 'meta') {
          const { name, pageAccessToken, appSecret, verifyToken, pageId, formIds, fieldMapping, organicToSandbox } =
            body;
          await formQuestions(m.slug, fieldMapping);
          const row = await deps.meta.connect(m.workspaceId, {
            name,
            secret: { pageAccessToken, appSecret, verifyToken },
            config: {
              ...(pageId ? { pageId } : {}),
              ...(formIds ? { formIds } : {}),
              ...(fieldMapping ? { fieldMapping } : {}),
              ...(organicToSandbox !== undefined ? { organicToSandbox } : {}),
            },
          });
          return { ok: true as const, source: view(deps.sources.view(row)), secret: null };
        }
        const { source, secret } = await deps.sources.create(m.workspaceId, {
          kind: body.kind,
          name: body.name,
          ...(body.mapping ? { mapping: body.mapping } : {}),
          ...(body.sandbox !== undefined ? { sandbox: body.sandbox } : {}),
          ...(body.secret ? { secret: body.secret } : {}),
        });
        return { ok: true as const, source: view(source), secret };
      },
      { audit: 'lead_source.created' },
    );
    registerRoute(
      scope,
      c.updateSourceRoute,
      async (request, _reply, input) => {
        const m = await member(request, 'settings.manage');
        const body = input.body();
        const current = await deps.sources.get(m.workspaceId, request.params.id);
        if (!current || current.revokedAt) throw new AppError('lead_source_not_found');
        const metaChange = body.fieldMapping !== undefined || body.organicToSandbox !== undefined;
        if (current.kind === 'meta' && (body.mapping !== undefined || body.sandbox !== undefined))
          throw new AppError('validation_failed', {
            issues: [{ path: ['mapping'], message: 'A Meta source takes fieldMapping and organicToSandbox instead.' }],
          });
        if (current.kind !== 'meta' && metaChange)
          throw new AppError('validation_failed', {
            issues: [{ path: ['fieldMapping'], message: 'Only a Meta source maps by Meta field name: use mapping.' }],
          });
        if (current.kind === 'meta' && metaChange) {
          await formQuestions(m.slug, body.fieldMapping);
          const { fieldMapping, organicToSandbox } = body;
          const row = await deps.meta.configure(m.workspaceId, request.params.id, {
            ...(fieldMapping !== undefined ? { fieldMapping } : {}),
            ...(organicToSandbox !== undefined ? { organicToSandbox } : {}),
          });
          if (!row) throw new AppError('lead_source_not_found');
        }
        const updated = await deps.sources.update(m.workspaceId, request.params.id, {
          ...(body.name !== undefined ? { name: body.name } : {}),
          ...(body.mapping !== undefined ? { mapping: body.mapping } : {}),
          ...(body.sandbox !== undefined ? { sandbox: body.sandbox } : {}),
        });
        if (!updated) throw new AppError('lead_source_not_found');
        return { ok: true as const, source: view(updated) };
      },
      { audit: 'lead_source.updated' },
    );
    registerRoute(
      scope,
      c.rotateSourceSecretRoute,
      async (request) => {
        const m = await member(request, 'settings.manage');
        const current = await deps.sources.get(m.workspaceId, request.params.id);
        // Meta's secrets are the Page's and the app's: they change there, and are connected again.
        if (!current || current.revokedAt || current.kind === 'meta') throw new AppError('lead_source_not_found');
        const rotated = await deps.sources.rotateSecret(m.workspaceId, request.params.id);
        if (!rotated) throw new AppError('lead_source_not_found');
        return { ok: true as const, secret: rotated.secret };
      },
      { audit: 'lead_source.secret_rotated' },
    );
    registerRoute(
      scope,
      c.revokeSourceRoute,
      async (request) => {
        const m = await member(request, 'settings.manage');
        if (!(await deps.sources.revoke(m.workspaceId, request.params.id))) throw new AppError('lead_source_not_found');
        return { ok: true as const };
      },
      { audit: 'lead_source.revoked' },
    );
  };
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Queryable } from '../../db/pool.ts';
import { named, registerRoute } from '../../http/route-contract.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { adminRoute, answer, csrfHeaders, errorResponses, slugParams } from '../admin-contract.ts';

// The inbox's settings of a workspace (docs/DASHBOARD.md, "The operator's day"): after how many
// minutes a lead waiting for a person turns amber, then red, in every operator's inbox. Stored in
// workspaces.inbox_settings (migration 040); everyone reads them, owners and admins save them.

export const INBOX_DEFAULTS = { waitingAmberMinutes: 5, waitingRedMinutes: 15 } as const;

const minutes = (max: number) => z.int().min(1).max(max);
export const inboxSettingsBody = z
  .object({
    waitingAmberMinutes: minutes(1440).meta({
      description: 'A lead waiting for a person this many minutes turns amber (1–1440).',
    }),
    waitingRedMinutes: minutes(10_080).meta({
      description: 'And red after this many (1–10080, more than the amber threshold).',
    }),
  })
  .strict()
  .refine((s) => s.waitingRedMinutes > s.waitingAmberMinutes, {
    message: 'Must be more minutes than the amber threshold.',
    path: ['waitingRedMinutes'],
  });
export type InboxSettings = z.infer<typeof inboxSettingsBody>;

export const inboxSettingsSchema = z.object({
  ok: z.literal(true),
  waitingAmberMinutes: z.int(),
  waitingRedMinutes: z.int(),
});

/** The workspace's settings; the defaults for a workspace that never saved them (or saved ones no longer valid). */
export async function inboxSettingsOf(db: Queryable, workspaceId: string): Promise<InboxSettings> {
  const { rows } = await db.query('SELECT inbox_settings FROM workspaces WHERE id = $1', [workspaceId]);
  const stored = inboxSettingsBody.safeParse({ ...INBOX_DEFAULTS, ...(rows[0]?.inbox_settings ?? {}) });
  return stored.success ? stored.data : { ...INBOX_DEFAULTS };
}

export interface InboxSettingsDeps {
  pool: Queryable;
  operators: OperatorService;
  workspaces: WorkspaceService;
}

type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;
const PATH = '/api/admin/workspaces/:slug/inbox-settings';

export function inboxSettingsRoutes(deps: InboxSettingsDeps) {
  const workspaceOf = async (request: SlugRequest, permission: Permission) => {
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
    registerRoute(scope, getInboxSettingsRoute, async (request) => {
      const workspace = await workspaceOf(request, 'settings.read');
      return { ok: true as const, ...(await inboxSettingsOf(deps.pool, workspace.id)) };
    });
    registerRoute(
      scope,
      saveInboxSettingsRoute,
      async (request, _reply, input) => {
        const workspace = await workspaceOf(request, 'settings.manage');
        const body = input.body();
        await deps.pool.query('UPDATE workspaces SET inbox_settings = $2 WHERE id = $1', [
          workspace.id,
          JSON.stringify(body),
        ]);
        return { ok: true as const, ...body };
      },
      { audit: 'inbox_settings.updated' },
    );
  };
}

const errors = errorResponses({
  '400': 'Bad JSON, or a field that fails its checks: each issue names the field and what to fix.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or (on a save) the role is not owner or admin.',
  '404': 'Not a workspace of the operator.',
  '413': 'The body is over 64 KiB.',
  '415': 'The body is not JSON.',
  '500': 'An unanticipated failure.',
});
const saved = named('AdminInboxSettings', inboxSettingsSchema);

export const getInboxSettingsRoute = adminRoute({
  method: 'GET',
  url: PATH,
  operationId: 'getInboxSettings',
  summary: 'Inbox settings',
  description: 'After how many minutes a lead waiting for a person turns amber, then red, in the inbox.',
  params: slugParams,
  responses: {
    '200': answer('The settings (the defaults, 5 and 15, until saved).', saved),
    ...errors('401', '404', '500'),
  },
});
export const saveInboxSettingsRoute = adminRoute({
  method: 'PUT',
  url: PATH,
  operationId: 'saveInboxSettings',
  summary: 'Save inbox settings',
  description: 'Owners and admins.',
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminInboxSettingsSave', inboxSettingsBody),
  responses: { '200': answer('Saved.', saved), ...errors('400', '401', '403', '404', '413', '415', '500') },
});

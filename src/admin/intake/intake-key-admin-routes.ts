import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Authenticator } from '../../auth/authenticator.ts';
import { registerRoute } from '../../http/route-contract.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import type { ApiKeyListing } from '../../workspaces/api-key-queries.ts';
import type { PublishableKeys } from '../../workspaces/api-key-publishable.ts';
import type { KeyCaps } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import * as c from './intake-admin-contracts.ts';

// The Form page's publishable keys (docs/INTAKE.md, "The Form page"): the same service as
// `leadintake key create --publishable` (PublishableKeys). Everyone in the workspace sees the list
// (prefixes and origins, never a key); owners and admins create, change origins and revoke
// (`keys.manage`), each in the audit log.

export interface IntakeKeyAdminDeps {
  operators: OperatorService;
  keys: PublishableKeys;
  /** Revocation and new origins apply at once in this process; others within API_KEY_CACHE_TTL_MS. */
  authenticator: Authenticator;
  caps: KeyCaps;
}

type SlugRequest = FastifyRequest<{ Params: { slug: string } }>;

const view = (k: ApiKeyListing) => ({
  id: k.id,
  name: k.name,
  prefix: k.prefix,
  livemode: k.livemode,
  allowedOrigins: k.allowedOrigins,
  hourlyLimit: k.hourlyLimit,
  createdAt: k.createdAt.toISOString(),
  lastUsedAt: k.lastUsedAt?.toISOString() ?? null,
  revokedAt: k.revokedAt?.toISOString() ?? null,
});

export function intakeKeyAdminRoutes(deps: IntakeKeyAdminDeps) {
  const member = async (request: SlugRequest, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    return requireMembership(session, request.params.slug, permission);
  };
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.listPublishableKeysRoute, async (request) => {
      const m = await member(request, 'settings.read');
      return { ok: true as const, keys: (await deps.keys.list(m.workspaceId)).map(view) };
    });
    registerRoute(
      scope,
      c.createPublishableKeyRoute,
      async (request, _reply, input) => {
        const m = await member(request, 'keys.manage');
        const body = input.body();
        const key = await deps.keys.create(
          {
            workspaceId: m.workspaceId,
            allowedOrigins: body.allowedOrigins,
            sandbox: body.sandbox,
            ...(body.name ? { name: body.name } : {}),
          },
          deps.caps,
        );
        return { ok: true as const, key };
      },
      { audit: 'publishable_key.created' },
    );
    registerRoute(
      scope,
      c.setPublishableKeyOriginsRoute,
      async (request, _reply, input) => {
        const m = await member(request, 'keys.manage');
        if (!(await deps.keys.setOrigins(m.workspaceId, request.params.id, input.body().allowedOrigins)))
          throw new AppError('api_key_not_found');
        deps.authenticator.invalidate();
        return { ok: true as const };
      },
      { audit: 'publishable_key.origins_changed' },
    );
    registerRoute(
      scope,
      c.revokePublishableKeyRoute,
      async (request) => {
        const m = await member(request, 'keys.manage');
        // Another workspace's key, or a secret key, is not found here, even by its id.
        if (!(await deps.keys.revoke(m.workspaceId, request.params.id))) throw new AppError('api_key_not_found');
        deps.authenticator.invalidate();
        return { ok: true as const };
      },
      { audit: 'publishable_key.revoked' },
    );
  };
}

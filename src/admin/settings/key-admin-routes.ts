import type { FastifyInstance, FastifyRequest } from 'fastify';
import { listApiKeys, revokeApiKey } from '../../workspaces/api-key-queries.ts';
import type { Authenticator } from '../../auth/authenticator.ts';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import { AppError } from '../../shared/errors.ts';
import type { KeyCaps, WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './settings-admin-contracts.ts';

// The API keys page's admin API (docs/DASHBOARD.md, "Providers, API keys and team"): the same
// functions as `leadintake key create|list|revoke` (WorkspaceService.createKey, api-key-queries).
// Owners and admins (`keys.manage`). The key itself is in the create answer only; the database
// holds its hash.

export interface KeyAdminDeps {
  pool: Pool;
  operators: OperatorService;
  workspaces: WorkspaceService;
  /** Revocation drops this process's cache at once; other processes within API_KEY_CACHE_TTL_MS. */
  authenticator: Authenticator;
  cacheTtlMs: number;
  /** The installation's caps on a workspace's keys (MAX_KEY_HOURLY_LIMIT, MAX_API_KEYS_PER_WORKSPACE). */
  caps: KeyCaps;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function keyAdminRoutes(deps: KeyAdminDeps) {
  const workspaceOf = async (request: FastifyRequest<{ Params: { slug: string } }>) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, 'keys.manage');
    return membership;
  };

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.listKeysRoute, async (request) => {
      const membership = await workspaceOf(request);
      const keys = await listApiKeys(deps.pool, membership.workspaceId);
      return { ok: true as const, keys, cacheTtlSeconds: deps.cacheTtlMs / 1000 };
    });
    registerRoute(
      scope,
      c.createKeyRoute,
      async (request, _reply, input) => {
        const membership = await workspaceOf(request);
        const body = input.body();
        const opts = {
          name: body.name,
          sandbox: body.sandbox,
          ...(body.hourlyLimit ? { hourlyLimit: body.hourlyLimit } : {}),
        };
        const key = await deps.workspaces.createKey(membership.slug, opts, deps.caps);
        if (!key) throw new AppError('workspace_not_found');
        return { ok: true as const, key };
      },
      { audit: 'key.created' },
    );
    registerRoute(
      scope,
      c.revokeKeyRoute,
      async (request) => {
        const membership = await workspaceOf(request);
        const id = request.params.id;
        // Another workspace's key is not found here, even by its id.
        if (!UUID.test(id) || !(await listApiKeys(deps.pool, membership.workspaceId)).some((k) => k.id === id))
          throw new AppError('api_key_not_found');
        await revokeApiKey(deps.pool, id);
        deps.authenticator.invalidate();
        return { ok: true as const };
      },
      { audit: 'key.revoked' },
    );
  };
}

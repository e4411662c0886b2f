import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queryable } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Permission } from '../../operators/roles.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { parse } from '../../shared/schema-parse.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './logs-admin-contracts.ts';
import type { DeadLetterAdmin } from './dead-letter-admin.ts';
import { auditLogPage, integrationLogPage } from './logs-queries.ts';
import * as s from './logs-admin-schemas.ts';

// The Logs page's admin API (docs/DASHBOARD.md, "Logs, dead letters and the audit log"): thin
// handlers. The integration log and the dead letters need `logs.read`, retrying `jobs.retry`,
// the audit log `audit.read`.

export interface LogsAdminDeps {
  pool: Queryable;
  operators: OperatorService;
  deadLetters: DeadLetterAdmin;
}

type Slug = { Params: { slug: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE = 50;

export function logsAdminRoutes(deps: LogsAdminDeps) {
  const member = async (request: FastifyRequest<Slug>, permission: Permission) =>
    requireMembership(await requireSession(deps.operators, request), request.params.slug, permission);

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 16 * 1024;
    });
    registerRoute(scope, c.integrationLogRoute, async (request, _reply, input) => {
      const m = await member(request, 'logs.read');
      const q = input.query();
      const page = await integrationLogPage(deps.pool, m.workspaceId, {
        provider: q.provider,
        errorsOnly: q.errors === 'true',
        leadId: q.leadId,
        before: q.cursor,
        limit: q.limit ?? PAGE,
      });
      return { ok: true as const, ...page };
    });
    registerRoute(scope, c.deadLettersRoute, async (request) => {
      const m = await member(request, 'logs.read');
      return { ok: true as const, deadLetters: await deps.deadLetters.list(m.workspaceId) };
    });
    registerRoute(
      scope,
      c.retryAllRoute,
      async (request) => {
        const m = await member(request, 'jobs.retry');
        // A POST without a body is `{}`: nothing to read, but anything else is refused.
        parse(s.retryAllBody, request.body ?? {});
        return { ok: true as const, retried: await deps.deadLetters.retry(m.workspaceId, 'all') };
      },
      { audit: 'dead_letter.retried' },
    );
    registerRoute(
      scope,
      c.retryOneRoute,
      async (request) => {
        const m = await member(request, 'jobs.retry');
        const id = request.params.id;
        // Another workspace's turn is as unknown as one that does not exist.
        if (!UUID.test(id) || (await deps.deadLetters.retry(m.workspaceId, id)) === 0)
          throw new AppError('dead_letter_not_found');
        return { ok: true as const, retried: 1 };
      },
      { audit: 'dead_letter.retried' },
    );
    registerRoute(scope, c.auditLogRoute, async (request, _reply, input) => {
      const m = await member(request, 'audit.read');
      const q = input.query();
      return {
        ok: true as const,
        ...(await auditLogPage(deps.pool, m.workspaceId, { before: q.cursor, limit: q.limit ?? PAGE })),
      };
    });
  };
}

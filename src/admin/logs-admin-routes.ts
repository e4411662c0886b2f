import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.ts';
import type { OperatorService } from '../operators/operator-service.ts';
import type { Permission } from '../operators/roles.ts';
import { AppError } from '../shared/errors.ts';
import { requireMembership, requireSession } from './admin-auth.ts';
import { parse } from './admin-parse.ts';
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
type SlugId = { Params: { slug: string; id: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const PAGE = 50;

export function logsAdminRoutes(deps: LogsAdminDeps) {
  const member = async (request: FastifyRequest<Slug>, permission: Permission) =>
    requireMembership(await requireSession(deps.operators, request), request.params.slug, permission);
  const base = '/api/admin/workspaces/:slug';

  return async function (scope: FastifyInstance): Promise<void> {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 16 * 1024;
    });
    scope.get<Slug>(`${base}/integration-log`, async (request) => {
      const m = await member(request, 'logs.read');
      const q = parse(s.integrationLogQuery, request.query);
      const page = await integrationLogPage(deps.pool, m.workspaceId, {
        provider: q.provider, errorsOnly: q.errors === 'true', leadId: q.leadId, before: q.cursor, limit: q.limit ?? PAGE,
      });
      return { ok: true as const, ...page };
    });
    scope.get<Slug>(`${base}/dead-letters`, async (request) => {
      const m = await member(request, 'logs.read');
      return { ok: true as const, deadLetters: await deps.deadLetters.list(m.workspaceId) };
    });
    scope.post<Slug>(`${base}/dead-letters/retry`, { config: { audit: 'dead_letter.retried' } }, async (request) => {
      const m = await member(request, 'jobs.retry');
      parse(s.retryAllBody, request.body ?? {});
      return { ok: true as const, retried: await deps.deadLetters.retry(m.workspaceId, 'all') };
    });
    scope.post<SlugId>(`${base}/dead-letters/:id/retry`, { config: { audit: 'dead_letter.retried' } }, async (request) => {
      const m = await member(request, 'jobs.retry');
      const id = request.params.id;
      // Another workspace's turn is as unknown as one that does not exist.
      if (!UUID.test(id) || (await deps.deadLetters.retry(m.workspaceId, id)) === 0) throw new AppError('dead_letter_not_found');
      return { ok: true as const, retried: 1 };
    });
    scope.get<Slug>(`${base}/audit-log`, async (request) => {
      const m = await member(request, 'audit.read');
      const q = parse(s.auditLogQuery, request.query);
      return { ok: true as const, ...(await auditLogPage(deps.pool, m.workspaceId, { before: q.cursor, limit: q.limit ?? PAGE })) };
    });
  };
}

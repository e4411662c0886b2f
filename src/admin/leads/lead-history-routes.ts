import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queryable } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute, type RouteInput } from '../../http/route-contract.ts';
import * as c from './lead-history-contracts.ts';
import { HISTORY_PAGE, leadInWorkspace, messagePage, timelinePage, trafficPage } from './lead-history-queries.ts';
import type * as s from './lead-history-schemas.ts';

// The lead page's history in pages (docs/DASHBOARD.md, "Lead page"): older messages and events
// when the operator asks for them, the provider traffic when its section is opened. Thin
// handlers; `leads.read`, like the lead page.

export interface LeadHistoryDeps {
  pool: Queryable;
  operators: OperatorService;
}

type LeadParams = { Params: { slug: string; id: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function leadHistoryRoutes(deps: LeadHistoryDeps) {
  /** The workspace, the lead (one of its leads, else 404) and the page asked for. */
  const scope = async (request: FastifyRequest<LeadParams>, input: RouteInput<typeof c.messagesRoute>) => {
    const m = requireMembership(await requireSession(deps.operators, request), request.params.slug, 'leads.read');
    const q = input.query();
    const leadId = request.params.id;
    const found = UUID.test(leadId) && (await leadInWorkspace(deps.pool, m.workspaceId, leadId));
    if (!found) throw new AppError('lead_not_found');
    return { workspaceId: m.workspaceId, query: { leadId, before: q.before, limit: q.limit ?? HISTORY_PAGE } };
  };

  return async (app: FastifyInstance): Promise<void> => {
    registerRoute(app, c.messagesRoute, async (request, _reply, input): Promise<s.MessagePageBody> => {
      const { query } = await scope(request, input);
      const page = await messagePage(deps.pool, query);
      return { ok: true, messages: page.rows.reverse(), olderCursor: page.olderCursor };
    });
    registerRoute(app, c.timelineRoute, async (request, _reply, input): Promise<s.TimelinePageBody> => {
      const { query } = await scope(request, input);
      const page = await timelinePage(deps.pool, query);
      return { ok: true, timeline: page.rows.reverse(), olderCursor: page.olderCursor };
    });
    registerRoute(app, c.providerTrafficRoute, async (request, _reply, input): Promise<s.TrafficPageBody> => {
      const { workspaceId, query } = await scope(request, input);
      const page = await trafficPage(deps.pool, workspaceId, query);
      return { ok: true, entries: page.rows, olderCursor: page.olderCursor };
    });
  };
}

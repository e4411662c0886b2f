import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Queryable } from '../db/pool.ts';
import type { OperatorService } from '../operators/operator-service.ts';
import { AppError } from '../shared/errors.ts';
import { requireMembership, requireSession } from './admin-auth.ts';
import { parse } from './admin-parse.ts';
import { HISTORY_PAGE, leadInWorkspace, messagePage, timelinePage, trafficPage } from './lead-history-queries.ts';
import * as s from './lead-history-schemas.ts';

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
  const scope = async (request: FastifyRequest<LeadParams>) => {
    const m = requireMembership(await requireSession(deps.operators, request), request.params.slug, 'leads.read');
    const q = parse(s.historyQuery, request.query);
    const leadId = request.params.id;
    const found = UUID.test(leadId) && (await leadInWorkspace(deps.pool, m.workspaceId, leadId));
    if (!found) throw new AppError('lead_not_found');
    return { workspaceId: m.workspaceId, query: { leadId, before: q.before, limit: q.limit ?? HISTORY_PAGE } };
  };
  const base = '/api/admin/workspaces/:slug/leads/:id';

  return async function (app: FastifyInstance): Promise<void> {
    app.get<LeadParams>(`${base}/messages`, async (request): Promise<s.MessagePageBody> => {
      const { query } = await scope(request);
      const page = await messagePage(deps.pool, query);
      return { ok: true, messages: page.rows.reverse(), olderCursor: page.olderCursor };
    });
    app.get<LeadParams>(`${base}/timeline`, async (request): Promise<s.TimelinePageBody> => {
      const { query } = await scope(request);
      const page = await timelinePage(deps.pool, query);
      return { ok: true, timeline: page.rows.reverse(), olderCursor: page.olderCursor };
    });
    app.get<LeadParams>(`${base}/provider-traffic`, async (request): Promise<s.TrafficPageBody> => {
      const { workspaceId, query } = await scope(request);
      const page = await trafficPage(deps.pool, workspaceId, query);
      return { ok: true, entries: page.rows, olderCursor: page.olderCursor };
    });
  };
}

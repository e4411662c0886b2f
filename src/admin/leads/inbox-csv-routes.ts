import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import { exportCsvRoute } from './inbox-csv-contracts.ts';
import { CSV_HEADER, CSV_MAX_ROWS, csvLine, csvRow } from './inbox-csv.ts';
import { filtersOf } from './inbox-filters.ts';
import { hasLiveLeads, listInbox, PAGE_SIZE_MAX, type InboxQuery } from './inbox-queries.ts';

// The inbox's current filter as a CSV file (docs/DASHBOARD.md, "Inbox"): the same query
// parameters and the same leads as GET …/leads, in the same order, for whoever may read the
// workspace's leads (`leads.read`). Each export is in the audit log (`leads.exported`): it is the
// workspace's personal data in bulk. At most CSV_MAX_ROWS rows; `X-Leads-Truncated: true` says
// the filter matched more.

export interface InboxCsvDeps {
  pool: Pool;
  clock: Clock;
  operators: OperatorService;
  workspaces: WorkspaceService;
}

export function inboxCsvRoutes(deps: InboxCsvDeps) {
  return async (scope: FastifyInstance): Promise<void> => {
    registerRoute(
      scope,
      exportCsvRoute,
      async (request, reply, input) => {
        const session = await requireSession(deps.operators, request);
        const membership = requireMembership(session, request.params.slug, 'leads.read');
        const query = input.query();
        const workspace = await deps.workspaces.findBySlug(membership.slug);
        if (!workspace) throw new AppError('workspace_not_found');
        // As the inbox: without a choice, a workspace with only sandbox leads shows them.
        const sandbox =
          query.sandbox === undefined ? !(await hasLiveLeads(deps.pool, workspace.id)) : query.sandbox === 'true';
        const base: Omit<InboxQuery, 'limit'> = {
          workspaceId: workspace.id,
          sandbox,
          operatorId: session.operator.id,
          ...(query.status ? { status: query.status } : {}),
          ...(query.q ? { search: query.q } : {}),
          ...(query.sort ? { sort: query.sort } : {}),
          ...(query.unread === 'true' ? { unread: true } : {}),
          ...(workspace.agent?.defaultCountry ? { defaultCountry: workspace.agent.defaultCountry } : {}),
        };
        const filters = filtersOf(query, workspace.agent?.timeZone ?? 'UTC');
        if (filters) base.filters = filters;
        // Keyset pages, as the inbox reads them; the rows are held until sent (at most CSV_MAX_ROWS).
        const lines = [csvLine(CSV_HEADER)];
        let cursor: string | null = null;
        let rows = 0;
        let truncated = false;
        do {
          const limit = Math.min(PAGE_SIZE_MAX * 10, CSV_MAX_ROWS - rows);
          const page = await listInbox(deps.pool, { ...base, limit, ...(cursor ? { cursor } : {}) });
          for (const r of page.leads) lines.push(csvRow(r, membership.channel));
          rows += page.leads.length;
          cursor = page.nextCursor;
          truncated = cursor !== null && rows >= CSV_MAX_ROWS;
        } while (cursor && !truncated);
        const day = deps.clock().toISOString().slice(0, 10);
        void reply
          .header('content-type', 'text/csv; charset=utf-8')
          .header('content-disposition', `attachment; filename="leads-${workspace.slug}-${day}.csv"`)
          .header('cache-control', 'no-store')
          .header('x-leads-truncated', String(truncated));
        // A byte-order mark, so spreadsheets read the names as UTF-8.
        return `\uFEFF${lines.join('')}`;
      },
      { audit: 'leads.exported' },
    );
  };
}

import type { FastifyInstance } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import { analyticsRoute } from './analytics-admin-contracts.ts';
import { analytics } from './analytics-days.ts';
import { analyticsBySource } from './analytics-sources.ts';
import { SPEED_BUCKETS } from './analytics-queries.ts';
import type { AnalyticsBody } from './analytics-admin-schemas.ts';

// The Analytics page's admin API (docs/DASHBOARD.md, "Analytics"): every role reads it
// (permission `analytics.read`).

export interface AnalyticsAdminDeps {
  pool: Pool;
  clock: Clock;
  operators: OperatorService;
  workspaces: WorkspaceService;
}

const PRESET_DAYS = { '7d': 7, '30d': 30, '90d': 90 } as const;

/** Today's date (YYYY-MM-DD) in the time zone. */
export function localToday(now: Date, timeZone: string): string {
  return new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(now);
}

const addDays = (day: string, n: number) =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

export function analyticsAdminRoutes(deps: AnalyticsAdminDeps) {
  return async (scope: FastifyInstance): Promise<void> => {
    registerRoute(scope, analyticsRoute, async (request, _reply, input): Promise<AnalyticsBody> => {
      const session = await requireSession(deps.operators, request);
      const membership = requireMembership(session, request.params.slug, 'analytics.read');
      const query = input.query();
      const workspace = await deps.workspaces.findBySlug(membership.slug);
      if (!workspace) throw new AppError('workspace_not_found');
      const timeZone = workspace.agent?.timeZone ?? 'UTC';
      const period = query.period ?? '30d';
      let from: string;
      let to: string;
      if (period === 'custom') {
        from = query.from!;
        to = query.to!;
      } else {
        to = localToday(deps.clock(), timeZone);
        from = addDays(to, 1 - PRESET_DAYS[period]);
      }
      const sandbox = query.sandbox === 'true';
      const q = { workspaceId: workspace.id, sandbox, timeZone, from, to };
      const [result, bySource] = await Promise.all([analytics(deps.pool, q), analyticsBySource(deps.pool, q)]);
      return {
        ok: true,
        channel: membership.channel,
        timeZone,
        period,
        from,
        to,
        sandbox,
        speedBuckets: [...SPEED_BUCKETS],
        ...result,
        bySource,
      };
    });
  };
}

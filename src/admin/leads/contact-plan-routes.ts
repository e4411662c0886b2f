import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { PlanActions } from '../../contact-plan/plan-actions.ts';
import { registerRoute } from '../../http/route-contract.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import type { ActionResult } from './admin-schemas.ts';
import * as c from './contact-plan-contracts.ts';

// The lead page's Follow-ups buttons (docs/DASHBOARD.md, "Follow-ups"): thin handlers over
// PlanActions (src/contact-plan/plan-actions.ts), with the lead actions' role (`leads.act`) and an
// audit row each.

export interface ContactPlanRouteDeps {
  operators: OperatorService;
  plans: PlanActions;
}

type LeadRequest = FastifyRequest<{ Params: { slug: string; id: string } }>;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function contactPlanRoutes(deps: ContactPlanRouteDeps) {
  const scopeOf = async (request: LeadRequest) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, 'leads.act');
    if (!UUID.test(request.params.id)) throw new AppError('lead_not_found');
    const op = { id: session.operator.id, name: session.operator.name };
    return { workspaceId: membership.workspaceId, leadId: request.params.id, op };
  };
  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    for (const [route, run, audit] of [
      [c.callNowRoute, deps.plans.callNow.bind(deps.plans), 'lead.contact_plan_call_now'],
      [c.skipRoute, deps.plans.skip.bind(deps.plans), 'lead.contact_plan_skipped'],
      [c.stopRoute, deps.plans.stop.bind(deps.plans), 'lead.contact_plan_stopped'],
    ] as const) {
      registerRoute(
        scope,
        route,
        async (request): Promise<ActionResult> => {
          const s = await scopeOf(request);
          return { ok: true, status: await run(s.workspaceId, s.leadId, s.op) };
        },
        { audit },
      );
    }
  };
}

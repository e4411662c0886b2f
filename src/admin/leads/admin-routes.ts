import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService, SignedIn } from '../../operators/operator-service.ts';
import { permissionsOf, type Permission } from '../../operators/roles.ts';
import type { Clock } from '../../shared/clock.ts';
import { AppError } from '../../shared/errors.ts';
import type { WorkspaceService } from '../../workspaces/workspace-service.ts';
import { clearSessionCookie, requireMembership, requireSession, sessionCookie } from '../admin-auth.ts';
import type * as s from './admin-schemas.ts';
import { filtersOf } from './inbox-filters.ts';
import { countInbox, COUNT_CAP, hasLiveLeads, type InboxNarrowing, listInbox } from './inbox-queries.ts';
import type { LeadActions } from './lead-actions.ts';
import { registerRoute, type RouteContract, type RouteInput } from '../../http/route-contract.ts';
import * as c from './admin-contracts.ts';
import { inboxSettingsOf } from './inbox-settings.ts';
import { markRead } from './lead-ownership.ts';
import { leadPage } from './lead-page.ts';
import { readPlans } from '../../contact-plan/contact-plan-queries.ts';
import { nextAttemptOf } from './contact-plan-view.ts';
import type { OperatorReplies } from './operator-reply.ts';

// The admin JSON API under /api/admin (docs/DASHBOARD.md): thin handlers over the operator
// service, the inbox queries and the lead actions. The web app uses nothing else.

export interface AdminRouteDeps {
  pool: Pool;
  clock: Clock;
  operators: OperatorService;
  workspaces: WorkspaceService;
  actions: LeadActions;
  replies: OperatorReplies;
  /** Secure cookies when the service is reached over https. */
  secureCookies: boolean;
}

const sessionBody = (session: SignedIn): s.SessionBody => ({
  ok: true,
  operator: session.operator,
  csrfToken: session.csrfToken,
  workspaces: session.memberships.map((m) => ({
    slug: m.slug,
    name: m.name,
    channel: m.channel,
    role: m.role,
    permissions: permissionsOf(m.role),
  })),
});

type LeadRequest = { Params: { slug: string; id: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function adminRoutes(deps: AdminRouteDeps) {
  /** Session, membership and permission of a request about one of the workspace's leads. */
  const leadScope = async (request: FastifyRequest<LeadRequest>, permission: Permission) => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, permission);
    if (!UUID.test(request.params.id)) throw new AppError('lead_not_found');
    return {
      session,
      membership,
      leadId: request.params.id,
      operator: { id: session.operator.id, name: session.operator.name },
    };
  };

  return async (scope: FastifyInstance): Promise<void> => {
    // The public API's limit: nothing an operator sends is larger (the 413 message says 64 KiB).
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.signInRoute, async (request, reply, input) => {
      const body = input.body();
      const { token, ...session } = await deps.operators.signIn(body.email, body.password, request.ip ?? 'unknown');
      void reply.header('set-cookie', sessionCookie(token, deps.secureCookies));
      return sessionBody(session);
    });

    registerRoute(scope, c.getSessionRoute, async (request) =>
      sessionBody(await requireSession(deps.operators, request)),
    );

    registerRoute(scope, c.signOutRoute, async (request, reply, input) => {
      const query = input.query();
      const session = await requireSession(deps.operators, request);
      if (query.everywhere === 'true') await deps.operators.signOutEverywhere(session.operator.id);
      else await deps.operators.signOut(session.token);
      clearSessionCookie(reply, deps.secureCookies);
      return { ok: true as const };
    });

    registerRoute(scope, c.listLeadsRoute, async (request, _reply, input): Promise<s.InboxBody> => {
      const session = await requireSession(deps.operators, request);
      const membership = requireMembership(session, request.params.slug, 'leads.read');
      const query = input.query();
      const workspace = await deps.workspaces.findBySlug(membership.slug);
      if (!workspace) throw new AppError('workspace_not_found');
      // No choice made: a workspace with only sandbox leads (a new or demo one) shows them.
      const sandbox =
        query.sandbox === undefined ? !(await hasLiveLeads(deps.pool, workspace.id)) : query.sandbox === 'true';
      // The counts are of the same search, filters and sort as the list: a tab's number is its list's length.
      // Unread is the operator's own (read markers are per operator).
      const narrowing: InboxNarrowing & { operatorId: string } = {
        ...(query.q ? { search: query.q } : {}),
        ...(query.sort ? { sort: query.sort } : {}),
        ...(workspace.agent?.defaultCountry ? { defaultCountry: workspace.agent.defaultCountry } : {}),
        filters: filtersOf(query, workspace.agent?.timeZone ?? 'UTC'),
        ...(query.unread === 'true' ? { unread: true } : {}),
        operatorId: session.operator.id,
      };
      const [page, counts, settings] = await Promise.all([
        listInbox(deps.pool, {
          ...narrowing,
          workspaceId: workspace.id,
          sandbox,
          limit: query.limit ?? 50,
          ...(query.status ? { status: query.status } : {}),
          ...(query.cursor ? { cursor: query.cursor } : {}),
        }),
        countInbox(deps.pool, workspace.id, sandbox, narrowing),
        inboxSettingsOf(deps.pool, workspace.id),
      ]);
      // "Next attempt" of the leads in a running plan: one statement for the page.
      const plans = await readPlans(
        deps.pool,
        page.leads.map((l) => l.id),
      );
      return {
        ok: true,
        ...page,
        leads: page.leads.map((l) => ({ ...l, nextAttempt: nextAttemptOf(plans.get(l.id)) })),
        counts,
        countCap: COUNT_CAP,
        sandbox,
        waiting: { amberMinutes: settings.waitingAmberMinutes, redMinutes: settings.waitingRedMinutes },
      };
    });

    registerRoute(scope, c.leadPageRoute, async (request) => {
      const { membership, leadId, operator } = await leadScope(request, 'leads.read');
      const workspace = await deps.workspaces.findBySlug(membership.slug);
      const page = workspace ? await leadPage(deps.pool, workspace, leadId, deps.clock()) : null;
      if (!page) throw new AppError('lead_not_found');
      // Opened: what the lead wrote so far is read, for this operator only.
      await markRead(deps.pool, membership.workspaceId, leadId, operator.id);
      // The composer shows what a reply outside the window sends.
      if (page.whatsappWindow) {
        page.whatsappWindow.template = await deps.replies.templateFor(
          membership.workspaceId,
          page.lead.livemode,
          page.lead.name,
        );
      }
      return page;
    });

    // Each action is written to the audit log as `lead.<path>` (audit-trail.ts).
    const action = <C extends RouteContract>(
      contract: C,
      permission: Permission,
      run: (a: Awaited<ReturnType<typeof leadScope>>, input: RouteInput<C>) => Promise<s.ActionResult>,
    ) =>
      // Every action's contract has the lead's params (admin-contracts.ts).
      registerRoute(
        scope,
        contract,
        async (request, _reply, input) =>
          run(await leadScope(request as FastifyRequest<LeadRequest>, permission), input),
        { audit: `lead.${contract.url.slice(contract.url.lastIndexOf('/') + 1)}` },
      );

    action(c.takeOverRoute, 'leads.act', async (a) => ({
      ok: true,
      status: await deps.actions.takeOver(a.membership.workspaceId, a.leadId, a.operator),
    }));
    action(c.resumeRoute, 'leads.act', async (a) => ({
      ok: true,
      status: await deps.actions.resume(a.membership.workspaceId, a.leadId, a.operator),
    }));
    action(c.outcomeRoute, 'leads.act', async (a, input) => {
      const body = input.body();
      return {
        ok: true,
        status: await deps.actions.setOutcome(a.membership.workspaceId, a.leadId, a.operator, body.outcome, body.note),
      };
    });
    action(c.replyRoute, 'leads.act', async (a, input) => {
      const body = input.body();
      const message = body.text !== undefined ? { text: body.text } : { template: true as const };
      return { ok: true, status: await deps.replies.reply(a.membership.workspaceId, a.leadId, a.operator, message) };
    });

    registerRoute(scope, c.deleteLeadRoute, async (request) => {
      const a = await leadScope(request, 'leads.delete');
      await deps.actions.delete(a.membership.workspaceId, a.leadId, a.operator);
      return { ok: true as const };
    });
  };
}

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OperatorService } from '../../operators/operator-service.ts';
import type { TeamService } from '../../operators/team-service.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession, sessionCookie } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './team-admin-contracts.ts';
import { rememberOperator } from '../audit-trail.ts';

// The Team page's admin API and the invitee's side of an invitation (docs/DASHBOARD.md,
// "Providers, API keys and team"). Team routes are for owners only (`team.manage`): they decide
// who else is an owner. The invitation's token travels in request bodies, never in a URL (the
// page's link carries it after `#`, which browsers do not send), so no log or Referer sees it.

export interface TeamAdminDeps {
  operators: OperatorService;
  team: TeamService;
  publicBaseUrl: string;
  secureCookies: boolean;
}

type MemberParams = { Params: { slug: string; id: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function teamAdminRoutes(deps: TeamAdminDeps) {
  const owner = async (request: FastifyRequest<{ Params: { slug: string } }>) => {
    const session = await requireSession(deps.operators, request);
    return { session, membership: requireMembership(session, request.params.slug, 'team.manage') };
  };
  const memberId = (request: FastifyRequest<MemberParams>): string => {
    if (!UUID.test(request.params.id)) throw new AppError('member_not_found');
    return request.params.id;
  };
  const inviteLink = (token: string) => `${deps.publicBaseUrl.replace(/\/+$/, '')}/admin/invite#${token}`;

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.getTeamRoute, async (request) => {
      const { membership } = await owner(request);
      return { ok: true as const, ...(await deps.team.team(membership.workspaceId)) };
    });
    registerRoute(
      scope,
      c.inviteRoute,
      async (request, _reply, input) => {
        const { session, membership } = await owner(request);
        const body = input.body();
        const { invite, token } = await deps.team.invite(
          membership.workspaceId,
          body.email,
          body.role,
          session.operator.id,
        );
        return { ok: true as const, invite, link: inviteLink(token) };
      },
      { audit: 'member.invited' },
    );
    registerRoute(
      scope,
      c.cancelInviteRoute,
      async (request) => {
        const { membership } = await owner(request);
        if (!UUID.test(request.params.id) || !(await deps.team.cancelInvite(membership.workspaceId, request.params.id)))
          throw new AppError('invite_not_found');
        return { ok: true as const };
      },
      { audit: 'invite.cancelled' },
    );
    registerRoute(
      scope,
      c.changeRoleRoute,
      async (request, _reply, input) => {
        const { session, membership } = await owner(request);
        const body = input.body();
        await deps.team.changeRole(membership.workspaceId, session.operator.id, memberId(request), body.role);
        return { ok: true as const };
      },
      { audit: 'member.role_changed' },
    );
    registerRoute(
      scope,
      c.removeMemberRoute,
      async (request) => {
        const { session, membership } = await owner(request);
        await deps.team.remove(membership.workspaceId, session.operator.id, memberId(request));
        return { ok: true as const };
      },
      { audit: 'member.removed' },
    );

    // The invitee's side: no membership yet, so no permission to check; the token is the authority.
    registerRoute(scope, c.lookUpInviteRoute, async (_request, _reply, input) => {
      const body = input.body();
      const invite = await deps.team.lookup(body.token);
      if (!invite) throw new AppError('invite_not_found');
      return {
        ok: true as const,
        email: invite.email,
        role: invite.role,
        workspace: { slug: invite.slug, name: invite.workspaceName },
        expiresAt: invite.expiresAt,
      };
    });
    registerRoute(
      scope,
      c.acceptInviteRoute,
      async (request, reply, input) => {
        const body = input.body();
        const slug = request.params.slug;
        if (!body.name || !body.password) {
          // No name and password: the invitation joins the signed-in account (CSRF checked like
          // every signed-in POST); not signed in, the 401 tells the page to sign in first.
          const session = await requireSession(deps.operators, request);
          await deps.team.accept(body.token, slug, { operatorId: session.operator.id, email: session.operator.email });
          const refreshed = await deps.operators.session(session.token);
          if (refreshed) rememberOperator(request, refreshed);
          return { ok: true as const, slug };
        }
        // A name and password: a new account for the invited address (409 when it has one already),
        // throttled per client address with the address's sign-ins: no session to count it against.
        const ip = request.ip ?? 'unknown';
        const { email } = await deps.team.accept(body.token, slug, { name: body.name, password: body.password, ip });
        const { token, ...signedIn } = await deps.operators.signIn(email, body.password, ip);
        rememberOperator(request, signedIn);
        void reply.header('set-cookie', sessionCookie(token, deps.secureCookies));
        return { ok: true as const, slug };
      },
      { audit: 'invite.accepted' },
    );
  };
}

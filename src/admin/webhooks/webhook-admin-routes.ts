import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { OperatorService } from '../../operators/operator-service.ts';
import { AppError } from '../../shared/errors.ts';
import {
  endpointLimitText,
  isEndpointError,
  type EndpointError,
  type WebhookEndpointService,
} from '../../webhooks/webhook-endpoint-service.ts';
import { WEBHOOK_EVENT_TYPES } from '../../webhooks/webhook-payload.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { parse } from '../../shared/schema-parse.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './webhook-admin-contracts.ts';
import * as s from './webhook-admin-schemas.ts';

// The Webhooks page's admin API (docs/DASHBOARD.md, "Webhooks"): thin handlers over the same
// service as `leadintake webhook …`. Owners and admins only (permission `webhooks.manage`).

export interface WebhookAdminDeps {
  operators: OperatorService;
  endpoints: WebhookEndpointService;
}

type EndpointParams = { Params: { slug: string; id: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The service's refusals in the one error vocabulary, with a message that says what to fix. */
function fail(e: EndpointError): never {
  switch (e.error) {
    case 'no_workspace':
      throw new AppError('workspace_not_found');
    case 'no_endpoint':
      throw new AppError('webhook_endpoint_not_found');
    case 'bad_url':
      throw new AppError('validation_failed', { issues: [{ path: ['url'], message: `The URL ${e.problem}.` }] });
    case 'bad_event_type':
      throw new AppError('validation_failed', {
        issues: [
          {
            path: ['eventTypes'],
            message: `Unknown event type ${e.type}; use one of ${WEBHOOK_EVENT_TYPES.join(', ')}.`,
          },
        ],
      });
    case 'too_many_endpoints':
      throw new AppError('limit_reached', { message: endpointLimitText(e.max) });
  }
}

const ok = <T>(v: T | EndpointError): T => (isEndpointError(v) ? fail(v) : v);

export function webhookAdminRoutes(deps: WebhookAdminDeps) {
  const workspaceScope = async (request: FastifyRequest<{ Params: { slug: string } }>) => {
    const session = await requireSession(deps.operators, request);
    return requireMembership(session, request.params.slug, 'webhooks.manage');
  };
  /** The endpoint, only when it belongs to the workspace of the URL (another workspace's: 404). */
  const endpointScope = async (request: FastifyRequest<EndpointParams>): Promise<string> => {
    const membership = await workspaceScope(request);
    const id = request.params.id;
    if (!UUID.test(id) || !ok(await deps.endpoints.list(membership.slug)).some((e) => e.id === id))
      throw new AppError('webhook_endpoint_not_found');
    return id;
  };

  return async (scope: FastifyInstance): Promise<void> => {
    scope.addHook('onRoute', (route) => {
      route.bodyLimit = 64 * 1024;
    });
    registerRoute(scope, c.listEndpointsRoute, async (request) => {
      const membership = await workspaceScope(request);
      return {
        ok: true as const,
        endpoints: ok(await deps.endpoints.list(membership.slug)),
        eventTypes: [...WEBHOOK_EVENT_TYPES],
      };
    });
    registerRoute(
      scope,
      c.addEndpointRoute,
      async (request, _reply, input) => {
        const membership = await workspaceScope(request);
        const body = input.body();
        const added = ok(await deps.endpoints.add(membership.slug, body.url, body.eventTypes));
        return { ok: true as const, ...added };
      },
      { audit: 'webhook_endpoint.added' },
    );
    registerRoute(
      scope,
      c.removeEndpointRoute,
      async (request) => {
        const id = await endpointScope(request);
        if (!(await deps.endpoints.remove(id))) throw new AppError('webhook_endpoint_not_found');
        return { ok: true as const };
      },
      { audit: 'webhook_endpoint.removed' },
    );
    registerRoute(
      scope,
      c.enableEndpointRoute,
      async (request) => {
        const id = await endpointScope(request);
        if (!(await deps.endpoints.enable(id))) throw new AppError('webhook_endpoint_not_found');
        return { ok: true as const };
      },
      { audit: 'webhook_endpoint.enabled' },
    );
    registerRoute(
      scope,
      c.rotateSecretRoute,
      async (request) => {
        const id = await endpointScope(request);
        return { ok: true as const, ...ok(await deps.endpoints.rotateSecret(id)) };
      },
      { audit: 'webhook_endpoint.secret_rotated' },
    );
    registerRoute(scope, c.listDeliveriesRoute, async (request, _reply, input) => {
      const id = await endpointScope(request);
      const query = input.query();
      return { ok: true as const, deliveries: ok(await deps.endpoints.deliveries(id, query.limit ?? 50)) };
    });
    registerRoute(
      scope,
      c.replayRoute,
      async (request) => {
        const id = await endpointScope(request);
        // A POST without a body replays them all, as `{}` does.
        const body = parse(s.replayBody, request.body ?? {});
        return { ok: true as const, replayed: ok(await deps.endpoints.replay(id, body.deliveryId)) };
      },
      { audit: 'webhook_endpoint.replayed' },
    );
  };
}

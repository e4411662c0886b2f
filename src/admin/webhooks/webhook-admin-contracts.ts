import { z } from 'zod';
import { named, type NamedSchema } from '../../http/route-contract.ts';
import {
  adminEmptyBody,
  adminOk,
  adminRoute,
  answer,
  csrfHeaders,
  errorResponses,
  slugParam,
  slugParams,
  uuidParam,
} from '../admin-contract.ts';
import * as s from './webhook-admin-schemas.ts';

// The Webhooks page's routes (docs/DASHBOARD.md, "Webhooks"; webhook-admin-routes.ts): session
// cookie, CSRF token on POST and DELETE, owners and admins only.

const ref = {
  list: named('AdminWebhookEndpoints', s.endpointListSchema),
  added: named('AdminWebhookEndpointAdded', s.endpointAddedSchema),
  rotated: named('AdminWebhookSecretRotated', s.secretRotatedSchema),
  log: named('AdminWebhookDeliveries', s.deliveryLogSchema),
  replayed: named('AdminWebhookReplayed', s.replayedSchema),
  add: named('AdminWebhookAdd', s.addEndpointBody),
  replay: named('AdminWebhookReplay', s.replayBody),
};
const errors = errorResponses({
  '400':
    'Bad JSON, or a field that fails its checks (the URL must be https; ' +
    'http only for 127.0.0.1 or localhost, which receive sandbox events only).',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or the role is not owner or admin.',
  '404': 'Not a workspace of the operator, or no such webhook endpoint in it.',
  '409': 'The workspace has as many endpoints as this installation allows (MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE).',
  '413': 'The body is over 64 KiB.',
  '415': 'The body is not JSON.',
  '500': 'An unanticipated failure.',
});
const writing = errors('400', '401', '403', '404', '413', '415', '500');
const base = '/api/admin/workspaces/:slug/webhooks';
const endpointParams = z.object({ slug: slugParam, id: uuidParam('The webhook endpoint.') });

export const listEndpointsRoute = adminRoute({
  method: 'GET',
  url: base,
  operationId: 'listWebhookEndpoints',
  summary: 'Webhook endpoints of the workspace',
  params: slugParams,
  responses: {
    '200': answer('The endpoints, enabled or disabled with the reason.', ref.list),
    ...errors('401', '403', '404', '500'),
  },
});
export const addEndpointRoute = adminRoute({
  method: 'POST',
  url: base,
  operationId: 'addWebhookEndpoint',
  summary: 'Add a webhook endpoint',
  description: 'Returns the signing secret once; it is stored encrypted and never shown again.',
  params: slugParams,
  headers: csrfHeaders,
  body: ref.add,
  responses: { '200': answer('Added, with its secret.', ref.added), ...writing, ...errors('409') },
});
export const removeEndpointRoute = adminRoute({
  method: 'DELETE',
  url: `${base}/:id`,
  operationId: 'removeWebhookEndpoint',
  summary: 'Remove a webhook endpoint',
  description: 'Its deliveries and their attempts go with it.',
  params: endpointParams,
  headers: csrfHeaders,
  responses: { '200': answer('Removed.', adminOk), ...errors('401', '403', '404', '500') },
});
const post = <B extends z.ZodType>(
  path: string,
  operationId: string,
  summary: string,
  body: NamedSchema<B>,
  output: NamedSchema,
  result: string,
) =>
  adminRoute({
    method: 'POST',
    url: `${base}/:id/${path}`,
    operationId,
    summary,
    params: endpointParams,
    headers: csrfHeaders,
    body,
    responses: { '200': answer(result, output), ...writing },
  });
export const enableEndpointRoute = post(
  'enable',
  'enableWebhookEndpoint',
  'Enable a disabled endpoint (its pending deliveries resume)',
  adminEmptyBody,
  adminOk,
  'Enabled.',
);
export const rotateSecretRoute = post(
  'rotate-secret',
  'rotateWebhookSecret',
  'Rotate the signing secret (the previous one signs too for 24 hours)',
  adminEmptyBody,
  ref.rotated,
  'The new secret, shown once.',
);
export const replayRoute = post(
  'replay',
  'replayWebhookDeliveries',
  'Send failed deliveries again: one (`deliveryId`) or all of the endpoint',
  ref.replay,
  ref.replayed,
  'How many were sent again.',
);
export const listDeliveriesRoute = adminRoute({
  method: 'GET',
  url: `${base}/:id/deliveries`,
  operationId: 'listWebhookDeliveries',
  summary: "The endpoint's latest deliveries with their attempts",
  params: endpointParams,
  query: s.deliveriesQuery,
  responses: {
    '200': answer(
      'Newest first; each attempt with time, HTTP status, latency and the first part of the answer.',
      ref.log,
    ),
    ...errors('400', '401', '403', '404', '500'),
  },
});

export const WEBHOOK_ROUTES = [
  listEndpointsRoute,
  addEndpointRoute,
  removeEndpointRoute,
  enableEndpointRoute,
  rotateSecretRoute,
  replayRoute,
  listDeliveriesRoute,
];

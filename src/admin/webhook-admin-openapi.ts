import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import * as s from './webhook-admin-schemas.ts';

// The Webhooks page's admin API (docs/DASHBOARD.md, "Webhooks") in the OpenAPI document, next
// to the other admin routes: session cookie, CSRF token on POST and DELETE, owners and admins only.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const ID = { name: 'id', in: 'path', required: true, description: 'The webhook endpoint.', schema: { type: 'string', format: 'uuid' } };
const CSRF = { name: 'X-CSRF-Token', in: 'header', required: true, description: 'The `csrfToken` of the session.', schema: { type: 'string' } };

/** Called by describeAdminApi with the schemas the admin routes share (error, ok, empty body). */
export function describeWebhookAdminApi(doc: OpenApiBuilder, shared: { error: Ref; ok: Ref; empty: Ref }): void {
  const { error } = shared;
  const ref = {
    list: doc.output('AdminWebhookEndpoints', s.endpointListSchema),
    added: doc.output('AdminWebhookEndpointAdded', s.endpointAddedSchema),
    rotated: doc.output('AdminWebhookSecretRotated', s.secretRotatedSchema),
    log: doc.output('AdminWebhookDeliveries', s.deliveryLogSchema),
    replayed: doc.output('AdminWebhookReplayed', s.replayedSchema),
    ok: shared.ok,
    add: doc.input('AdminWebhookAdd', s.addEndpointBody),
    replay: doc.input('AdminWebhookReplay', s.replayBody),
    empty: shared.empty,
  };
  const json = (description: string, schema: Ref): Json => ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'Bad JSON, or a field that fails its checks (the URL must be https; http only for 127.0.0.1 or localhost, which receive sandbox events only).',
    '401': 'Not signed in, or the session expired after inactivity.',
    '403': 'CSRF token missing or wrong, or the role is not owner or admin.',
    '404': 'Not a workspace of the operator, or no such webhook endpoint in it.',
    '409': 'The workspace has as many endpoints as this installation allows (MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE).',
    '413': 'The body is over 64 KiB.',
    '415': 'The body is not JSON.',
    '500': 'An unanticipated failure.',
  };
  const errors = (...codes: string[]): Json => Object.fromEntries(codes.map((c) => [c, json(text[c]!, error)]));
  const body = (schema: Ref): Json => ({ required: true, content: { 'application/json': { schema } } });
  const secured = { tags: ['Dashboard'], security: [{ sessionCookie: [] }] };
  const base = '/api/admin/workspaces/{slug}/webhooks';
  const writing = errors('400', '401', '403', '404', '413', '415', '500');

  doc.operation('get', base, {
    ...secured, operationId: 'listWebhookEndpoints', summary: 'Webhook endpoints of the workspace',
    parameters: [SLUG],
    responses: { '200': json('The endpoints, enabled or disabled with the reason.', ref.list), ...errors('401', '403', '404', '500') },
  });
  doc.operation('post', base, {
    ...secured, operationId: 'addWebhookEndpoint', summary: 'Add a webhook endpoint',
    description: 'Returns the signing secret once; it is stored encrypted and never shown again.',
    parameters: [SLUG, CSRF], requestBody: body(ref.add),
    responses: { '200': json('Added, with its secret.', ref.added), ...writing, ...errors('409') },
  });
  doc.operation('delete', `${base}/{id}`, {
    ...secured, operationId: 'removeWebhookEndpoint', summary: 'Remove a webhook endpoint', description: 'Its deliveries and their attempts go with it.',
    parameters: [SLUG, ID, CSRF],
    responses: { '200': json('Removed.', ref.ok), ...errors('401', '403', '404', '500') },
  });
  const posts: Array<[string, string, string, Ref, Ref, string]> = [
    ['enable', 'enableWebhookEndpoint', 'Enable a disabled endpoint (its pending deliveries resume)', ref.empty, ref.ok, 'Enabled.'],
    ['rotate-secret', 'rotateWebhookSecret', 'Rotate the signing secret (the previous one signs too for 24 hours)', ref.empty, ref.rotated, 'The new secret, shown once.'],
    ['replay', 'replayWebhookDeliveries', 'Send failed deliveries again: one (`deliveryId`) or all of the endpoint', ref.replay, ref.replayed, 'How many were sent again.'],
  ];
  for (const [path, operationId, summary, input, output, answer] of posts) {
    doc.operation('post', `${base}/{id}/${path}`, {
      ...secured, operationId, summary, parameters: [SLUG, ID, CSRF], requestBody: body(input),
      responses: { '200': json(answer, output), ...writing },
    });
  }
  doc.operation('get', `${base}/{id}/deliveries`, {
    ...secured, operationId: 'listWebhookDeliveries', summary: "The endpoint's latest deliveries with their attempts",
    parameters: [SLUG, ID, { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 200 } }],
    responses: { '200': json('Newest first; each attempt with time, HTTP status, latency and the first part of the answer.', ref.log), ...errors('400', '401', '403', '404', '500') },
  });
}

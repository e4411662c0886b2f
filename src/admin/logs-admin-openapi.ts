import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import * as s from './logs-admin-schemas.ts';

// The Logs page's admin API (docs/DASHBOARD.md, "Logs, dead letters and the audit log") in the
// OpenAPI document, next to the other admin routes: session cookie, CSRF token on POST.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const CSRF = { name: 'X-CSRF-Token', in: 'header', required: true, description: 'The `csrfToken` of the session.', schema: { type: 'string' } };
const CURSOR = { name: 'cursor', in: 'query', required: false, description: '`nextCursor` of the previous page.', schema: { type: 'string' } };
const LIMIT = { name: 'limit', in: 'query', required: false, description: 'Default 50.', schema: { type: 'integer', minimum: 1, maximum: 200 } };

/** Called by describeAdminApi with the schemas the admin routes share (error, empty body). */
export function describeLogsAdminApi(doc: OpenApiBuilder, shared: { error: Ref; empty: Ref }): void {
  const ref = {
    log: doc.output('AdminIntegrationLog', s.integrationLogSchema),
    dead: doc.output('AdminDeadLetters', s.deadLettersSchema),
    retried: doc.output('AdminDeadLettersRetried', s.retriedSchema),
    audit: doc.output('AdminAuditLog', s.auditLogSchema),
  };
  const json = (description: string, schema: Ref): Json => ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'Bad JSON, or a query parameter that fails its checks.',
    '401': 'Not signed in, or the session expired after inactivity.',
    '403': 'CSRF token missing or wrong, or the role does not allow it (logs: agent and up; retry and the audit log: admin and owner).',
    '404': 'Not a workspace of the operator, or no such dead-lettered turn in it.',
    '413': 'The body is over 16 KiB.',
    '415': 'The body is not JSON.',
    '500': 'An unanticipated failure.',
  };
  const errors = (...codes: string[]): Json => Object.fromEntries(codes.map((c) => [c, json(text[c]!, shared.error)]));
  const secured = { tags: ['Dashboard'], security: [{ sessionCookie: [] }] };
  const base = '/api/admin/workspaces/{slug}';
  const body = { required: true, content: { 'application/json': { schema: shared.empty } } };

  doc.operation('get', `${base}/integration-log`, {
    ...secured, operationId: 'listIntegrationLog', summary: 'The integration log: provider traffic, newest first',
    description: 'Every request sent to a provider and every provider message received, secrets masked as stored. Keyset pages (`nextCursor`).',
    parameters: [
      SLUG,
      { name: 'provider', in: 'query', required: false, description: '`vapi`, `twilio`, `meta`, `llm`, …', schema: { type: 'string' } },
      { name: 'errors', in: 'query', required: false, description: '`true`: failed exchanges only.', schema: { type: 'string', enum: ['true', 'false'] } },
      { name: 'leadId', in: 'query', required: false, description: "One lead's entries.", schema: { type: 'string', format: 'uuid' } },
      CURSOR, LIMIT,
    ],
    responses: { '200': json('A page of entries.', ref.log), ...errors('400', '401', '403', '404', '500') },
  });
  doc.operation('get', `${base}/dead-letters`, {
    ...secured, operationId: 'listDeadLetters', summary: "The workspace's dead-lettered agent turns, newest first",
    parameters: [SLUG],
    responses: { '200': json('Each turn with its lead, when it failed, its attempts and the reason.', ref.dead), ...errors('401', '403', '404', '500') },
  });
  doc.operation('post', `${base}/dead-letters/retry`, {
    ...secured, operationId: 'retryAllDeadLetters', summary: "Retry all of the workspace's dead-lettered turns (as `leadintake jobs retry`)",
    parameters: [SLUG, CSRF], requestBody: body,
    responses: { '200': json('How many went back to the queue (0 when there were none).', ref.retried), ...errors('400', '401', '403', '404', '413', '415', '500') },
  });
  doc.operation('post', `${base}/dead-letters/{id}/retry`, {
    ...secured, operationId: 'retryDeadLetter', summary: 'Retry one dead-lettered turn (as `leadintake jobs retry ID`)',
    parameters: [SLUG, { name: 'id', in: 'path', required: true, description: 'The turn id.', schema: { type: 'string', format: 'uuid' } }, CSRF],
    requestBody: body,
    responses: { '200': json('Sent back to the queue; it resumes at its last checkpoint.', ref.retried), ...errors('400', '401', '403', '404', '413', '415', '500') },
  });
  doc.operation('get', `${base}/audit-log`, {
    ...secured, operationId: 'listAuditLog', summary: 'The audit log of operator actions, newest first (owners and admins)',
    parameters: [SLUG, CURSOR, LIMIT],
    responses: { '200': json('A page of actions: who, what, when and on what.', ref.audit), ...errors('400', '401', '403', '404', '500') },
  });
}

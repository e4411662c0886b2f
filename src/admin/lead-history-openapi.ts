import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import * as s from './lead-history-schemas.ts';

// The lead page's history routes (lead-history-routes.ts) in the OpenAPI document.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const ID = {
  name: 'id', in: 'path', required: true, description: 'The lead.', schema: { type: 'string', format: 'uuid' },
};
const BEFORE = {
  name: 'before', in: 'query', required: false, schema: { type: 'string' },
  description: '`olderCursor` of the newer page (or the lead page\'s `messagesOlderCursor` / `timelineOlderCursor`); '
    + 'none: the newest page.',
};
const LIMIT = {
  name: 'limit', in: 'query', required: false, description: 'Default 50.',
  schema: { type: 'integer', minimum: 1, maximum: 200 },
};

/** Called by describeAdminApi with the error schema the admin routes share. */
export function describeLeadHistoryAdminApi(doc: OpenApiBuilder, shared: { error: Ref }): void {
  const json = (description: string, schema: Ref): Json =>
    ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'A `before` that is not an `olderCursor`, or a `limit` out of range.',
    '401': 'Not signed in, or the session expired after inactivity.',
    '403': 'The role does not allow reading leads.',
    '404': 'Not a workspace of the operator, or no such lead in it.',
    '500': 'An unanticipated failure.',
  };
  const errors = Object.fromEntries(Object.entries(text).map(([c, t]) => [c, json(t, shared.error)]));
  const secured = { tags: ['Dashboard'], security: [{ sessionCookie: [] }], parameters: [SLUG, ID, BEFORE, LIMIT] };
  const base = '/api/admin/workspaces/{slug}/leads/{id}';
  const routes: Array<[string, string, string, string, Ref]> = [
    ['messages', 'listLeadMessages', "A page of the lead's WhatsApp thread",
      'Keyset pages by (time, id), newest page first; the lead page carries the newest one.',
      doc.output('AdminLeadMessages', s.messagePageSchema)],
    ['timeline', 'listLeadTimeline', "A page of the lead's timeline",
      'Keyset pages by (time, id), newest page first; the lead page carries the newest one.',
      doc.output('AdminLeadTimeline', s.timelinePageSchema)],
    ['provider-traffic', 'listLeadProviderTraffic', "A page of the lead's provider traffic",
      'Requests to and messages from providers about the lead, newest first, without payloads '
        + '(`GET …/integration-log?leadId=` has them). Keyset pages by (time, id).',
      doc.output('AdminLeadProviderTraffic', s.trafficPageSchema)],
  ];
  for (const [path, operationId, summary, description, ref] of routes) {
    doc.operation('get', `${base}/${path}`, {
      ...secured, operationId, summary, description,
      responses: { '200': json('A page, and the cursor of the next older one.', ref), ...errors },
    });
  }
}

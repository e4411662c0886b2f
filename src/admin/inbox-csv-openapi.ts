import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import { LEAD_STATUSES } from '../leads/lead-state.ts';
import { CSV_HEADER, CSV_MAX_ROWS } from './inbox-csv.ts';
import { INBOX_SORTS } from './inbox-queries.ts';
import { HANDLED_BY, HANDLED_BY_TEXT, INBOX_STAGES } from './inbox-filters.ts';

// The inbox's filters (shared by the inbox and its CSV export) and the CSV export in the OpenAPI
// document (docs/DASHBOARD.md, "Inbox").

type Json = Record<string, unknown>;

const day = (name: string, description: string) =>
  ({ name, in: 'query', required: false, description, schema: { type: 'string', format: 'date' } });
const query = (name: string, schema: Json, description?: string) =>
  ({ name, in: 'query', required: false, ...(description ? { description } : {}), schema });

/** The query parameters of inbox-filters.ts. */
export const INBOX_FILTER_PARAMETERS: Json[] = [
  day('from', "Created on or after this local day (YYYY-MM-DD, the workspace's time zone)."),
  day('to', "Created on or before this local day (YYYY-MM-DD, the workspace's time zone)."),
  query('reached', { type: 'string', enum: [...INBOX_STAGES] },
    'Reached this stage of the funnel, as the Analytics page counts it.'),
  query('handledBy', { type: 'string', enum: [...HANDLED_BY] }, HANDLED_BY_TEXT),
];

export function describeInboxCsvApi(doc: OpenApiBuilder, shared: { error: Ref }): void {
  const json = (description: string): Json =>
    ({ description, content: { 'application/json': { schema: shared.error } } });
  doc.operation('get', '/api/admin/workspaces/{slug}/leads.csv', {
    tags: ['Dashboard'], security: [{ sessionCookie: [] }], operationId: 'exportLeadsCsv',
    summary: "The inbox's current filter as CSV",
    description: 'The leads GET /api/admin/workspaces/{slug}/leads lists for the same parameters, in the same order, '
      + `at most ${CSV_MAX_ROWS}. Columns: ${CSV_HEADER.join(', ')}. Every field is quoted; `
      + 'a field starting with = + - @ is prefixed with an apostrophe. '
      + 'Each export is written to the audit log (`leads.exported`).',
    parameters: [
      { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } },
      query('status', { type: 'string', enum: [...LEAD_STATUSES] }),
      query('q', { type: 'string' }, 'As for the inbox.'),
      query('sandbox', { type: 'string', enum: ['true', 'false'] }, '`true`: sandbox leads too.'),
      query('sort', { type: 'string', enum: [...INBOX_SORTS] }, 'As for the inbox.'),
      ...INBOX_FILTER_PARAMETERS,
    ],
    responses: {
      '200': {
        description: 'The CSV file (UTF-8 with a byte-order mark, CRLF lines, a header row).',
        headers: {
          'X-Leads-Truncated': {
            required: true, schema: { type: 'string' },
            description: `\`true\`: the filter matched more than ${CSV_MAX_ROWS} leads.`,
          },
        },
        content: { 'text/csv': { schema: { type: 'string' } } },
      },
      '400': json('A bad filter or search.'),
      '401': json('Not signed in, or the session expired after inactivity.'),
      '403': json('The role may not read leads.'),
      '404': json('Not a workspace of the operator.'),
      '500': json('An unanticipated failure.'),
    },
  });
}

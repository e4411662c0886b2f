import { adminError, adminRoute, answer, slugParams } from '../admin-contract.ts';
import { inboxQuery } from './admin-schemas.ts';
import { CSV_HEADER, CSV_MAX_ROWS } from './inbox-csv.ts';

// The inbox's CSV export (docs/DASHBOARD.md, "Inbox"; inbox-csv-routes.ts): the inbox's query
// parameters but the page's.

export const csvQuery = inboxQuery.omit({ cursor: true, limit: true });

export const exportCsvRoute = adminRoute({
  method: 'GET',
  url: '/api/admin/workspaces/:slug/leads.csv',
  operationId: 'exportLeadsCsv',
  summary: "The inbox's current filter as CSV",
  description:
    'The leads GET /api/admin/workspaces/{slug}/leads lists for the same parameters, in the same order, ' +
    `at most ${CSV_MAX_ROWS}. Columns: ${CSV_HEADER.join(', ')}. Every field is quoted; ` +
    'a field starting with = + - @ is prefixed with an apostrophe. ' +
    'Each export is written to the audit log (`leads.exported`).',
  params: slugParams,
  query: csvQuery,
  responses: {
    '200': {
      description: 'The CSV file (UTF-8 with a byte-order mark, CRLF lines, a header row).',
      headers: {
        'X-Leads-Truncated': {
          required: true,
          schema: { type: 'string' },
          description: `\`true\`: the filter matched more than ${CSV_MAX_ROWS} leads.`,
        },
      },
      content: { 'text/csv': { schema: { type: 'string' } } },
    },
    '400': answer('A bad filter or search.', adminError),
    '401': answer('Not signed in, or the session expired after inactivity.', adminError),
    '403': answer('The role may not read leads.', adminError),
    '404': answer('Not a workspace of the operator.', adminError),
    '500': answer('An unanticipated failure.', adminError),
  },
});

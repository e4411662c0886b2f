import { named, type NamedSchema } from '../../http/route-contract.ts';
import { adminRoute, answer, errorResponses, leadParams } from '../admin-contract.ts';
import * as s from './lead-history-schemas.ts';

// The lead page's history in pages (lead-history-routes.ts): older messages and events, and the
// provider traffic.

const errors = errorResponses({
  '400': 'A `before` that is not an `olderCursor`, or a `limit` out of range.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'The role does not allow reading leads.',
  '404': 'Not a workspace of the operator, or no such lead in it.',
  '500': 'An unanticipated failure.',
});
const page = (path: string, operationId: string, summary: string, description: string, body: NamedSchema) =>
  adminRoute({
    method: 'GET',
    url: `/api/admin/workspaces/:slug/leads/:id/${path}`,
    operationId,
    summary,
    description,
    params: leadParams,
    query: s.historyQuery,
    responses: {
      '200': answer('A page, and the cursor of the next older one.', body),
      ...errors('400', '401', '403', '404', '500'),
    },
  });

export const messagesRoute = page(
  'messages',
  'listLeadMessages',
  "A page of the lead's WhatsApp thread",
  'Keyset pages by (time, id), newest page first; the lead page carries the newest one.',
  named('AdminLeadMessages', s.messagePageSchema),
);
export const timelineRoute = page(
  'timeline',
  'listLeadTimeline',
  "A page of the lead's timeline",
  'Keyset pages by (time, id), newest page first; the lead page carries the newest one.',
  named('AdminLeadTimeline', s.timelinePageSchema),
);
export const providerTrafficRoute = page(
  'provider-traffic',
  'listLeadProviderTraffic',
  "A page of the lead's provider traffic",
  'Requests to and messages from providers about the lead, newest first, without payloads ' +
    '(`GET …/integration-log?leadId=` has them). Keyset pages by (time, id).',
  named('AdminLeadProviderTraffic', s.trafficPageSchema),
);

export const LEAD_HISTORY_ROUTES = [messagesRoute, timelineRoute, providerTrafficRoute];

import { z } from 'zod';
import { named } from '../../http/route-contract.ts';
import {
  adminEmptyBody,
  adminRoute,
  answer,
  csrfHeaders,
  errorResponses,
  slugParam,
  slugParams,
  uuidParam,
} from '../admin-contract.ts';
import * as s from './logs-admin-schemas.ts';

// The Logs page's routes (docs/DASHBOARD.md, "Logs, dead letters and the audit log";
// logs-admin-routes.ts): session cookie, CSRF token on POST.

const ref = {
  log: named('AdminIntegrationLog', s.integrationLogSchema),
  dead: named('AdminDeadLetters', s.deadLettersSchema),
  retried: named('AdminDeadLettersRetried', s.retriedSchema),
  audit: named('AdminAuditLog', s.auditLogSchema),
};
const errors = errorResponses({
  '400': 'Bad JSON, or a query parameter that fails its checks.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403':
    'CSRF token missing or wrong, or the role does not allow it ' +
    '(logs: agent and up; retry and the audit log: admin and owner).',
  '404': 'Not a workspace of the operator, or no such dead-lettered turn in it.',
  '413': 'The body is over 16 KiB.',
  '415': 'The body is not JSON.',
  '500': 'An unanticipated failure.',
});
const base = '/api/admin/workspaces/:slug';

export const integrationLogRoute = adminRoute({
  method: 'GET',
  url: `${base}/integration-log`,
  operationId: 'listIntegrationLog',
  summary: 'The integration log: provider traffic, newest first',
  description:
    'Every request sent to a provider and every provider message received, secrets masked as stored. ' +
    'Keyset pages (`nextCursor`).',
  params: slugParams,
  query: s.integrationLogQuery,
  responses: { '200': answer('A page of entries.', ref.log), ...errors('400', '401', '403', '404', '500') },
});
export const deadLettersRoute = adminRoute({
  method: 'GET',
  url: `${base}/dead-letters`,
  operationId: 'listDeadLetters',
  summary: "The workspace's dead-lettered agent turns, newest first",
  params: slugParams,
  responses: {
    '200': answer('Each turn with its lead, when it failed, its attempts and the reason.', ref.dead),
    ...errors('401', '403', '404', '500'),
  },
});
export const retryAllRoute = adminRoute({
  method: 'POST',
  url: `${base}/dead-letters/retry`,
  operationId: 'retryAllDeadLetters',
  summary: "Retry all of the workspace's dead-lettered turns (as `leadintake jobs retry`)",
  params: slugParams,
  headers: csrfHeaders,
  body: adminEmptyBody,
  responses: {
    '200': answer('How many went back to the queue (0 when there were none).', ref.retried),
    ...errors('400', '401', '403', '404', '413', '415', '500'),
  },
});
export const retryOneRoute = adminRoute({
  method: 'POST',
  url: `${base}/dead-letters/:id/retry`,
  operationId: 'retryDeadLetter',
  summary: 'Retry one dead-lettered turn (as `leadintake jobs retry ID`)',
  params: z.object({ slug: slugParam, id: uuidParam('The turn id.') }),
  headers: csrfHeaders,
  body: adminEmptyBody,
  responses: {
    '200': answer('Sent back to the queue; it resumes at its last checkpoint.', ref.retried),
    ...errors('400', '401', '403', '404', '413', '415', '500'),
  },
});
export const auditLogRoute = adminRoute({
  method: 'GET',
  url: `${base}/audit-log`,
  operationId: 'listAuditLog',
  summary: 'The audit log of operator actions, newest first (owners and admins)',
  params: slugParams,
  query: s.auditLogQuery,
  responses: {
    '200': answer('A page of actions: who, what, when and on what.', ref.audit),
    ...errors('400', '401', '403', '404', '500'),
  },
});

export const LOGS_ROUTES = [integrationLogRoute, deadLettersRoute, retryAllRoute, retryOneRoute, auditLogRoute];

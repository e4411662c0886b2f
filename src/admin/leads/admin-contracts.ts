import type { z } from 'zod';
import { named, type NamedSchema } from '../../http/route-contract.ts';
import {
  adminEmptyBody,
  adminOk,
  adminRoute,
  answer,
  csrfHeaders,
  errorResponses,
  leadParams,
  slugParams,
} from '../admin-contract.ts';
import * as s from './admin-schemas.ts';

// The session, the inbox and the lead's page and actions (admin-routes.ts), and the live updates
// (live-routes.ts): the dashboard's own routes, scriptable with a session cookie and its CSRF token.

const ref = {
  session: named('AdminSession', s.sessionSchema),
  action: named('AdminActionResult', s.actionResultSchema),
  inbox: named('AdminInbox', s.inboxSchema),
  lead: named('AdminLeadPage', s.leadPageSchema),
  signIn: named('AdminSignIn', s.signInBody),
  outcome: named('AdminOutcome', s.outcomeBody),
  reply: named('AdminReply', s.replyBody),
};

const errors = errorResponses({
  '400': 'Bad JSON or a field that fails its checks.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or the role does not allow the action.',
  '404': 'Not a workspace of the operator, or no such lead in it.',
  '409':
    "The lead's status does not allow the action, or (Take over) another operator took the lead first: " +
    '`message` says who.',
  '413': 'The body is over 64 KiB.',
  '415': 'The body is not JSON.',
  '429': 'Too many failed sign-ins for this account or address; retry after `Retry-After` seconds.',
  '500': 'An unanticipated failure.',
  '503': 'Live updates cannot start now (the database is unreachable); retry after `Retry-After` seconds.',
});

export const signInRoute = adminRoute({
  method: 'POST',
  url: '/api/admin/session',
  security: [],
  operationId: 'signIn',
  summary: 'Sign in',
  description:
    'Checks e-mail and password and sets the HttpOnly session cookie. ' +
    'Failed attempts are throttled per account and per client address.',
  body: ref.signIn,
  responses: {
    '200': answer('Signed in: the operator, the CSRF token and the workspaces with roles.', ref.session),
    ...errors('400', '401', '413', '415', '429', '500'),
  },
});
export const getSessionRoute = adminRoute({
  method: 'GET',
  url: '/api/admin/session',
  operationId: 'getSession',
  summary: 'The signed-in operator',
  responses: {
    '200': answer('The operator, the CSRF token and the workspaces with roles.', ref.session),
    ...errors('401', '500'),
  },
});
export const signOutRoute = adminRoute({
  method: 'DELETE',
  url: '/api/admin/session',
  operationId: 'signOut',
  summary: 'Sign out',
  query: s.signOutQuery,
  headers: csrfHeaders,
  responses: { '200': answer('Signed out; the cookie is cleared.', adminOk), ...errors('400', '401', '403', '500') },
});
export const listLeadsRoute = adminRoute({
  method: 'GET',
  url: '/api/admin/workspaces/:slug/leads',
  operationId: 'listLeads',
  summary: 'The leads inbox',
  description:
    'Newest first or by last activity, keyset pages (`nextCursor`), counts per status of the same search and ' +
    'filters (`unread=true`: only the leads unread by you).',
  params: slugParams,
  query: s.inboxQuery,
  responses: { '200': answer('A page of leads.', ref.inbox), ...errors('400', '401', '403', '404', '500') },
});
export const leadPageRoute = adminRoute({
  method: 'GET',
  url: '/api/admin/workspaces/:slug/leads/:id',
  operationId: 'getLeadPage',
  summary: 'Everything about one lead',
  description:
    'The newest page of the thread and of the timeline (older ones: `…/messages`, `…/timeline`); ' +
    'the provider traffic is `…/provider-traffic`.',
  params: leadParams,
  responses: {
    '200': answer('The lead, the newest of its timeline and messages, its calls.', ref.lead),
    ...errors('401', '403', '404', '500'),
  },
});
export const deleteLeadRoute = adminRoute({
  method: 'DELETE',
  url: '/api/admin/workspaces/:slug/leads/:id',
  operationId: 'deleteLead',
  summary: 'Delete lead',
  description: 'Erases the lead (admin and owner); an audit row remains.',
  params: leadParams,
  headers: csrfHeaders,
  responses: { '200': answer('Erased.', adminOk), ...errors('401', '403', '404', '500') },
});

// The lead actions: each is written to the audit log as `lead.<path>` (admin-routes.ts).
const action = <B extends z.ZodType>(path: string, operationId: string, summary: string, body: NamedSchema<B>) =>
  adminRoute({
    method: 'POST',
    url: `/api/admin/workspaces/:slug/leads/:id/${path}`,
    operationId,
    summary,
    params: leadParams,
    headers: csrfHeaders,
    body,
    responses: {
      '200': answer("Done: the lead's status now.", ref.action),
      ...errors('400', '401', '403', '404', '409', '413', '415', '500'),
    },
  });
export const takeOverRoute = action(
  'take-over',
  'takeOver',
  'Take over: the lead goes to a person; the agent sends nothing more. ' +
    'A booked or unqualified lead keeps its status.',
  adminEmptyBody,
);
export const resumeRoute = action(
  'resume',
  'resumeAi',
  'Resume AI: back to the agent, which answers an unanswered message now. ' +
    'A booked or unqualified lead keeps its status.',
  adminEmptyBody,
);
export const outcomeRoute = action(
  'outcome',
  'setOutcome',
  'Set outcome by hand: booked with a note, or unqualified with a reason.',
  ref.outcome,
);
export const replyRoute = action(
  'reply',
  'reply',
  'Reply on WhatsApp (after Take over, or to a booked or unqualified lead): `text` inside the 24-hour window ' +
    '(400 outside it: nothing is sent), or `template: true` for the approved template.',
  ref.reply,
);

export const leadEventsRoute = adminRoute({
  method: 'GET',
  url: '/api/admin/workspaces/:slug/events',
  operationId: 'leadEvents',
  summary: 'Live updates (Server-Sent Events)',
  description:
    'A `ready` event first (refetch), then a `change` event `{kind, leadIds}` for each change of the ' +
    'workspace. A stream that closes without `end` may have missed changes: reconnect, and refetch on `ready`.',
  params: slugParams,
  responses: {
    '200': {
      description:
        'An event stream; `end` `{kind, reason}` before it closes because the session or membership is gone.',
      content: { 'text/event-stream': { schema: { type: 'string' } } },
    },
    ...errors('401', '403', '404', '429', '500', '503'),
  },
});

export const DASHBOARD_ROUTES = [
  signInRoute,
  getSessionRoute,
  signOutRoute,
  listLeadsRoute,
  leadPageRoute,
  deleteLeadRoute,
  takeOverRoute,
  resumeRoute,
  outcomeRoute,
  replyRoute,
  leadEventsRoute,
];

import { named } from '../../http/route-contract.ts';
import { adminRoute, answer, csrfHeaders, errorResponses, leadParams, slugParams } from '../admin-contract.ts';
import * as s from './do-not-contact-schemas.ts';

// The workspace's do-not-contact list (docs/DASHBOARD.md, "Do not contact"; do-not-contact-routes.ts).
// Numbers travel in bodies, never in URLs: a URL ends up in access logs, a phone number must not.

const errors = errorResponses({
  '400': 'A bad request: not a phone number, a note over 500 characters, a bad page.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or the role does not allow it.',
  '404': 'Not a workspace of the operator, or no such lead in it.',
  '500': 'An unanticipated failure.',
});
const base = '/api/admin/workspaces/:slug/do-not-contact';
const changed = (d: string) => answer(d, named('AdminDoNotContactChange', s.dncChangedSchema));

export const listDoNotContactRoute = adminRoute({
  method: 'GET',
  url: base,
  operationId: 'listDoNotContact',
  summary: "The workspace's do-not-contact numbers, newest first",
  description: 'Nobody in the workspace calls or messages these numbers: every call and message is checked.',
  params: slugParams,
  query: s.dncListQuery,
  responses: {
    '200': answer('A page of the list.', named('AdminDoNotContactList', s.dncListSchema)),
    ...errors('400', '401', '403', '404', '500'),
  },
});
export const addDoNotContactRoute = adminRoute({
  method: 'POST',
  url: base,
  operationId: 'addDoNotContact',
  summary: 'Put a number on the list (agents and up)',
  description: "Ends the running contact plans of the workspace's leads with this number.",
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminDoNotContactInput', s.dncAddBody),
  responses: { '200': changed('Added (or already there).'), ...errors('400', '401', '403', '404', '500') },
});
export const removeDoNotContactRoute = adminRoute({
  method: 'POST',
  url: `${base}/remove`,
  operationId: 'removeDoNotContact',
  summary: 'Take a number off the list (admins)',
  description: 'Contact may happen again: a new lead, a scheduled attempt or a reply is no longer refused.',
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminDoNotContactRemoval', s.dncRemoveBody),
  responses: { '200': changed('Removed (or was not there).'), ...errors('400', '401', '403', '404', '500') },
});
export const leadDoNotContactRoute = adminRoute({
  method: 'POST',
  url: '/api/admin/workspaces/:slug/leads/:id/do-not-contact',
  operationId: 'doNotContactLead',
  summary: 'Do not contact this lead: its number on the list (agents and up)',
  params: leadParams,
  headers: csrfHeaders,
  body: named('AdminDoNotContactLeadInput', s.dncLeadBody),
  responses: { '200': changed('Added (or already there).'), ...errors('400', '401', '403', '404', '500') },
});

export const DO_NOT_CONTACT_ROUTES = [
  listDoNotContactRoute,
  addDoNotContactRoute,
  removeDoNotContactRoute,
  leadDoNotContactRoute,
];

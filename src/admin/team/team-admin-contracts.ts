import { z } from 'zod';
import { named } from '../../http/route-contract.ts';
import {
  adminOk,
  adminRoute,
  answer,
  csrfHeaders,
  errorResponses,
  slugParam,
  slugParams,
  uuidParam,
} from '../admin-contract.ts';
import { SETTINGS_ERRORS } from '../settings/settings-admin-contracts.ts';
import * as s from './team-admin-schemas.ts';

// The Team page's routes (docs/DASHBOARD.md, "Providers, API keys and team"; team-admin-routes.ts):
// owners manage members and invitations; the invitee's side needs no membership.

const ref = {
  team: named('AdminTeam', s.teamSchema),
  invited: named('AdminInvited', s.invitedSchema),
  inviteInfo: named('AdminInvite', s.inviteInfoSchema),
  accepted: named('AdminInviteAccepted', s.acceptedSchema),
  invite: named('AdminInviteCreate', s.inviteBody),
  role: named('AdminRoleChange', s.roleBody),
  lookup: named('AdminInviteLookup', s.inviteLookupBody),
  accept: named('AdminInviteAccept', s.acceptBody),
};
const errors = errorResponses(SETTINGS_ERRORS);
const reading = errors('400', '401', '403', '404', '500');
const ws = '/api/admin/workspaces/:slug';
const idParams = (what: string) => z.object({ slug: slugParam, id: uuidParam(what) });

export const getTeamRoute = adminRoute({
  method: 'GET',
  url: `${ws}/team`,
  operationId: 'getTeam',
  summary: 'Members with roles and pending invitations (owners)',
  params: slugParams,
  responses: { '200': answer('The team.', ref.team), ...reading },
});
export const inviteRoute = adminRoute({
  method: 'POST',
  url: `${ws}/team/invites`,
  operationId: 'inviteMember',
  summary: 'Invite an e-mail address with a role: a one-time link, valid 7 days',
  params: slugParams,
  headers: csrfHeaders,
  body: ref.invite,
  responses: {
    '200': answer('The invitation and its link, this once.', ref.invited),
    ...errors('400', '401', '403', '404', '409', '413', '415', '500'),
  },
});
export const cancelInviteRoute = adminRoute({
  method: 'DELETE',
  url: `${ws}/team/invites/:id`,
  operationId: 'cancelInvite',
  summary: 'Cancel a pending invitation',
  params: idParams('The invitation.'),
  headers: csrfHeaders,
  responses: { '200': answer('Cancelled: the link no longer works.', adminOk), ...reading },
});
export const changeRoleRoute = adminRoute({
  method: 'PATCH',
  url: `${ws}/team/members/:id`,
  operationId: 'changeRole',
  summary: "Change a member's role (the last owner stays owner)",
  params: idParams('The member (operator id).'),
  headers: csrfHeaders,
  body: ref.role,
  responses: { '200': answer('Changed.', adminOk), ...errors('400', '401', '403', '404', '409', '413', '415', '500') },
});
export const removeMemberRoute = adminRoute({
  method: 'DELETE',
  url: `${ws}/team/members/:id`,
  operationId: 'removeMember',
  summary: 'Remove a member from the workspace (not the last owner)',
  params: idParams('The member (operator id).'),
  headers: csrfHeaders,
  responses: { '200': answer('Removed.', adminOk), ...errors('400', '401', '403', '404', '409', '500') },
});
export const lookUpInviteRoute = adminRoute({
  method: 'POST',
  url: '/api/admin/invites/lookup',
  security: [],
  operationId: 'lookUpInvite',
  summary: 'What an invitation link is for (the token is the authority)',
  body: ref.lookup,
  responses: { '200': answer('The invitation.', ref.inviteInfo), ...errors('400', '404', '413', '415', '500') },
});
export const acceptInviteRoute = adminRoute({
  method: 'POST',
  url: `${ws}/invites/accept`,
  security: [],
  operationId: 'acceptInvite',
  summary: 'Accept an invitation',
  description:
    'Signed in (with the CSRF token): joins the account, whose e-mail must be the invited one. ' +
    'Not signed in: creates the account with `name` and `password` and signs it in (sets the session cookie).',
  params: slugParams,
  body: ref.accept,
  responses: {
    '200': answer('Accepted: the operator is a member now.', ref.accepted),
    ...errors('400', '401', '403', '404', '409', '413', '415', '429', '500'),
  },
});

export const TEAM_ROUTES = [
  getTeamRoute,
  inviteRoute,
  cancelInviteRoute,
  changeRoleRoute,
  removeMemberRoute,
  lookUpInviteRoute,
  acceptInviteRoute,
];

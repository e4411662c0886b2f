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
import { intakeOverviewSchema } from './intake-admin-schemas.ts';
import * as k from './intake-key-admin-schemas.ts';

// The Form page's intake routes (docs/INTAKE.md, "The Form page"; intake-admin-routes.ts): session
// cookie; everyone in the workspace reads, owners and admins change (CSRF token on writes).

export const intakeErrors = errorResponses({
  '400': 'Bad JSON, or a field that fails its checks: each issue names the field and what to fix.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or (on a change) the role is not owner or admin.',
  '404': 'Not a workspace of the operator, or no such key or source in it.',
  '413': 'The body is too large.',
  '415': 'The body is not JSON.',
  '409': 'The workspace has as many keys as MAX_API_KEYS_PER_WORKSPACE allows: revoke one first.',
  '500': 'An unanticipated failure.',
});
export const INTAKE_BASE = '/api/admin/workspaces/:slug/intake';

export const intakeOverviewRoute = adminRoute({
  method: 'GET',
  url: INTAKE_BASE,
  operationId: 'getIntakeOverview',
  summary: "The hosted form's address, its preview and the embed snippet",
  params: slugParams,
  responses: {
    '200': answer('Where the form is and how to embed it.', named('AdminIntakeOverview', intakeOverviewSchema)),
    ...intakeErrors('401', '404', '500'),
  },
});

const keyParams = z.object({ slug: slugParam, id: uuidParam('The publishable key.') });
const reading = intakeErrors('401', '404', '500');
const writing = intakeErrors('400', '401', '403', '404', '413', '415', '500');

export const listPublishableKeysRoute = adminRoute({
  method: 'GET',
  url: `${INTAKE_BASE}/keys`,
  operationId: 'listPublishableKeys',
  summary: 'Publishable keys of the workspace (never the keys themselves)',
  params: slugParams,
  responses: {
    '200': answer(
      'Live and sandbox publishable keys, revoked ones too.',
      named('AdminPublishableKeys', k.publishableKeyListSchema),
    ),
    ...reading,
  },
});
export const createPublishableKeyRoute = adminRoute({
  method: 'POST',
  url: `${INTAKE_BASE}/keys`,
  operationId: 'createPublishableKey',
  summary: 'Create a publishable key for the browser origins listed (shown once)',
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminPublishableKeyCreate', k.createPublishableKeyBody),
  responses: {
    '200': answer('The key, this once.', named('AdminPublishableKeyCreated', k.publishableKeyCreatedSchema)),
    ...writing,
    ...intakeErrors('409'),
  },
});
export const setPublishableKeyOriginsRoute = adminRoute({
  method: 'PUT',
  url: `${INTAKE_BASE}/keys/:id/origins`,
  operationId: 'setPublishableKeyOrigins',
  summary: "Replace a publishable key's allowed origins",
  params: keyParams,
  headers: csrfHeaders,
  body: named('AdminPublishableKeyOrigins', k.setOriginsBody),
  responses: { '200': answer('Saved.', adminOk), ...writing },
});
export const revokePublishableKeyRoute = adminRoute({
  method: 'DELETE',
  url: `${INTAKE_BASE}/keys/:id`,
  operationId: 'revokePublishableKey',
  summary: 'Revoke a publishable key',
  params: keyParams,
  headers: csrfHeaders,
  responses: { '200': answer('Revoked.', adminOk), ...reading, ...intakeErrors('403') },
});

export const INTAKE_ROUTES = [
  intakeOverviewRoute,
  listPublishableKeysRoute,
  createPublishableKeyRoute,
  setPublishableKeyOriginsRoute,
  revokePublishableKeyRoute,
];

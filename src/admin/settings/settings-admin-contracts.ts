import { z } from 'zod';
import { named } from '../../http/route-contract.ts';
import {
  adminEmptyBody,
  adminOk,
  adminRoute,
  answer,
  csrfHeaders,
  errorResponses,
  slugParam,
  slugParams,
  uuidParam,
} from '../admin-contract.ts';
import * as s from './settings-admin-schemas.ts';

// The Providers and API keys pages' routes (docs/DASHBOARD.md, "Providers, API keys and team";
// provider- and key-admin-routes.ts): session cookie, CSRF token on every other method than GET.
// The 4xx texts are shared with the Team page's (team/team-admin-contracts.ts).

const ref = {
  providers: named('AdminProviders', s.providersSchema),
  tested: named('AdminProviderTest', s.providerTestSchema),
  keys: named('AdminApiKeys', s.keyListSchema),
  keyCreated: named('AdminApiKeyCreated', s.keyCreatedSchema),
  providerBody: named('AdminProviderSection', s.providerBody),
  createKey: named('AdminApiKeyCreate', s.createKeyBody),
};
export const SETTINGS_ERRORS = {
  '400': 'Bad JSON, or a field that fails its checks (each named in `issues`).',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403':
    'CSRF token missing or wrong, or the role does not allow this ' +
    '(Providers and API keys: owners and admins; Team: owners).',
  '404': 'Not a workspace of the operator, or no such key, member or invitation in it.',
  '409':
    'The workspace would be left without an owner, the address is already a member, an account with the address ' +
    'exists, or the workspace has as many active API keys as this installation allows (MAX_API_KEYS_PER_WORKSPACE).',
  '413': 'The body is over 64 KiB.',
  '415': 'The body is not JSON.',
  '429': 'Too many failed sign-ins from this address.',
  '500': 'An unanticipated failure.',
};
const errors = errorResponses(SETTINGS_ERRORS);
const reading = errors('400', '401', '403', '404', '500');
const writing = errors('400', '401', '403', '404', '413', '415', '500');
const ws = '/api/admin/workspaces/:slug';
const idParams = (what: string) => z.object({ slug: slugParam, id: uuidParam(what) });

export const getProvidersRoute = adminRoute({
  method: 'GET',
  url: `${ws}/providers`,
  operationId: 'getProviders',
  summary: 'Provider settings, secrets masked, and the URLs to paste into each provider',
  params: slugParams,
  responses: {
    '200': answer('Each section with secrets as `{set, last4}`; never a secret.', ref.providers),
    ...reading,
  },
});
export const saveProviderRoute = adminRoute({
  method: 'PUT',
  url: `${ws}/providers/:provider`,
  operationId: 'saveProvider',
  summary: 'Save one provider section (encrypted at rest)',
  description: 'Replaces the section. Secrets left out or "" keep the stored value; null removes an optional one.',
  params: s.providerParams,
  headers: csrfHeaders,
  body: ref.providerBody,
  responses: { '200': answer('Saved.', adminOk), ...writing },
});
export const testProviderRoute = adminRoute({
  method: 'POST',
  url: `${ws}/providers/:provider/test`,
  operationId: 'testProvider',
  summary: 'Test connection: the checks of `leadintake workspace verify` for one provider',
  params: s.providerParams,
  headers: csrfHeaders,
  body: adminEmptyBody,
  responses: { '200': answer('Each PASS/FAIL line with what to fix.', ref.tested), ...writing },
});
export const listKeysRoute = adminRoute({
  method: 'GET',
  url: `${ws}/keys`,
  operationId: 'listApiKeys',
  summary: 'API keys of the workspace (never the keys themselves)',
  params: slugParams,
  responses: { '200': answer('Live and sandbox keys, revoked ones too.', ref.keys), ...reading },
});
export const createKeyRoute = adminRoute({
  method: 'POST',
  url: `${ws}/keys`,
  operationId: 'createApiKey',
  summary: 'Create an API key (shown once)',
  params: slugParams,
  headers: csrfHeaders,
  body: ref.createKey,
  responses: { '200': answer('The key, this once.', ref.keyCreated), ...writing, ...errors('409') },
});
export const revokeKeyRoute = adminRoute({
  method: 'DELETE',
  url: `${ws}/keys/:id`,
  operationId: 'revokeApiKey',
  summary: 'Revoke an API key',
  description: 'At once in this process; other processes may accept it for up to `cacheTtlSeconds`.',
  params: idParams('The API key.'),
  headers: csrfHeaders,
  responses: { '200': answer('Revoked.', adminOk), ...reading },
});
export const SETTINGS_ROUTES = [
  getProvidersRoute,
  saveProviderRoute,
  testProviderRoute,
  listKeysRoute,
  createKeyRoute,
  revokeKeyRoute,
];

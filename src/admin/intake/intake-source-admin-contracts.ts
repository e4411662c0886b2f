import { z } from 'zod';
import { named } from '../../http/route-contract.ts';
import {
  adminEmptyBody,
  adminOk,
  adminRoute,
  answer,
  csrfHeaders,
  slugParam,
  slugParams,
  uuidParam,
} from '../admin-contract.ts';
import { INTAKE_BASE, intakeErrors } from './intake-admin-contracts.ts';
import * as s from './intake-source-admin-schemas.ts';

// The Form page's connected-source routes (intake-source-admin-routes.ts).

const sourceParams = z.object({ slug: slugParam, id: uuidParam('The lead source.') });
const writing = intakeErrors('400', '401', '403', '404', '413', '415', '500');

export const listSourcesRoute = adminRoute({
  method: 'GET',
  url: `${INTAKE_BASE}/sources`,
  operationId: 'listLeadSources',
  summary: 'Connected sources with their URL, status and last lead (never a secret)',
  params: slugParams,
  responses: {
    '200': answer('Every source, revoked ones too.', named('AdminLeadSources', s.sourceListSchema)),
    ...intakeErrors('401', '404', '500'),
  },
});
export const createSourceRoute = adminRoute({
  method: 'POST',
  url: `${INTAKE_BASE}/sources`,
  operationId: 'createLeadSource',
  summary: 'Connect a source: a generic webhook, a Google Ads lead form or a Meta Page',
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminLeadSourceCreate', s.createSourceBody),
  responses: {
    '200': answer('The source, and its secret this once.', named('AdminLeadSourceCreated', s.sourceCreatedSchema)),
    ...writing,
  },
});
export const updateSourceRoute = adminRoute({
  method: 'PATCH',
  url: `${INTAKE_BASE}/sources/:id`,
  operationId: 'updateLeadSource',
  summary:
    'Rename a source or edit its mapping (webhook, Google: mapping, sandbox; Meta: fieldMapping, organicToSandbox)',
  params: sourceParams,
  headers: csrfHeaders,
  body: named('AdminLeadSourceUpdate', s.updateSourceBody),
  responses: {
    '200': answer('The source as saved.', named('AdminLeadSourceUpdated', s.sourceUpdatedSchema)),
    ...writing,
  },
});
export const rotateSourceSecretRoute = adminRoute({
  method: 'POST',
  url: `${INTAKE_BASE}/sources/:id/rotate-secret`,
  operationId: 'rotateLeadSourceSecret',
  summary: 'A new secret for a webhook or Google source (the old one stops working)',
  params: sourceParams,
  headers: csrfHeaders,
  body: adminEmptyBody,
  responses: {
    '200': answer('The new secret, this once.', named('AdminLeadSourceSecret', s.secretRotatedSchema)),
    ...writing,
  },
});
export const revokeSourceRoute = adminRoute({
  method: 'DELETE',
  url: `${INTAKE_BASE}/sources/:id`,
  operationId: 'revokeLeadSource',
  summary: 'Disconnect a source: its URL answers 404 from now on',
  params: sourceParams,
  headers: csrfHeaders,
  responses: { '200': answer('Revoked.', adminOk), ...intakeErrors('401', '403', '404', '500') },
});

export const INTAKE_SOURCE_ROUTES = [
  listSourcesRoute,
  createSourceRoute,
  updateSourceRoute,
  rotateSourceSecretRoute,
  revokeSourceRoute,
];

import { named } from '../../http/route-contract.ts';
import { adminRoute, answer, csrfHeaders, slugParams } from '../admin-contract.ts';
import { INTAKE_BASE, intakeErrors } from './intake-admin-contracts.ts';
import * as s from './intake-settings-admin-schemas.ts';

// The Form page's form settings and logo routes (intake-settings-admin-routes.ts).

const settings = named('AdminFormSettings', s.formSettingsAnswer);
const saved = answer('The settings as saved, with the consent text now shown and the logo.', settings);
const writing = intakeErrors('400', '401', '403', '404', '413', '415', '500');

export const getFormSettingsRoute = adminRoute({
  method: 'GET',
  url: `${INTAKE_BASE}/settings`,
  operationId: 'getFormSettings',
  summary: "The hosted form's settings, its consent text (with version) and logo",
  params: slugParams,
  responses: { '200': saved, ...intakeErrors('401', '404', '500') },
});
export const saveFormSettingsRoute = adminRoute({
  method: 'PUT',
  url: `${INTAKE_BASE}/settings`,
  operationId: 'saveFormSettings',
  summary: "Replace the hosted form's settings",
  description:
    'A consent text that differs from the one shown now becomes a new version at once; ' +
    'leads keep the version they agreed to. ' +
    "Turnstile's secret is sent only to set or change it; leaving it out keeps the saved one.",
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminFormSettingsSave', s.formSettingsBody),
  responses: { '200': saved, ...writing },
});
export const saveLogoRoute = adminRoute({
  method: 'PUT',
  url: `${INTAKE_BASE}/logo`,
  operationId: 'saveFormLogo',
  summary: "Upload the form's logo (PNG, JPEG, WebP or SVG, at most 256 KiB)",
  params: slugParams,
  headers: csrfHeaders,
  body: named('AdminFormLogo', s.logoBody),
  responses: { '200': saved, ...writing },
});
export const deleteLogoRoute = adminRoute({
  method: 'DELETE',
  url: `${INTAKE_BASE}/logo`,
  operationId: 'deleteFormLogo',
  summary: "Remove the form's logo",
  params: slugParams,
  headers: csrfHeaders,
  responses: { '200': saved, ...intakeErrors('401', '403', '404', '500') },
});

export const INTAKE_SETTINGS_ROUTES = [getFormSettingsRoute, saveFormSettingsRoute, saveLogoRoute, deleteLogoRoute];

import type { z } from 'zod';
import { named } from '../../http/route-contract.ts';
import { adminEmptyBody, adminRoute, answer, csrfHeaders, errorResponses, slugParams } from '../admin-contract.ts';
import * as s from './form-agent-admin-schemas.ts';

// The Form and Agent pages' routes (docs/DASHBOARD.md, "Form builder and agent settings";
// form-agent-admin-routes.ts): session cookie, CSRF token on PUT and POST; everyone reads,
// owners and admins save.

const ref = {
  form: named('AdminForm', s.formSchema),
  agent: named('AdminAgentSettings', s.agentSchema),
  preview: named('AdminAgentPreview', s.previewSchema),
  switched: named('AdminAgentSwitched', s.switchSchema),
  formIn: named('AdminFormSave', s.formBody),
  agentIn: named('AdminAgentSave', s.agentBody),
  draft: named('AdminAgentDraft', s.agentDraft),
};
const errors = errorResponses({
  '400': 'Bad JSON, or a field that fails its checks: each issue names the field and what to fix.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, or (on a save) the role is not owner or admin.',
  '404': 'Not a workspace of the operator.',
  '409': 'The settings were saved by someone else after `version` was read: reload and edit again.',
  '413': 'The body is over 64 KiB.',
  '415': 'The body is not JSON.',
  '500': 'An unanticipated failure.',
});
const base = '/api/admin/workspaces/:slug';
const reading = errors('401', '404', '500');
const saving = errors('400', '401', '403', '404', '409', '413', '415', '500');

export const getFormRoute = adminRoute({
  method: 'GET',
  url: `${base}/form`,
  operationId: 'getForm',
  summary: 'The qualification form: ordered questions with their ids',
  params: slugParams,
  responses: {
    '200': answer('The questions, the retired ones and the version to save against.', ref.form),
    ...reading,
  },
});
export const saveFormRoute = adminRoute({
  method: 'PUT',
  url: `${base}/form`,
  operationId: 'saveForm',
  summary: 'Replace the ordered questions (owners and admins)',
  description: 'Ids are kept; new questions get a new `q_` id; questions left out are retired with their label.',
  params: slugParams,
  headers: csrfHeaders,
  body: ref.formIn,
  responses: { '200': answer('Saved: the form as now stored.', ref.form), ...saving },
});
export const getAgentRoute = adminRoute({
  method: 'GET',
  url: `${base}/agent`,
  operationId: 'getAgentSettings',
  summary: 'Persona, criteria, time zone, phone country, first-contact template, kill switch',
  description: "The WhatsApp template fields only: the `whatsapp` settings' secrets are never returned.",
  params: slugParams,
  responses: { '200': answer('The settings and the version to save against.', ref.agent), ...reading },
});
export const saveAgentRoute = adminRoute({
  method: 'PUT',
  url: `${base}/agent`,
  operationId: 'saveAgentSettings',
  summary: 'Save the agent settings (owners and admins)',
  params: slugParams,
  headers: csrfHeaders,
  body: ref.agentIn,
  responses: { '200': answer('Saved: the settings as now stored.', ref.agent), ...saving },
});
export const previewAgentRoute = adminRoute({
  method: 'POST',
  url: `${base}/agent/preview`,
  operationId: 'previewAgentPrompt',
  summary: 'The system prompt for a sample lead, from unsaved settings',
  description: "Changes nothing. Built by the agent's own prompt builder with the saved questions.",
  params: slugParams,
  headers: csrfHeaders,
  body: ref.draft,
  responses: { '200': answer('The prompt.', ref.preview), ...errors('400', '401', '403', '404', '413', '415', '500') },
});
const agentSwitch = (path: string, operationId: string, summary: string) =>
  adminRoute<typeof slugParams, undefined, z.ZodObject>({
    method: 'POST',
    url: `${base}/agent/${path}`,
    operationId,
    summary,
    params: slugParams,
    headers: csrfHeaders,
    body: adminEmptyBody,
    responses: { '200': answer("The switch's new state.", ref.switched), ...errors('401', '403', '404', '500') },
  });
export const switchOnRoute = agentSwitch('switch-on', 'switchAgentOn', 'Switch the agent on');
export const switchOffRoute = agentSwitch(
  'switch-off',
  'switchAgentOff',
  'Switch the agent off (WhatsApp turns stop sending)',
);

export const FORM_AGENT_ROUTES = [
  getFormRoute,
  saveFormRoute,
  getAgentRoute,
  saveAgentRoute,
  previewAgentRoute,
  switchOnRoute,
  switchOffRoute,
];

import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import * as s from './form-agent-admin-schemas.ts';

// The Form and Agent pages' admin API (docs/DASHBOARD.md, "Form builder and agent settings") in
// the OpenAPI document: session cookie, CSRF token on PUT and POST; everyone reads, owners and
// admins save.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const CSRF = { name: 'X-CSRF-Token', in: 'header', required: true, description: 'The `csrfToken` of the session.', schema: { type: 'string' } };

/** Called by describeAdminApi with the schemas the admin routes share (error, ok, empty body). */
export function describeFormAgentAdminApi(doc: OpenApiBuilder, shared: { error: Ref; ok: Ref; empty: Ref }): void {
  const ref = {
    form: doc.output('AdminForm', s.formSchema),
    agent: doc.output('AdminAgentSettings', s.agentSchema),
    preview: doc.output('AdminAgentPreview', s.previewSchema),
    switched: doc.output('AdminAgentSwitched', s.switchSchema),
    formIn: doc.input('AdminFormSave', s.formBody),
    agentIn: doc.input('AdminAgentSave', s.agentBody),
    draft: doc.input('AdminAgentDraft', s.agentDraft),
  };
  const json = (description: string, schema: Ref): Json => ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'Bad JSON, or a field that fails its checks: each issue names the field and what to fix.',
    '401': 'Not signed in, or the session expired after inactivity.',
    '403': 'CSRF token missing or wrong, or (on a save) the role is not owner or admin.',
    '404': 'Not a workspace of the operator.',
    '409': 'The settings were saved by someone else after `version` was read: reload and edit again.',
    '413': 'The body is over 64 KiB.',
    '415': 'The body is not JSON.',
    '500': 'An unanticipated failure.',
  };
  const errors = (...codes: string[]): Json => Object.fromEntries(codes.map((c) => [c, json(text[c]!, shared.error)]));
  const body = (schema: Ref): Json => ({ required: true, content: { 'application/json': { schema } } });
  const secured = { tags: ['Dashboard'], security: [{ sessionCookie: [] }] };
  const base = '/api/admin/workspaces/{slug}';
  const reading = errors('401', '404', '500');
  const saving = errors('400', '401', '403', '404', '409', '413', '415', '500');

  doc.operation('get', `${base}/form`, {
    ...secured, operationId: 'getForm', summary: 'The qualification form: ordered questions with their ids',
    parameters: [SLUG], responses: { '200': json('The questions, the retired ones and the version to save against.', ref.form), ...reading },
  });
  doc.operation('put', `${base}/form`, {
    ...secured, operationId: 'saveForm', summary: 'Replace the ordered questions (owners and admins)',
    description: 'Ids are kept; new questions get a new `q_` id; questions left out are retired with their label.',
    parameters: [SLUG, CSRF], requestBody: body(ref.formIn), responses: { '200': json('Saved: the form as now stored.', ref.form), ...saving },
  });
  doc.operation('get', `${base}/agent`, {
    ...secured, operationId: 'getAgentSettings', summary: 'Persona, criteria, time zone, phone country, first-contact template, kill switch',
    description: 'The WhatsApp template fields only: the `whatsapp` settings\' secrets are never returned.',
    parameters: [SLUG], responses: { '200': json('The settings and the version to save against.', ref.agent), ...reading },
  });
  doc.operation('put', `${base}/agent`, {
    ...secured, operationId: 'saveAgentSettings', summary: 'Save the agent settings (owners and admins)',
    parameters: [SLUG, CSRF], requestBody: body(ref.agentIn), responses: { '200': json('Saved: the settings as now stored.', ref.agent), ...saving },
  });
  doc.operation('post', `${base}/agent/preview`, {
    ...secured, operationId: 'previewAgentPrompt', summary: 'The system prompt for a sample lead, from unsaved settings',
    description: 'Changes nothing. Built by the agent\'s own prompt builder with the saved questions.',
    parameters: [SLUG, CSRF], requestBody: body(ref.draft), responses: { '200': json('The prompt.', ref.preview), ...errors('400', '401', '403', '404', '413', '415', '500') },
  });
  for (const [path, operationId, summary] of [['switch-on', 'switchAgentOn', 'Switch the agent on'], ['switch-off', 'switchAgentOff', 'Switch the agent off (WhatsApp turns stop sending)']] as const) {
    doc.operation('post', `${base}/agent/${path}`, {
      ...secured, operationId, summary, parameters: [SLUG, CSRF], requestBody: body(shared.empty),
      responses: { '200': json('The switch\'s new state.', ref.switched), ...errors('401', '403', '404', '500') },
    });
  }
}

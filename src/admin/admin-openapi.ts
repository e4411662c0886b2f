import { z } from 'zod';
import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import * as s from './admin-schemas.ts';
import { describeFormAgentAdminApi } from './form-agent-admin-openapi.ts';
import { describeInboxSettingsApi } from './inbox-settings.ts';
import { describeWebhookAdminApi } from './webhook-admin-openapi.ts';
import { describeSettingsAdminApi } from './settings-admin-openapi.ts';
import { describeLogsAdminApi } from './logs-admin-openapi.ts';
import { describeAnalyticsAdminApi } from './analytics-admin-openapi.ts';
import { describeInboxCsvApi, INBOX_FILTER_PARAMETERS } from './inbox-csv-openapi.ts';
import { describeLeadHistoryAdminApi } from './lead-history-openapi.ts';
import { describeLeadNotesAdminApi } from './lead-notes-openapi.ts';

// The admin API (docs/DASHBOARD.md) in the OpenAPI document: what the dashboard's page calls,
// so every action is scriptable with a session cookie and its CSRF token.

type Json = Record<string, unknown>;

/** Every error string the admin routes send (src/http/error-handler.ts). */
export const ADMIN_ERROR_STRINGS = [
  'Request body must be valid JSON.', 'Validation failed.', 'Bad request.', 'Request body is too large.', 'Unsupported media type.',
  'Sign in required.', 'Email or password is incorrect.', 'Too many sign-in attempts; retry later.', 'Missing or invalid CSRF token.',
  'Too many live-update streams for this session: close other dashboard tabs.',
  'Your role in this workspace does not allow this.', 'Workspace not found.', 'Lead not found.', "The lead's status does not allow this.",
  'Someone else has taken this lead over.',
  'Webhook endpoint not found in this workspace.',
  'API key not found in this workspace.', 'Member not found in this workspace.', 'A workspace keeps at least one owner: make another member owner first.',
  'That e-mail address is already a member of this workspace.', 'Invitation not found, already used or expired: ask an owner for a new link.',
  'An account with this e-mail address exists: sign in to accept the invitation.', 'This invitation is for another e-mail address: sign in with that address.',
  'No such dead-lettered turn in this workspace (it may have been retried already).', 'Note not found.',
  'These settings were changed meanwhile.', 'Workspace limit reached.', 'Rate limit exceeded.',
  'Internal server error.',
] as const;

const adminErrorSchema = z.object({
  ok: z.literal(false),
  error: z.enum(ADMIN_ERROR_STRINGS),
  issues: z.array(z.object({ path: z.array(z.string()), message: z.string() })).optional()
    .meta({
      description: 'With `Validation failed.`: each bad field; with `Workspace limit reached.`: which limit, and how many it allows.',
    }),
  message: z.string().optional(),
  status: z.string().optional().meta({ description: "With a 409: the lead's current status." }),
});

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const ID = { name: 'id', in: 'path', required: true, description: 'The lead.', schema: { type: 'string', format: 'uuid' } };
const CSRF = { name: 'X-CSRF-Token', in: 'header', required: true, description: 'The `csrfToken` of the session.', schema: { type: 'string' } };

export function describeAdminApi(doc: OpenApiBuilder): void {
  const error = doc.output('AdminError', adminErrorSchema);
  const ref = {
    session: doc.output('AdminSession', s.sessionSchema),
    ok: doc.output('AdminOk', s.okSchema),
    action: doc.output('AdminActionResult', s.actionResultSchema),
    inbox: doc.output('AdminInbox', s.inboxSchema),
    lead: doc.output('AdminLeadPage', s.leadPageSchema),
    signIn: doc.input('AdminSignIn', s.signInBody),
    outcome: doc.input('AdminOutcome', s.outcomeBody),
    reply: doc.input('AdminReply', s.replyBody),
    empty: doc.input('AdminEmptyBody', z.object({})),
  };
  const json = (description: string, schema: Ref): Json => ({ description, content: { 'application/json': { schema } } });
  const errors = (...codes: string[]): Json => {
    const text: Record<string, string> = {
      '400': 'Bad JSON or a field that fails its checks.',
      '401': 'Not signed in, or the session expired after inactivity.',
      '403': 'CSRF token missing or wrong, or the role does not allow the action.',
      '404': 'Not a workspace of the operator, or no such lead in it.',
      '409': "The lead's status does not allow the action, or (Take over) another operator took the lead first: `message` says who.",
      '413': 'The body is over 64 KiB.',
      '415': 'The body is not JSON.',
      '429': 'Too many failed sign-ins for this account or address; retry after `Retry-After` seconds.',
      '500': 'An unanticipated failure.',
    };
    return Object.fromEntries(codes.map((c) => [c, json(text[c]!, error)]));
  };
  const body = (schema: Ref): Json => ({ required: true, content: { 'application/json': { schema } } });
  const tags = ['Dashboard'];
  const secured = { tags, security: [{ sessionCookie: [] }] };

  doc.operation('post', '/api/admin/session', {
    tags, security: [], operationId: 'signIn', summary: 'Sign in',
    description: 'Checks e-mail and password and sets the HttpOnly session cookie. Failed attempts are throttled per account and per client address.',
    requestBody: body(ref.signIn),
    responses: { '200': json('Signed in: the operator, the CSRF token and the workspaces with roles.', ref.session), ...errors('400', '401', '413', '415', '429', '500') },
  });
  doc.operation('get', '/api/admin/session', {
    ...secured, operationId: 'getSession', summary: 'The signed-in operator',
    responses: { '200': json('The operator, the CSRF token and the workspaces with roles.', ref.session), ...errors('401', '500') },
  });
  doc.operation('delete', '/api/admin/session', {
    ...secured, operationId: 'signOut', summary: 'Sign out',
    parameters: [CSRF, { name: 'everywhere', in: 'query', required: false, description: '`true`: end every session of the operator.', schema: { type: 'string', enum: ['true', 'false'] } }],
    responses: { '200': json('Signed out; the cookie is cleared.', ref.ok), ...errors('400', '401', '403', '500') },
  });
  doc.operation('get', '/api/admin/workspaces/{slug}/leads', {
    ...secured, operationId: 'listLeads', summary: 'The leads inbox',
    description: 'Newest first or by last activity, keyset pages (`nextCursor`), counts per status.',
    parameters: [
      SLUG,
      { name: 'status', in: 'query', required: false, schema: { type: 'string', enum: ['new', 'in_conversation', 'booked', 'unqualified', 'needs_human'] } },
      { name: 'q', in: 'query', required: false, description: 'A phone number in any format, an e-mail address, or part of a name: at least 3 characters '
        + '(a phone number: 3 digits), else 400.', schema: { type: 'string' } },
      { name: 'sandbox', in: 'query', required: false, description: '`true`: sandbox leads too; `false`: live leads only. Absent: '
        + 'sandbox leads too while the workspace has no live lead (`sandbox` in the answer says which).', schema: { type: 'string', enum: ['true', 'false'] } },
      { name: 'sort', in: 'query', required: false, description: '`newest` (the default): by creation; `activity`: by last activity (`lastActivityAt`). Most recent first. '
        + '`waiting`: only the leads waiting for a person (needs_human), the longest waiting first.', schema: { type: 'string', enum: ['newest', 'activity', 'waiting'] } },
      { name: 'cursor', in: 'query', required: false, description: '`nextCursor` of the previous page, with the same `sort`.', schema: { type: 'string' } },
      { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100 } },
      ...INBOX_FILTER_PARAMETERS,
    ],
    responses: { '200': json('A page of leads.', ref.inbox), ...errors('400', '401', '403', '404', '500') },
  });
  doc.operation('get', '/api/admin/workspaces/{slug}/leads/{id}', {
    ...secured, operationId: 'getLeadPage', summary: 'Everything about one lead',
    parameters: [SLUG, ID],
    description: 'The newest page of the thread and of the timeline (older ones: `…/messages`, `…/timeline`); '
      + 'the provider traffic is `…/provider-traffic`.',
    responses: { '200': json('The lead, the newest of its timeline and messages, its calls.', ref.lead), ...errors('401', '403', '404', '500') },
  });
  doc.operation('delete', '/api/admin/workspaces/{slug}/leads/{id}', {
    ...secured, operationId: 'deleteLead', summary: 'Delete lead', description: 'Erases the lead (admin and owner); an audit row remains.',
    parameters: [SLUG, ID, CSRF],
    responses: { '200': json('Erased.', ref.ok), ...errors('401', '403', '404', '500') },
  });
  const actions: Array<[string, string, string, Ref | null]> = [
    ['take-over', 'takeOver', 'Take over: the lead goes to a person; the agent sends nothing more. '
      + 'A booked or unqualified lead keeps its status.', null],
    ['resume', 'resumeAi', 'Resume AI: back to the agent, which answers an unanswered message now. '
      + 'A booked or unqualified lead keeps its status.', null],
    ['outcome', 'setOutcome', 'Set outcome by hand: booked with a note, or unqualified with a reason.', ref.outcome],
    ['reply', 'reply', 'Reply on WhatsApp (after Take over, or to a booked or unqualified lead): `text` inside the 24-hour window '
      + '(400 outside it: nothing is sent), or `template: true` for the approved template.', ref.reply],
  ];
  for (const [path, operationId, summary, input] of actions) {
    doc.operation('post', `/api/admin/workspaces/{slug}/leads/{id}/${path}`, {
      ...secured, operationId, summary,
      parameters: [SLUG, ID, CSRF],
      requestBody: body(input ?? ref.empty),
      responses: { '200': json("Done: the lead's status now.", ref.action), ...errors('400', '401', '403', '404', '409', '413', '415', '500') },
    });
  }
  doc.operation('get', '/api/admin/workspaces/{slug}/events', {
    ...secured, operationId: 'leadEvents', summary: 'Live updates (Server-Sent Events)',
    description: 'A `ready` event first (and after any gap: refetch), then a `change` event `{kind, leadIds}` for each change of the workspace.',
    parameters: [SLUG],
    responses: {
      '200': { description: 'An event stream; `end` `{kind, reason}` before it closes because the session or membership is gone.',
        content: { 'text/event-stream': { schema: { type: 'string' } } } },
      ...errors('401', '403', '404', '429', '500'),
    },
  });
  describeWebhookAdminApi(doc, { error, ok: ref.ok, empty: ref.empty });
  describeSettingsAdminApi(doc, { error, ok: ref.ok, empty: ref.empty });
  describeLogsAdminApi(doc, { error, empty: ref.empty });
  describeFormAgentAdminApi(doc, { error, ok: ref.ok, empty: ref.empty });
  describeInboxSettingsApi(doc, { error });
  describeAnalyticsAdminApi(doc, { error });
  describeInboxCsvApi(doc, { error });
  describeLeadHistoryAdminApi(doc, { error });
  describeLeadNotesAdminApi(doc, { error, ok: ref.ok });
  // Every call that carries a session cookie counts against the session's rate limit (admin-rate-limit.ts).
  const limited =
    'More than ADMIN_RATE_LIMIT_PER_MINUTE requests of this session in the current minute; retry after `Retry-After` seconds.';
  doc.eachOperation((path, _method, op) => {
    if (!path.startsWith('/api/admin/')) return;
    const responses = op.responses as Record<string, Json>;
    const before = responses['429'];
    responses['429'] = before
      ? { ...before, description: `${String(before.description)} Or: ${limited}` }
      : json(limited, error);
  });
}

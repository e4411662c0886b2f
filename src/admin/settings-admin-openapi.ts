import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import * as s from './settings-admin-schemas.ts';

// The Providers, API keys and Team pages' admin API (docs/DASHBOARD.md, "Providers, API keys and
// team") in the OpenAPI document: session cookie, CSRF token on every other method than GET.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const CSRF = { name: 'X-CSRF-Token', in: 'header', required: true, description: 'The `csrfToken` of the session.', schema: { type: 'string' } };
const id = (what: string) => ({ name: 'id', in: 'path', required: true, description: what, schema: { type: 'string', format: 'uuid' } });
const PROVIDER = { name: 'provider', in: 'path', required: true, description: 'The section of the workspace config.', schema: { type: 'string', enum: ['voice', 'whatsapp', 'scheduling', 'llm'] } };

/** Called by describeAdminApi with the schemas the admin routes share (error, ok, empty body). */
export function describeSettingsAdminApi(doc: OpenApiBuilder, shared: { error: Ref; ok: Ref; empty: Ref }): void {
  const { error, ok, empty } = shared;
  const ref = {
    providers: doc.output('AdminProviders', s.providersSchema),
    tested: doc.output('AdminProviderTest', s.providerTestSchema),
    keys: doc.output('AdminApiKeys', s.keyListSchema),
    keyCreated: doc.output('AdminApiKeyCreated', s.keyCreatedSchema),
    team: doc.output('AdminTeam', s.teamSchema),
    invited: doc.output('AdminInvited', s.invitedSchema),
    inviteInfo: doc.output('AdminInvite', s.inviteInfoSchema),
    accepted: doc.output('AdminInviteAccepted', s.acceptedSchema),
    providerBody: doc.input('AdminProviderSection', s.providerBody),
    createKey: doc.input('AdminApiKeyCreate', s.createKeyBody),
    invite: doc.input('AdminInviteCreate', s.inviteBody),
    role: doc.input('AdminRoleChange', s.roleBody),
    lookup: doc.input('AdminInviteLookup', s.inviteLookupBody),
    accept: doc.input('AdminInviteAccept', s.acceptBody),
  };
  const json = (description: string, schema: Ref): Json => ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'Bad JSON, or a field that fails its checks (each named in `issues`).',
    '401': 'Not signed in, or the session expired after inactivity.',
    '403': 'CSRF token missing or wrong, or the role does not allow this (Providers and API keys: owners and admins; Team: owners).',
    '404': 'Not a workspace of the operator, or no such key, member or invitation in it.',
    '409': 'The workspace would be left without an owner, the address is already a member, an account with the address ' +
      'exists, or the workspace has as many active API keys as this installation allows (MAX_API_KEYS_PER_WORKSPACE).',
    '413': 'The body is over 64 KiB.',
    '415': 'The body is not JSON.',
    '429': 'Too many failed sign-ins from this address.',
    '500': 'An unanticipated failure.',
  };
  const errors = (...codes: string[]): Json => Object.fromEntries(codes.map((c) => [c, json(text[c]!, error)]));
  const body = (schema: Ref): Json => ({ required: true, content: { 'application/json': { schema } } });
  const secured = { tags: ['Dashboard'], security: [{ sessionCookie: [] }] };
  const reading = errors('400', '401', '403', '404', '500');
  const writing = errors('400', '401', '403', '404', '413', '415', '500');
  const ws = '/api/admin/workspaces/{slug}';

  doc.operation('get', `${ws}/providers`, {
    ...secured, operationId: 'getProviders', summary: 'Provider settings, secrets masked, and the URLs to paste into each provider',
    parameters: [SLUG], responses: { '200': json('Each section with secrets as `{set, last4}`; never a secret.', ref.providers), ...reading },
  });
  doc.operation('put', `${ws}/providers/{provider}`, {
    ...secured, operationId: 'saveProvider', summary: 'Save one provider section (encrypted at rest)',
    description: 'Replaces the section. Secrets left out or "" keep the stored value; null removes an optional one.',
    parameters: [SLUG, PROVIDER, CSRF], requestBody: body(ref.providerBody), responses: { '200': json('Saved.', ok), ...writing },
  });
  doc.operation('post', `${ws}/providers/{provider}/test`, {
    ...secured, operationId: 'testProvider', summary: 'Test connection: the checks of `leadintake workspace verify` for one provider',
    parameters: [SLUG, PROVIDER, CSRF], requestBody: body(empty), responses: { '200': json('Each PASS/FAIL line with what to fix.', ref.tested), ...writing },
  });
  doc.operation('get', `${ws}/keys`, {
    ...secured, operationId: 'listApiKeys', summary: 'API keys of the workspace (never the keys themselves)',
    parameters: [SLUG], responses: { '200': json('Live and sandbox keys, revoked ones too.', ref.keys), ...reading },
  });
  doc.operation('post', `${ws}/keys`, {
    ...secured, operationId: 'createApiKey', summary: 'Create an API key (shown once)',
    parameters: [SLUG, CSRF], requestBody: body(ref.createKey), responses: { '200': json('The key, this once.', ref.keyCreated), ...writing, ...errors('409') },
  });
  doc.operation('delete', `${ws}/keys/{id}`, {
    ...secured, operationId: 'revokeApiKey', summary: 'Revoke an API key',
    description: 'At once in this process; other processes may accept it for up to `cacheTtlSeconds`.',
    parameters: [SLUG, id('The API key.'), CSRF], responses: { '200': json('Revoked.', ok), ...reading },
  });
  doc.operation('get', `${ws}/team`, {
    ...secured, operationId: 'getTeam', summary: 'Members with roles and pending invitations (owners)',
    parameters: [SLUG], responses: { '200': json('The team.', ref.team), ...reading },
  });
  doc.operation('post', `${ws}/team/invites`, {
    ...secured, operationId: 'inviteMember', summary: 'Invite an e-mail address with a role: a one-time link, valid 7 days',
    parameters: [SLUG, CSRF], requestBody: body(ref.invite), responses: { '200': json('The invitation and its link, this once.', ref.invited), ...errors('400', '401', '403', '404', '409', '413', '415', '500') },
  });
  doc.operation('delete', `${ws}/team/invites/{id}`, {
    ...secured, operationId: 'cancelInvite', summary: 'Cancel a pending invitation',
    parameters: [SLUG, id('The invitation.'), CSRF], responses: { '200': json('Cancelled: the link no longer works.', ok), ...reading },
  });
  doc.operation('patch', `${ws}/team/members/{id}`, {
    ...secured, operationId: 'changeRole', summary: "Change a member's role (the last owner stays owner)",
    parameters: [SLUG, id('The member (operator id).'), CSRF], requestBody: body(ref.role), responses: { '200': json('Changed.', ok), ...errors('400', '401', '403', '404', '409', '413', '415', '500') },
  });
  doc.operation('delete', `${ws}/team/members/{id}`, {
    ...secured, operationId: 'removeMember', summary: 'Remove a member from the workspace (not the last owner)',
    parameters: [SLUG, id('The member (operator id).'), CSRF], responses: { '200': json('Removed.', ok), ...errors('400', '401', '403', '404', '409', '500') },
  });
  doc.operation('post', '/api/admin/invites/lookup', {
    tags: ['Dashboard'], security: [], operationId: 'lookUpInvite', summary: 'What an invitation link is for (the token is the authority)',
    requestBody: body(ref.lookup), responses: { '200': json('The invitation.', ref.inviteInfo), ...errors('400', '404', '413', '415', '500') },
  });
  doc.operation('post', `${ws}/invites/accept`, {
    tags: ['Dashboard'], security: [], operationId: 'acceptInvite', summary: 'Accept an invitation',
    description: 'Signed in (with the CSRF token): joins the account, whose e-mail must be the invited one. Not signed in: creates the account with `name` and `password` and signs it in (sets the session cookie).',
    parameters: [SLUG], requestBody: body(ref.accept),
    responses: { '200': json('Accepted: the operator is a member now.', ref.accepted), ...errors('400', '401', '403', '404', '409', '413', '415', '429', '500') },
  });
}

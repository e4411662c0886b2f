import type { OpenApiBuilder, Ref } from '../http/openapi-builder.ts';
import { leadNoteBodySchema, leadNotesSchema, noteBody } from './lead-notes-schemas.ts';

// The internal notes of a lead (docs/DASHBOARD.md, "Internal notes") in the OpenAPI document.

type Json = Record<string, unknown>;

const SLUG = { name: 'slug', in: 'path', required: true, description: 'The workspace.', schema: { type: 'string' } };
const ID = {
  name: 'id', in: 'path', required: true, description: 'The lead.',
  schema: { type: 'string', format: 'uuid' },
};
const NOTE = { name: 'noteId', in: 'path', required: true, description: 'The note.', schema: { type: 'integer' } };
const CSRF = {
  name: 'X-CSRF-Token', in: 'header', required: true, description: 'The `csrfToken` of the session.',
  schema: { type: 'string' },
};

export function describeLeadNotesAdminApi(doc: OpenApiBuilder, shared: { error: Ref; ok: Ref }): void {
  const list = doc.output('AdminLeadNotes', leadNotesSchema);
  const one = doc.output('AdminLeadNote', leadNoteBodySchema);
  const input = doc.input('AdminLeadNoteInput', noteBody);
  const json = (description: string, schema: Ref): Json =>
    ({ description, content: { 'application/json': { schema } } });
  const text: Record<string, string> = {
    '400': 'A bad note: empty, or over 2,000 characters.',
    '401': 'Not signed in, or the session expired after inactivity.',
    '403': 'CSRF token missing or wrong, the role does not allow it (viewers), or the note is not yours.',
    '404': 'Not a workspace of the operator, or no such lead (or note) in it.',
    '409': 'The lead holds the most notes it may: delete some first.',
    '500': 'An unanticipated failure.',
  };
  const errors = (...codes: string[]) => Object.fromEntries(codes.map((c) => [c, json(text[c]!, shared.error)]));
  const base = '/api/admin/workspaces/{slug}/leads/{id}/notes';
  const secured = { tags: ['Dashboard'], security: [{ sessionCookie: [] }] };
  doc.operation('get', base, {
    ...secured, operationId: 'listLeadNotes', summary: "The lead's internal notes, newest first",
    description: 'Operators only: the lead never sees them; the agent reads those with `visibleToAgent`.',
    parameters: [SLUG, ID],
    responses: { '200': json('The notes.', list), ...errors('401', '404', '500') },
  });
  doc.operation('post', base, {
    ...secured, operationId: 'addLeadNote', summary: 'Add an internal note (agents and up)',
    parameters: [SLUG, ID, CSRF],
    requestBody: { required: true, content: { 'application/json': { schema: input } } },
    responses: { '200': json('The note.', one), ...errors('400', '401', '403', '404', '409', '500') },
  });
  doc.operation('delete', `${base}/{noteId}`, {
    ...secured, operationId: 'deleteLeadNote', summary: 'Delete one of your own notes',
    parameters: [SLUG, ID, NOTE, CSRF],
    responses: { '200': json('Deleted.', shared.ok), ...errors('401', '403', '404', '500') },
  });
}

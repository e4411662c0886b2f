import { z } from 'zod';
import { named } from '../../http/route-contract.ts';
import { adminOk, adminRoute, answer, csrfHeaders, errorResponses, leadParams } from '../admin-contract.ts';
import { leadNoteBodySchema, leadNotesSchema, noteBody } from './lead-notes-schemas.ts';

// The internal notes of a lead (docs/DASHBOARD.md, "Internal notes"; lead-notes-routes.ts).

const errors = errorResponses({
  '400': 'A bad note: empty, or over 2,000 characters.',
  '401': 'Not signed in, or the session expired after inactivity.',
  '403': 'CSRF token missing or wrong, the role does not allow it (viewers), or the note is not yours.',
  '404': 'Not a workspace of the operator, or no such lead (or note) in it.',
  '409': 'The lead holds the most notes it may: delete some first.',
  '500': 'An unanticipated failure.',
});
const base = '/api/admin/workspaces/:slug/leads/:id/notes';

export const listNotesRoute = adminRoute({
  method: 'GET',
  url: base,
  operationId: 'listLeadNotes',
  summary: "The lead's internal notes, newest first",
  description: 'Operators only: the lead never sees them; the agent reads those with `visibleToAgent`.',
  params: leadParams,
  responses: { '200': answer('The notes.', named('AdminLeadNotes', leadNotesSchema)), ...errors('401', '404', '500') },
});
export const addNoteRoute = adminRoute({
  method: 'POST',
  url: base,
  operationId: 'addLeadNote',
  summary: 'Add an internal note (agents and up)',
  params: leadParams,
  headers: csrfHeaders,
  body: named('AdminLeadNoteInput', noteBody),
  responses: {
    '200': answer('The note.', named('AdminLeadNote', leadNoteBodySchema)),
    ...errors('400', '401', '403', '404', '409', '500'),
  },
});
export const deleteNoteRoute = adminRoute({
  method: 'DELETE',
  url: `${base}/:noteId`,
  operationId: 'deleteLeadNote',
  summary: 'Delete one of your own notes',
  // Documented as the integer it is; any other text is a note that is not found (404).
  params: leadParams.extend({ noteId: z.string().meta({ description: 'The note.', type: 'integer' }) }),
  headers: csrfHeaders,
  responses: { '200': answer('Deleted.', adminOk), ...errors('401', '403', '404', '500') },
});

export const LEAD_NOTES_ROUTES = [listNotesRoute, addNoteRoute, deleteNoteRoute];

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Pool } from '../../db/pool.ts';
import type { OperatorService } from '../../operators/operator-service.ts';
import { AppError } from '../../shared/errors.ts';
import { requireMembership, requireSession } from '../admin-auth.ts';
import { registerRoute } from '../../http/route-contract.ts';
import * as c from './lead-notes-contracts.ts';
import { addNote, deleteNote, listNotes } from './lead-notes.ts';
import type { LeadNotesBody, LeadNoteBody } from './lead-notes-schemas.ts';

// The lead page's internal notes (docs/DASHBOARD.md, "Internal notes"): every member reads them,
// agents and up write them (`leads.act`), and only a note's author deletes it.

export interface LeadNotesDeps {
  pool: Pool;
  operators: OperatorService;
}

type Params = { Params: { slug: string; id: string; noteId?: string } };
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function leadNotesRoutes(deps: LeadNotesDeps) {
  const scopeOf = async (request: FastifyRequest<Params>, permission: 'leads.read' | 'leads.act') => {
    const session = await requireSession(deps.operators, request);
    const membership = requireMembership(session, request.params.slug, permission);
    if (!UUID.test(request.params.id)) throw new AppError('lead_not_found');
    return { workspaceId: membership.workspaceId, leadId: request.params.id, operatorId: session.operator.id };
  };
  return async (scope: FastifyInstance): Promise<void> => {
    registerRoute(scope, c.listNotesRoute, async (request): Promise<LeadNotesBody> => {
      const s = await scopeOf(request, 'leads.read');
      const notes = await listNotes(deps.pool, s.workspaceId, s.leadId, s.operatorId);
      if (!notes) throw new AppError('lead_not_found');
      return { ok: true, notes };
    });
    registerRoute(
      scope,
      c.addNoteRoute,
      async (request, _reply, input): Promise<LeadNoteBody> => {
        const s = await scopeOf(request, 'leads.act');
        const body = input.body();
        const note = await addNote(deps.pool, { ...s, text: body.text, visibleToAgent: body.visibleToAgent ?? false });
        return { ok: true, note };
      },
      { audit: 'lead.note_added' },
    );
    registerRoute(
      scope,
      c.deleteNoteRoute,
      async (request) => {
        const s = await scopeOf(request, 'leads.act');
        const noteId = Number(request.params.noteId);
        if (!Number.isSafeInteger(noteId) || noteId < 1) throw new AppError('note_not_found');
        await deleteNote(deps.pool, { ...s, noteId });
        return { ok: true as const };
      },
      { audit: 'lead.note_deleted' },
    );
  };
}

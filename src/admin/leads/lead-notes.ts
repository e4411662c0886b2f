import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../shared/errors.ts';

// Internal notes on a lead (docs/DASHBOARD.md, "Internal notes"): operators write them, the lead
// never sees them, and the agent reads only those whose author shared them (`visibleToAgent`,
// off by default; src/agent/agent-lead-queries.ts puts them in the prompt's lead-data block).
// Every statement is scoped by the workspace as well as the lead: another tenant's lead is "not found".

/** Characters of one note (the column's CHECK says the same). */
export const NOTE_MAX_CHARS = 2000;
/** Notes one lead may hold: a bound on what the page loads and on the table's growth per lead. */
export const NOTES_PER_LEAD_MAX = 200;

export interface LeadNote {
  id: number;
  text: string;
  visibleToAgent: boolean;
  /** Null once the author's account was removed. */
  operator: { id: string; name: string } | null;
  /** Written by the operator asking (who alone may delete it). */
  mine: boolean;
  createdAt: string;
}

type NoteRow = {
  id: string;
  text: string;
  visible_to_agent: boolean;
  operator_id: string | null;
  operator_name: string | null;
  created_at: Date;
};

const row = (r: NoteRow, me: string): LeadNote => ({
  id: Number(r.id),
  text: r.text,
  visibleToAgent: r.visible_to_agent,
  operator: r.operator_id ? { id: r.operator_id, name: r.operator_name ?? '' } : null,
  mine: r.operator_id === me,
  createdAt: r.created_at.toISOString(),
});

const SELECT = `SELECT n.id, n.text, n.visible_to_agent, n.operator_id, o.name AS operator_name, n.created_at
                  FROM lead_notes n LEFT JOIN operators o ON o.id = n.operator_id`;

/** The lead's notes, newest first; null when the workspace has no such lead. */
export async function listNotes(
  db: Queryable,
  workspaceId: string,
  leadId: string,
  operatorId: string,
): Promise<LeadNote[] | null> {
  const { rows } = await db.query(
    `SELECT EXISTS (SELECT 1 FROM leads WHERE id = $1 AND workspace_id = $2) AS found,
            coalesce((SELECT json_agg(x)
                        FROM (${SELECT} WHERE n.lead_id = $1 ORDER BY n.created_at DESC, n.id DESC) x), '[]') AS notes`,
    [leadId, workspaceId],
  );
  if (!rows[0].found) return null;
  return (rows[0].notes as Array<Omit<NoteRow, 'created_at'> & { created_at: string }>).map((r) =>
    row({ ...r, created_at: new Date(r.created_at) }, operatorId),
  );
}

/** Adds a note (one statement: the lead's row lock orders concurrent adds, so the cap holds). */
export async function addNote(
  db: Queryable,
  p: { workspaceId: string; leadId: string; operatorId: string; text: string; visibleToAgent: boolean },
): Promise<LeadNote> {
  const { rows } = await db.query(
    `WITH lead AS (
       SELECT id, (SELECT count(*) FROM lead_notes WHERE lead_id = l.id) AS notes
         FROM leads l WHERE id = $1 AND workspace_id = $2 FOR UPDATE
     ), added AS (
       INSERT INTO lead_notes (lead_id, operator_id, text, visible_to_agent)
       SELECT id, $3, $4, $5 FROM lead WHERE notes < $6
       RETURNING id, text, visible_to_agent, operator_id, created_at
     )
     SELECT (SELECT count(*) FROM lead) AS found, a.*, o.name AS operator_name
       FROM (SELECT 1) one LEFT JOIN added a ON true LEFT JOIN operators o ON o.id = a.operator_id`,
    [p.leadId, p.workspaceId, p.operatorId, p.text, p.visibleToAgent, NOTES_PER_LEAD_MAX],
  );
  const r = rows[0];
  if (Number(r.found) === 0) throw new AppError('lead_not_found');
  if (r.id === null) {
    const message = `A lead holds at most ${NOTES_PER_LEAD_MAX} notes: delete some first.`;
    throw new AppError('limit_reached', { message });
  }
  return row(r, p.operatorId);
}

/** Deletes one of the operator's own notes on the lead; someone else's answers 403. */
export async function deleteNote(
  db: Queryable,
  p: { workspaceId: string; leadId: string; noteId: number; operatorId: string },
): Promise<void> {
  const { rows } = await db.query(
    `WITH note AS (
       SELECT n.id, n.operator_id FROM lead_notes n JOIN leads l ON l.id = n.lead_id
        WHERE n.id = $1 AND n.lead_id = $2 AND l.workspace_id = $3
     ), gone AS (
       DELETE FROM lead_notes WHERE id = (SELECT id FROM note WHERE operator_id = $4) RETURNING id
     )
     SELECT (SELECT count(*) FROM note) AS found, (SELECT count(*) FROM gone) AS deleted`,
    [p.noteId, p.leadId, p.workspaceId, p.operatorId],
  );
  if (Number(rows[0].found) === 0) throw new AppError('note_not_found');
  if (Number(rows[0].deleted) === 0) throw new AppError('forbidden');
}

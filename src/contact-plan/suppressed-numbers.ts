import type { Queryable } from '../db/pool.ts';

// The do-not-contact list as the admin API edits it (docs/DASHBOARD.md, "Do not contact"). Adding
// a number ends the plans of the workspace's leads with it (migration 045's trigger) and writes
// `suppression.added` on their timelines; removing one lets contact happen again (nothing is
// re-sent by itself: a new lead, a plan scheduled again or an operator's reply goes out).

export type SuppressionSource = 'opt_out' | 'operator' | 'api';

export interface SuppressedNumber {
  phone: string;
  source: SuppressionSource;
  note: string | null;
  operator: { id: string; name: string } | null;
  leadId: string | null;
  createdAt: Date;
}

export interface SuppressedPage {
  numbers: SuppressedNumber[];
  total: number;
}

/** Newest first; `offset`/`limit` page it. */
export async function listSuppressed(
  db: Queryable,
  workspaceId: string,
  page: { offset: number; limit: number },
): Promise<SuppressedPage> {
  const { rows } = await db.query(
    `SELECT s.phone_e164, s.source, s.note, s.lead_id, s.created_at, o.id AS operator_id, o.name AS operator_name,
            count(*) OVER () AS total
       FROM suppressed_numbers s LEFT JOIN operators o ON o.id = s.operator_id
      WHERE s.workspace_id = $1
      ORDER BY s.created_at DESC, s.phone_e164
      OFFSET $2 LIMIT $3`,
    [workspaceId, page.offset, page.limit],
  );
  const total = rows[0] ? Number(rows[0].total) : await countSuppressed(db, workspaceId);
  return {
    total,
    numbers: rows.map((r) => ({
      phone: r.phone_e164,
      source: r.source,
      note: r.note,
      operator: r.operator_id ? { id: r.operator_id, name: r.operator_name } : null,
      leadId: r.lead_id,
      createdAt: r.created_at,
    })),
  };
}

async function countSuppressed(db: Queryable, workspaceId: string): Promise<number> {
  const { rows } = await db.query('SELECT count(*)::int AS n FROM suppressed_numbers WHERE workspace_id = $1', [
    workspaceId,
  ]);
  return rows[0].n;
}

export interface SuppressionInput {
  workspaceId: string;
  phoneE164: string;
  source: Exclude<SuppressionSource, 'opt_out'>;
  note: string | null;
  operatorId: string | null;
  leadId: string | null;
}

/**
 * Puts the number on the list (false: it was already there, unchanged). In one statement: the row,
 * whose trigger ends the running plans, and `suppression.added` on each lead with the number.
 */
export async function addSuppressed(db: Queryable, s: SuppressionInput): Promise<boolean> {
  const { rows } = await db.query(
    `WITH added AS (
       INSERT INTO suppressed_numbers (workspace_id, phone_e164, source, note, operator_id, lead_id)
       VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (workspace_id, phone_e164) DO NOTHING
       RETURNING workspace_id, phone_e164
     ), events AS (
       INSERT INTO lead_events (lead_id, type, data)
       SELECT l.id, 'suppression.added',
              jsonb_strip_nulls(jsonb_build_object('source', $3::text, 'operatorId', $5::uuid))
         FROM leads l JOIN added a ON a.workspace_id = l.workspace_id AND a.phone_e164 = l.phone_normalized
     )
     SELECT count(*)::int AS n FROM added`,
    [s.workspaceId, s.phoneE164, s.source, s.note, s.operatorId, s.leadId],
  );
  return rows[0].n === 1;
}

/** Takes the number off the list (false: it was not on it); `suppression.removed` on its leads' timelines. */
export async function removeSuppressed(
  db: Queryable,
  r: { workspaceId: string; phoneE164: string; operatorId: string },
): Promise<boolean> {
  const { rows } = await db.query(
    `WITH removed AS (
       DELETE FROM suppressed_numbers WHERE workspace_id = $1 AND phone_e164 = $2 RETURNING workspace_id, phone_e164
     ), events AS (
       INSERT INTO lead_events (lead_id, type, data)
       SELECT l.id, 'suppression.removed', jsonb_build_object('operatorId', $3::uuid)
         FROM leads l JOIN removed r ON r.workspace_id = l.workspace_id AND r.phone_e164 = l.phone_normalized
     )
     SELECT count(*)::int AS n FROM removed`,
    [r.workspaceId, r.phoneE164, r.operatorId],
  );
  return rows[0].n === 1;
}

/** The lead's number and whether it is on the list (null: no such lead in the workspace). */
export async function leadNumber(
  db: Queryable,
  workspaceId: string,
  leadId: string,
): Promise<{ phoneE164: string } | null> {
  const { rows } = await db.query('SELECT phone_normalized FROM leads WHERE id = $1 AND workspace_id = $2', [
    leadId,
    workspaceId,
  ]);
  return rows[0] ? { phoneE164: rows[0].phone_normalized } : null;
}

/** The lead page's `doNotContact`: the list entry of the lead's number, or null. */
export async function suppressionOfLead(
  db: Queryable,
  leadId: string,
): Promise<{ source: SuppressionSource; at: Date } | null> {
  const { rows } = await db.query(
    `SELECT s.source, s.created_at FROM leads l
       JOIN suppressed_numbers s ON s.workspace_id = l.workspace_id AND s.phone_e164 = l.phone_normalized
      WHERE l.id = $1`,
    [leadId],
  );
  return rows[0] ? { source: rows[0].source, at: rows[0].created_at } : null;
}

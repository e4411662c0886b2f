import type { Queryable } from '../db/pool.ts';
import { TERMINAL_STATUSES, type LeadStatus } from '../leads/lead-state.ts';

/** A lead as the agent's tools and prompt see it. */
export interface AgentLead {
  id: string;
  workspaceId: string;
  status: LeadStatus;
  name: string;
  email: string | null;
  goal: string | null;
  phoneNormalized: string;
  metadata: Record<string, unknown>;
  /** As the form sent them, by question id (unknown ids included). */
  formResponses: Record<string, string>;
  /** Collected by the agent, by question id. */
  answers: Record<string, string>;
  notes: string | null;
  /** Operators' notes shared with the agent (lead_notes.visible_to_agent), newest first. */
  teamNotes?: string[];
  bookingUid: string | null;
  bookingStart: Date | null;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The lead, only if it belongs to the workspace: a tool call never reaches another tenant's lead. */
export async function findAgentLead(db: Queryable, workspaceId: string, leadId: string): Promise<AgentLead | null> {
  // Lead ids arrive from providers (call metadata); a malformed one is simply not found.
  if (!UUID.test(leadId)) return null;
  const { rows } = await db.query({
    name: 'find-agent-lead',
    text: `SELECT id, workspace_id, status, name, email, goal, phone_normalized, metadata, form_responses, answers,
                  agent_notes, booking_uid, booking_start,
                  -- The newest few: the prompt's notes budget shows less still (lead-data-block.ts).
                  ARRAY(SELECT text FROM lead_notes n WHERE n.lead_id = leads.id AND n.visible_to_agent
                         ORDER BY created_at DESC, id DESC LIMIT 20) AS team_notes
             FROM leads WHERE id = $1 AND workspace_id = $2`,
    values: [leadId, workspaceId],
  });
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    workspaceId: r.workspace_id,
    status: r.status,
    name: r.name,
    email: r.email,
    goal: r.goal,
    phoneNormalized: r.phone_normalized,
    metadata: r.metadata,
    formResponses: r.form_responses,
    answers: r.answers,
    notes: r.agent_notes,
    teamNotes: r.team_notes,
    bookingUid: r.booking_uid,
    bookingStart: r.booking_start,
  };
}

/**
 * Characters of agent notes a lead keeps: the latest ones. Notes quote the lead and are shown in
 * every prompt, so they need a bound however long the conversation (the prompt shows less still,
 * src/agent/lead-data-block.ts).
 */
export const AGENT_NOTES_MAX_CHARS = 8000;

export type ProfileSaveResult =
  | { ok: true }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'refused'; status: LeadStatus };

/**
 * Merges answers (by question id) and appends notes (keeping the latest AGENT_NOTES_MAX_CHARS),
 * unless the lead is in a terminal status at the moment of the UPDATE (guarded in the statement,
 * like transitionLead); the timeline entry is written by the same statement.
 */
export async function saveLeadProfile(
  db: Queryable,
  leadId: string,
  p: { answers: Record<string, string>; notes: string | null },
): Promise<ProfileSaveResult> {
  const { rows } = await db.query({
    name: 'save-lead-profile',
    text: `WITH prev AS (
             SELECT id, status FROM leads WHERE id = $1 FOR UPDATE
           ), saved AS (
             UPDATE leads l SET answers = l.answers || $2::jsonb,
                    agent_notes = CASE WHEN $3::text IS NULL THEN l.agent_notes
                                       ELSE right(concat_ws(E'\\n', l.agent_notes, $3::text), $6) END,
                    updated_at = now()
               FROM prev WHERE l.id = prev.id AND prev.status <> ALL($4::text[])
             RETURNING l.id
           ), event AS (
             INSERT INTO lead_events (lead_id, type, data) SELECT id, 'lead.profile_updated', $5::jsonb FROM saved
           )
           SELECT (SELECT status FROM prev) AS current, EXISTS (SELECT 1 FROM saved) AS saved`,
    values: [
      leadId,
      JSON.stringify(p.answers),
      p.notes,
      [...TERMINAL_STATUSES],
      // Which questions were answered, not the answers: those are on the lead.
      JSON.stringify({ questionIds: Object.keys(p.answers), notes: p.notes !== null, actor: 'agent' }),
      AGENT_NOTES_MAX_CHARS,
    ],
  });
  const row = rows[0];
  if (!row || row.current === null) return { ok: false, reason: 'not_found' };
  return row.saved ? { ok: true } : { ok: false, reason: 'refused', status: row.current };
}

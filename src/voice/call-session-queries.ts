import type { Queryable } from '../db/pool.ts';
import type { SessionState } from './call-session-merge.ts';

// Call sessions as Vapi's server messages see them: always found within the workspace whose
// secret authenticated the message. Locks are taken lead first, then session, in every path
// (transitionLead locks the lead too), so concurrent messages of one call never deadlock.

export interface CallSession extends SessionState {
  id: string;
  leadId: string;
  providerCallId: string;
}

/** The session's lead id, without locking (tool calls do not hold locks while tools run). */
export async function findSessionLead(
  db: Queryable,
  workspaceId: string,
  providerCallId: string,
): Promise<string | null> {
  const { rows } = await db.query(
    `SELECT c.lead_id FROM call_sessions c JOIN leads l
      ON l.id = c.lead_id WHERE c.provider_call_id = $1 AND l.workspace_id = $2`,
    [providerCallId, workspaceId],
  );
  return rows[0]?.lead_id ?? null;
}

/** Locks the call's lead, then the session. */
export async function lockSession(
  db: Queryable,
  workspaceId: string,
  providerCallId: string,
): Promise<CallSession | null> {
  const leadId = await findSessionLead(db, workspaceId, providerCallId);
  if (!leadId) return null;
  await db.query('SELECT 1 FROM leads WHERE id = $1 FOR UPDATE', [leadId]);
  const { rows } = await db.query(
    'SELECT * FROM call_sessions WHERE provider_call_id = $1 AND lead_id = $2 FOR UPDATE',
    [providerCallId, leadId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    id: r.id,
    leadId: r.lead_id,
    providerCallId: r.provider_call_id,
    status: r.status,
    startedAt: r.started_at,
    endedAt: r.ended_at,
    durationSeconds: r.duration_seconds,
    summary: r.summary,
    transcript: r.transcript,
    recordingUrl: r.recording_url,
    endedReason: r.ended_reason,
    reportReceivedAt: r.report_received_at,
  };
}

export async function updateSession(db: Queryable, id: string, s: SessionState): Promise<void> {
  await db.query(
    `UPDATE call_sessions SET status = $2, started_at = $3,
            ended_at = $4, duration_seconds = $5, summary = $6, transcript = $7,
            recording_url = $8, ended_reason = $9, report_received_at = $10, updated_at = now()
      WHERE id = $1`,
    [
      id,
      s.status,
      s.startedAt,
      s.endedAt,
      s.durationSeconds,
      s.summary,
      s.transcript,
      s.recordingUrl,
      s.endedReason,
      s.reportReceivedAt,
    ],
  );
}

/**
 * Records the call as the session of the lead its metadata names, if that lead is in the workspace
 * and has no call session at all, or a retry of its contact plan is being placed (the voice
 * attempter records the call after Vapi answers, and Vapi may speak first); false otherwise, or
 * when the call id is already recorded. The session is inserted before the lead is locked: the
 * order voice dispatch uses (its one statement inserts the session, then updates the lead), so the
 * two never wait for each other in a circle.
 */
export async function insertReconciledSession(
  db: Queryable,
  workspaceId: string,
  leadId: string,
  providerCallId: string,
): Promise<boolean> {
  const { rowCount } = await db.query(
    `INSERT INTO call_sessions (lead_id, provider_call_id, status)
     SELECT l.id, $3, 'queued' FROM leads l
      WHERE l.id = $1 AND l.workspace_id = $2
        AND (NOT EXISTS (SELECT 1 FROM call_sessions c WHERE c.lead_id = l.id)
             OR EXISTS (SELECT 1 FROM contact_plans p WHERE p.lead_id = l.id AND p.in_flight_since IS NOT NULL))
     ON CONFLICT (provider_call_id) DO NOTHING`,
    [leadId, workspaceId, providerCallId],
  );
  return rowCount === 1;
}

/** Used by voice dispatch when recording the call conflicts: a server message recorded it first. */
export async function callSessionExists(db: Queryable, leadId: string, providerCallId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM call_sessions WHERE lead_id = $1 AND provider_call_id = $2', [
    leadId,
    providerCallId,
  ]);
  return rows.length > 0;
}

/** Whether `providerCallId` is the lead's latest call (no call again has been placed since). */
export async function isLatestSession(db: Queryable, leadId: string, providerCallId: string): Promise<boolean> {
  const { rows } = await db.query(
    'SELECT provider_call_id FROM call_sessions WHERE lead_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1',
    [leadId],
  );
  return rows[0]?.provider_call_id === providerCallId;
}

// ---- tool calls ----

/**
 * What claiming a tool call found: `claimed` (run it), `repeat` (the same tool call again: its
 * stored result, null while it runs) or `reused` (its id was used in this call for another tool:
 * not the same tool call, and it has no result of its own to give).
 */
export type ToolCallClaim =
  | { kind: 'claimed' }
  | { kind: 'repeat'; result: string | null }
  | { kind: 'reused'; storedName: string };

/**
 * Claims a tool call before it runs. A tool call is identified by the workspace, the provider's
 * call and its id (ids are not unique across calls: migrations/052); a repeat is one with the same
 * tool name (and lead) too.
 */
export async function claimToolCall(
  db: Queryable,
  c: { workspaceId: string; toolCallId: string; providerCallId: string; leadId: string; name: string },
): Promise<ToolCallClaim> {
  const name = c.name.slice(0, 200);
  const { rows } = await db.query(
    `WITH claim AS (
       INSERT INTO voice_tool_calls (workspace_id, tool_call_id, provider_call_id, lead_id, name)
       VALUES ($1, $2, $3, $4, $5) ON CONFLICT (workspace_id, provider_call_id, tool_call_id) DO NOTHING RETURNING 1
     )
     SELECT EXISTS (SELECT 1 FROM claim) AS claimed, t.result, t.name, t.lead_id
       FROM (SELECT 1) one
       LEFT JOIN voice_tool_calls t ON t.workspace_id = $1 AND t.provider_call_id = $3 AND t.tool_call_id = $2`,
    [c.workspaceId, c.toolCallId, c.providerCallId, c.leadId, name],
  );
  const r = rows[0];
  if (r.claimed) return { kind: 'claimed' };
  // Claimed by a concurrent statement this one's snapshot does not see yet: still running.
  if (r.name === null) return { kind: 'repeat', result: null };
  if (r.name !== name || (r.lead_id !== null && r.lead_id !== c.leadId)) return { kind: 'reused', storedName: r.name };
  return { kind: 'repeat', result: r.result };
}

export async function finishToolCall(
  db: Queryable,
  c: { workspaceId: string; providerCallId: string; toolCallId: string },
  result: string,
): Promise<void> {
  await db.query(
    `UPDATE voice_tool_calls SET result = $4, finished_at = now()
      WHERE workspace_id = $1 AND provider_call_id = $2 AND tool_call_id = $3`,
    [c.workspaceId, c.providerCallId, c.toolCallId, result],
  );
}

/** Tool-call answers are kept as long as the integration log (same retention). */
export async function pruneVoiceToolCalls(db: Queryable, maxAgeDays: number): Promise<number> {
  const { rowCount } = await db.query(
    'DELETE FROM voice_tool_calls WHERE created_at < now() - make_interval(days => $1)',
    [maxAgeDays],
  );
  return rowCount ?? 0;
}

// ---- calls placed again (the contact plan's retries) ----

/** Did the lead get a call session since `since` (a retried attempt whose call was already placed)? */
export async function callSessionSince(db: Queryable, leadId: string, since: Date): Promise<boolean> {
  const { rows } = await db.query('SELECT 1 FROM call_sessions WHERE lead_id = $1 AND created_at >= $2 LIMIT 1', [
    leadId,
    since,
  ]);
  return rows.length > 0;
}

/**
 * Records a retry's call: a new session (unless Vapi's first message recorded it already) and
 * `call.dispatched` with the attempt's number; the lead keeps its status.
 */
export async function recordRetriedCall(
  db: Queryable,
  c: { leadId: string; providerCallId: string; callStatus: string; attempt: number },
): Promise<void> {
  await db.query(
    `WITH session AS (
       INSERT INTO call_sessions (lead_id, provider_call_id, status) VALUES ($1, $2, $3)
       ON CONFLICT (provider_call_id) DO NOTHING RETURNING id
     )
     INSERT INTO lead_events (lead_id, type, data)
     SELECT $1, 'call.dispatched',
            jsonb_build_object('providerCallId', $2::text, 'callSessionId', (SELECT id FROM session),
                               'attempt', $4::int)`,
    [c.leadId, c.providerCallId, c.callStatus, c.attempt],
  );
}

// ---- the call sweep (call-sweep.ts) ----

/** A live call whose end has not arrived: still held by Vapi, or placed before `overdueBefore`. */
export interface OpenCall {
  id: string;
  leadId: string;
  workspaceId: string;
  providerCallId: string;
  status: string;
  /** When its end became due to start counting: the time Vapi dials a held call, else when it was placed. */
  since: Date;
  /** The sweep gave up on its end (markEndUnknown): only a cancellation is still looked for. */
  endUnknown: boolean;
}

/**
 * Held calls (also those given up on after `givenUpAfter`) and overdue ones, oldest first;
 * sandbox calls are simulated and always end.
 */
export async function listOpenCalls(
  db: Queryable,
  c: { overdueBefore: Date; givenUpAfter: Date; limit: number },
): Promise<OpenCall[]> {
  const { rows } = await db.query(
    `SELECT c.id, c.lead_id, l.workspace_id, c.provider_call_id, c.status,
            COALESCE(c.scheduled_at, c.created_at) AS since, c.end_unknown_at IS NOT NULL AS end_unknown
       FROM call_sessions c JOIN leads l ON l.id = c.lead_id
      WHERE c.status <> 'ended' AND l.livemode
        AND ((c.status = 'scheduled' AND (c.end_unknown_at IS NULL OR c.end_unknown_at > $2))
             OR (c.end_unknown_at IS NULL AND COALESCE(c.scheduled_at, c.created_at) < $1))
      ORDER BY since LIMIT $3`,
    [c.overdueBefore, c.givenUpAfter, c.limit],
  );
  return rows.map((r) => ({
    id: r.id,
    leadId: r.lead_id,
    workspaceId: r.workspace_id,
    providerCallId: r.provider_call_id,
    status: r.status,
    since: r.since,
    endUnknown: r.end_unknown,
  }));
}

export async function recordScheduledAt(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query('UPDATE call_sessions SET scheduled_at = $2 WHERE id = $1 AND scheduled_at IS DISTINCT FROM $2', [
    id,
    at,
  ]);
}

/** Our own end of a held call we cancelled; false when the session moved on meanwhile. */
export async function endCancelledCall(db: Queryable, id: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE call_sessions SET status = 'ended', ended_reason = 'scheduled-call-deleted', ended_at = $2,
            updated_at = now()
      WHERE id = $1 AND status = 'scheduled'`,
    [id, now],
  );
  return rowCount === 1;
}

/**
 * A held call Vapi has started placing: `queued` (never further, so Vapi's own status updates
 * still record the pick-up); false when the session had moved on already.
 */
export async function markDialling(db: Queryable, id: string): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE call_sessions SET status = 'queued', updated_at = now() WHERE id = $1 AND status = 'scheduled'`,
    [id],
  );
  return rowCount === 1;
}

/** The sweep gives up on the call's end (once): false when it ended or was given up on meanwhile. */
export async function markEndUnknown(db: Queryable, id: string, now: Date): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE call_sessions SET end_unknown_at = $2, updated_at = now()
      WHERE id = $1 AND status <> 'ended' AND end_unknown_at IS NULL`,
    [id, now],
  );
  return rowCount === 1;
}

/** Held calls of erased leads, still to be cancelled at Vapi. */
export async function listCallsToCancel(
  db: Queryable,
  limit: number,
): Promise<Array<{ providerCallId: string; workspaceId: string; createdAt: Date }>> {
  const { rows } = await db.query(
    'SELECT provider_call_id, workspace_id, created_at FROM voice_calls_to_cancel ORDER BY created_at LIMIT $1',
    [limit],
  );
  return rows.map((r) => ({
    providerCallId: r.provider_call_id,
    workspaceId: r.workspace_id,
    createdAt: r.created_at,
  }));
}

export async function forgetCallToCancel(db: Queryable, providerCallId: string): Promise<void> {
  await db.query('DELETE FROM voice_calls_to_cancel WHERE provider_call_id = $1', [providerCallId]);
}

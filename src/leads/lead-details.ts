import { voiceCallView } from './lead-view.ts';
import type { Queryable } from '../db/pool.ts';
import type { LeadStatus } from './lead-state.ts';

// Everything an operator looks at for one lead: `leadintake lead show` prints it, and
// the dashboard's lead page reads the same function. Personal data is included on purpose — this
// is the operator's own view of their lead; it never goes to logs.

/** Timeline and messages beyond this many are cut to the newest ones (`truncated` says so). */
export const MAX_TIMELINE_ROWS = 500;

/** A WhatsApp message of the lead, as the lead page shows it. */
export interface LeadMessage {
  id: number;
  direction: 'inbound' | 'outbound';
  provider: string;
  kind: string;
  body: string;
  status: string;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  statusAt: string;
}

export interface LeadDetails {
  lead: {
    id: string;
    workspaceId: string;
    workspaceSlug: string;
    channel: 'voice' | 'whatsapp';
    status: LeadStatus;
    name: string;
    phone: string;
    phoneNormalized: string;
    email: string | null;
    goal: string | null;
    qualificationNotes: string | null;
    agentNotes: string | null;
    /** What the agent collected, by question id. */
    answers: Record<string, string>;
    formResponses: Record<string, unknown>;
    metadata: Record<string, unknown>;
    bookingUid: string | null;
    bookingStart: string | null;
    consentedAt: string;
    optedOutAt: string | null;
    /** The number on the workspace's do-not-contact list: since when, and who put it there. */
    doNotContact: { source: 'opt_out' | 'operator' | 'api'; at: string } | null;
    createdAt: string;
    updatedAt: string;
  };
  /** The lead's timeline (lead_events), oldest first. */
  timeline: Array<{ id: number; type: string; data: Record<string, unknown>; at: string }>;
  /** WhatsApp messages of both directions, oldest first. */
  messages: LeadMessage[];
  /** True when timeline or messages were cut to their newest MAX_TIMELINE_ROWS. */
  truncated: boolean;
  /** The latest call session (voice leads). */
  latestCall: {
    providerCallId: string;
    status: string;
    startedAt: string | null;
    endedAt: string | null;
    durationSeconds: number | null;
    endedReason: string | null;
    summary: string | null;
    transcript: string | null;
    recordingUrl: string | null;
  } | null;
  /** The lead's newest integration-log entries, newest first. */
  integrationLog: Array<{
    id: number;
    provider: string;
    direction: 'in' | 'out';
    kind: string;
    httpStatus: number | null;
    outcome: string | null;
    payload: unknown;
    createdAt: string;
  }>;
}

export interface LeadDetailsQuery {
  leadId: string;
  /** When given, a lead of another workspace is not found (the dashboard's scope). */
  workspaceId?: string;
  /** How many integration-log entries (default 20, at most 200). */
  logLimit?: number;
  /** False: the lead without timeline, messages and integration log (the lead page pages them itself). */
  history?: boolean;
}

const iso = (v: Date | string | null | undefined): string | null => (v == null ? null : new Date(v).toISOString());

/** The lead's details, or null when there is no such lead (in the workspace, if one is given). */
export async function getLeadDetails(db: Queryable, q: LeadDetailsQuery): Promise<LeadDetails | null> {
  const { rows } = await db.query(
    `SELECT l.*, w.slug AS workspace_slug, w.channel,
            (SELECT jsonb_build_object('source', s.source, 'at', s.created_at) FROM suppressed_numbers s
              WHERE s.workspace_id = l.workspace_id AND s.phone_e164 = l.phone_normalized) AS do_not_contact
       FROM leads l JOIN workspaces w ON w.id = l.workspace_id
      WHERE l.id = $1 AND ($2::uuid IS NULL OR l.workspace_id = $2)`,
    [q.leadId, q.workspaceId ?? null],
  );
  const l = rows[0];
  if (!l) return null;
  const logLimit = Math.min(Math.max(q.logLimit ?? 20, 1), 200);
  const history = q.history !== false;
  const none = Promise.resolve({ rows: [] as any[] });
  // Independent reads of one lead: a consistent enough picture for a person looking at it.
  const [events, messages, call, log] = await Promise.all([
    !history
      ? none
      : db.query(`SELECT id, type, data, at FROM lead_events WHERE lead_id = $1 ORDER BY id DESC LIMIT $2`, [
          q.leadId,
          MAX_TIMELINE_ROWS + 1,
        ]),
    !history
      ? none
      : db.query(
          `SELECT id, direction, provider, kind, body, status, error_code, error_message, created_at, status_at
         FROM whatsapp_messages WHERE lead_id = $1 ORDER BY id DESC LIMIT $2`,
          [q.leadId, MAX_TIMELINE_ROWS + 1],
        ),
    db.query(
      `SELECT provider_call_id, status, started_at, ended_at,
         duration_seconds, ended_reason, summary, transcript, recording_url
         FROM call_sessions WHERE lead_id = $1 ORDER BY created_at DESC, id DESC LIMIT 1`,
      [q.leadId],
    ),
    !history
      ? none
      : db.query(
          `SELECT id, provider, direction, kind, http_status, outcome, payload, created_at
         FROM integration_events WHERE lead_id = $1 AND workspace_id = $2 ORDER BY id DESC LIMIT $3`,
          [q.leadId, l.workspace_id, logLimit],
        ),
  ]);
  const truncated = events.rows.length > MAX_TIMELINE_ROWS || messages.rows.length > MAX_TIMELINE_ROWS;
  const c = call.rows[0];
  return {
    lead: {
      id: l.id,
      workspaceId: l.workspace_id,
      workspaceSlug: l.workspace_slug,
      channel: l.channel,
      status: l.status,
      name: l.name,
      phone: l.phone,
      phoneNormalized: l.phone_normalized,
      email: l.email,
      goal: l.goal,
      qualificationNotes: l.qualification_notes,
      agentNotes: l.agent_notes,
      answers: l.answers,
      formResponses: l.form_responses,
      metadata: l.metadata,
      bookingUid: l.booking_uid,
      bookingStart: iso(l.booking_start),
      consentedAt: iso(l.consented_at)!,
      optedOutAt: iso(l.opted_out_at),
      doNotContact: l.do_not_contact ? { source: l.do_not_contact.source, at: iso(l.do_not_contact.at)! } : null,
      createdAt: iso(l.created_at)!,
      updatedAt: iso(l.updated_at)!,
    },
    timeline: events.rows
      .slice(0, MAX_TIMELINE_ROWS)
      .reverse()
      .map((e) => ({ id: e.id, type: e.type, data: e.data, at: iso(e.at)! })),
    messages: messages.rows
      .slice(0, MAX_TIMELINE_ROWS)
      .reverse()
      .map((m) => ({
        id: m.id,
        direction: m.direction,
        provider: m.provider,
        kind: m.kind,
        body: m.body,
        status: m.status,
        errorCode: m.error_code,
        errorMessage: m.error_message,
        createdAt: iso(m.created_at)!,
        statusAt: iso(m.status_at)!,
      })),
    truncated,
    latestCall: c ? voiceCallView(c) : null,
    integrationLog: log.rows.map((e) => ({
      id: e.id,
      provider: e.provider,
      direction: e.direction,
      kind: e.kind,
      httpStatus: e.http_status,
      outcome: e.outcome,
      payload: e.payload,
      createdAt: iso(e.created_at)!,
    })),
  };
}

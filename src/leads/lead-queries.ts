import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';

export interface NewLead {
  workspaceId: string;
  name: string;
  phone: string;
  phoneNormalized: string;
  email: string | null;
  goal: string | null;
  consentIp: string | null;
  consentUserAgent: string | null;
  metadata: Record<string, unknown>;
  formResponses: Record<string, string>;
  createdEvent: Record<string, unknown>;
  /** false: a sandbox lead (submitted with a sandbox key, docs/SANDBOX.md). */
  livemode: boolean;
  /** The API key that submitted it (the dashboard's "created by"); null when not the public API. */
  apiKeyId: string | null;
  /** WhatsApp: when its first agent turn may start (the calling window, docs/FOLLOW-UP.md); absent: now. */
  firstTurnAfter?: Date | null;
  /** Where it came from when not the secret-key API (docs/INTAKE.md). */
  intake?: LeadIntake;
}

/** How a lead came in (docs/INTAKE.md); stored on the lead (migrations/049). */
export interface LeadIntake {
  source: 'api' | 'form' | 'embed' | 'publishable' | 'meta' | 'google' | 'webhook';
  /** The connected source (lead_sources) and its own id of the lead: a retried delivery finds it. */
  sourceId?: string | null;
  sourceLeadId?: string | null;
  /** Campaign and ad ids, the page a form was on. */
  detail?: Record<string, unknown> | null;
  /** The consent text the form showed (consent_texts). */
  consentTextId?: number | null;
}

function leadValues(l: NewLead): unknown[] {
  return [
    l.workspaceId,
    l.name,
    l.phone,
    l.phoneNormalized,
    l.email,
    l.goal,
    l.consentIp,
    l.consentUserAgent,
    JSON.stringify(l.metadata),
    JSON.stringify(l.formResponses),
    l.livemode,
    l.apiKeyId,
    l.intake?.source ?? 'api',
    l.intake?.sourceId ?? null,
    l.intake?.sourceLeadId ?? null,
    l.intake?.detail ? JSON.stringify(l.intake.detail) : null,
    l.intake?.consentTextId ?? null,
  ];
}

// The voice reservation: the lead alone, without its `lead.created` entry (written by
// recordLeadCreated once the lead is kept), so a lead deleted because Vapi refused the call never
// emitted the webhook. ON CONFLICT lets the unique index decide duplicates without a
// check-then-insert race. (WhatsApp leads are inserted in batches with their `lead.created` entries
// and outbox rows: lead-batch-statement.ts.)
const INSERT_LEAD = `
  INSERT INTO leads (workspace_id, name, phone, phone_normalized, email, goal, consented_at,
                     consent_ip, consent_user_agent, metadata, form_responses, livemode, api_key_id,
                     source, source_id, source_lead_id, source_detail, consent_text_id)
  VALUES ($1, $2, $3, $4, $5, $6, now(), $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
  ON CONFLICT (workspace_id, livemode, phone_normalized) DO NOTHING
  RETURNING id`;

/** Reserves a voice lead; null when the phone is already a lead of the workspace in the same mode. */
export async function insertLead(db: Queryable, lead: NewLead): Promise<string | null> {
  const { rows } = await db.query({ name: 'insert-lead', text: INSERT_LEAD, values: leadValues(lead) });
  return rows[0]?.id ?? null;
}

// A kept voice lead's `lead.created` entry, dated when the lead was inserted (the timeline and the
// webhook keep that time), its data what newLead's createdEvent holds for a voice lead, read from the
// row (the crash window's reconciliation has no submission at hand). Written once: none when the lead
// has one. Its trigger emits the `lead.created` webhook with the lead as it is: still `new`, so it is
// written before the statement that moves the lead on.
const LEAD_CREATED = `
  INSERT INTO lead_events (lead_id, type, data, at)
  SELECT l.id, 'lead.created',
         jsonb_build_object('channel', 'voice', 'apiKeyId', l.api_key_id)
           || CASE WHEN l.livemode THEN '{}'::jsonb ELSE '{"livemode": false}'::jsonb END
           || CASE WHEN l.source = 'api' THEN '{}'::jsonb ELSE jsonb_build_object('source', l.source) END,
         l.created_at
    FROM leads l
   WHERE l.id = $1
     AND NOT EXISTS (SELECT 1 FROM lead_events e WHERE e.lead_id = l.id AND e.type = 'lead.created')`;

/**
 * Writes a voice lead's `lead.created` entry (and so its webhook) in the transaction that keeps the
 * lead: the call recorded, the do-not-contact close, the crash window's reconciliation. A no-op for
 * a lead that has one.
 */
export async function recordLeadCreated(db: Queryable, leadId: string): Promise<void> {
  await db.query({ name: 'record-lead-created', text: LEAD_CREATED, values: [leadId] });
}

export async function findLeadIdByPhone(
  db: Queryable,
  workspaceId: string,
  livemode: boolean,
  phoneNormalized: string,
): Promise<string | null> {
  const { rows } = await db.query(
    'SELECT id FROM leads WHERE workspace_id = $1 AND livemode = $2 AND phone_normalized = $3',
    [workspaceId, livemode, phoneNormalized],
  );
  return rows[0]?.id ?? null;
}

/**
 * Records an accepted call in one transaction: call session, the lead's `lead.created` entry, lead
 * in conversation, `call.dispatched`. The session first: a conflict there (23505) means Vapi's first
 * message recorded the call (and the lead's entry) already, and nothing of this is kept.
 */
export async function recordDispatchedCall(
  pool: Pool,
  c: { leadId: string; providerCallId: string; callStatus: string },
): Promise<void> {
  await withTransaction(pool, async (tx) => {
    // The session, then the lead (the entry's foreign key, then the UPDATE, lock it): the order of the
    // reconcile path (call-session-queries.ts), which Vapi's first status update may take
    // concurrently; the other way round, the two deadlock.
    const { rows } = await tx.query({
      name: 'record-dispatched-session',
      text: 'INSERT INTO call_sessions (lead_id, provider_call_id, status) VALUES ($1, $2, $3) RETURNING id',
      values: [c.leadId, c.providerCallId, c.callStatus],
    });
    await recordLeadCreated(tx, c.leadId);
    await tx.query({
      name: 'record-dispatched-call',
      text: `WITH lead AS (
               UPDATE leads SET status = 'in_conversation', updated_at = now() WHERE id = $1 RETURNING id
             )
             INSERT INTO lead_events (lead_id, type, data)
             SELECT lead.id, 'call.dispatched',
                    jsonb_build_object('providerCallId', $2::text, 'callSessionId', $3::uuid)
               FROM lead`,
      values: [c.leadId, c.providerCallId, rows[0].id],
    });
  });
}

/** Removes a lead and, by cascade, its events and call sessions (voice dispatch rejected). */
export async function deleteLead(db: Queryable, leadId: string): Promise<void> {
  await db.query('DELETE FROM leads WHERE id = $1', [leadId]);
}

export interface LeadWithCall {
  lead: Record<string, any>;
  call: Record<string, any> | null;
  /**
   * When the lead's running contact plan calls it again (a retry or a callback the lead asked
   * for; docs/VOICE.md, "Calling again"); null or absent when no call is pending. Read with `call`.
   */
  nextCallAt?: Date | string | null;
}

const LEAD_COLUMNS = `l.id, l.name, l.phone, l.email, l.goal, l.status, l.qualification_notes, l.booking_uid,
  l.booking_start, l.metadata, l.form_responses, l.created_at, l.updated_at, l.livemode`;

/**
 * The SELECT of GET /api/public/leads/:id for a batch of (id, workspace, mode) triples
 * (`idsParam` and `workspacesParam` uuid[], `livemodesParam` boolean[], of the same length), each
 * lead only in its own workspace and mode (a live key never reads a sandbox lead, nor the other
 * way round); `read_workspace_id` and `read_livemode` say which triple a row answers. With `withCall`, each row's
 * latest call session as the jsonb column `call`, and `next_call_at`: when the lead's running contact
 * plan (one row per lead, by its primary key) places its next call, if one is pending.
 * The rate limiter's statement embeds it.
 */
export function leadsByIdPairsSql(
  idsParam: string,
  workspacesParam: string,
  livemodesParam: string,
  withCall: boolean,
): string {
  return `SELECT q.ws AS read_workspace_id, q.live AS read_livemode,
            ${LEAD_COLUMNS}${withCall ? ', to_jsonb(cs) AS call, np.next_at AS next_call_at' : ''}
            FROM unnest(${idsParam}::uuid[], ${workspacesParam}::uuid[],
            ${livemodesParam}::boolean[]) AS q(id, ws, live)
            JOIN leads l ON l.id = q.id AND l.workspace_id = q.ws AND l.livemode = q.live
            ${withCall ? `${LATEST_CALL} ${NEXT_CALL}` : ''}`;
}

const LATEST_CALL = `LEFT JOIN LATERAL (
              SELECT provider_call_id, status, started_at, ended_at, duration_seconds, summary, transcript,
                     recording_url, ended_reason
                FROM call_sessions WHERE lead_id = l.id ORDER BY created_at DESC, id DESC LIMIT 1
            ) cs ON true`;

// The call the lead's plan places next (next_kind `call`: a retry; `callback`: one the lead asked
// for), only while the plan runs; the plan is the lead's own row (lead_id is its key).
const NEXT_CALL = `LEFT JOIN contact_plans np ON np.lead_id = l.id AND np.channel = 'voice'
              AND np.ended_at IS NULL AND np.next_kind IN ('call', 'callback')`;

export function toLeadWithCall(row: Record<string, any>): LeadWithCall {
  const { call, next_call_at: nextCallAt, ...lead } = row;
  return { lead, call: call ?? null, nextCallAt: nextCallAt ?? null };
}

/** One lead of the workspace and mode, with its latest call session when `withCall` (voice workspaces). */
export async function findLead(
  db: Queryable,
  id: string,
  workspaceId: string,
  livemode: boolean,
  withCall: boolean,
): Promise<LeadWithCall | null> {
  const { rows } = await db.query({
    name: withCall ? 'find-lead-with-latest-call' : 'find-lead',
    text: leadsByIdPairsSql('$1', '$2', '$3', withCall),
    values: [[id], [workspaceId], [livemode]],
  });
  if (!rows[0]) return null;
  const { read_workspace_id: _ws, read_livemode: _live, ...row } = rows[0];
  return toLeadWithCall(row);
}

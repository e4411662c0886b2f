import type { Queryable } from '../db/pool.ts';

// The contact plan's rows (migrations/045_contact_plans.sql). Scheduling and ending are database
// functions, so every caller — the worker, a provider's webhook, an operator, a trigger — changes
// a plan the same way and in its own transaction.

export type PlanChannel = 'voice' | 'whatsapp';
export type StepKind = 'call' | 'template' | 'nudge' | 'callback' | 'give_up';

export interface PlannedStep {
  kind: StepKind;
  at: Date;
  /** Why this attempt, in words for the timeline ("no answer", "first follow-up", "the lead asked"). */
  reason: string;
  data?: Record<string, unknown>;
}

export interface PlanRow {
  leadId: string;
  workspaceId: string;
  channel: PlanChannel;
  attempts: number;
  step: number;
  next: PlannedStep | null;
  inFlightSince: Date | null;
  endedAt: Date | null;
  endedReason: string | null;
  voicemailLeftAt: Date | null;
  nudgedAt: Date | null;
  reachedAt: Date | null;
}

const PLAN_COLUMNS = `p.lead_id, p.workspace_id, p.channel, p.attempts, p.step, p.next_kind, p.next_at, p.next_reason,
  p.next_data, p.in_flight_since, p.ended_at, p.ended_reason, p.voicemail_left_at, p.nudged_at, p.reached_at`;

/**
 * Schedules the lead's next attempt (its job queued in the same transaction); the new step, null if
 * the lead is gone.
 */
export async function scheduleStep(db: Queryable, leadId: string, s: PlannedStep): Promise<number | null> {
  const { rows } = await db.query<{ step: number | null }>({
    name: 'contact-plan-schedule',
    text: 'SELECT contact_plan_schedule($1, $2, $3, $4, $5::jsonb) AS step',
    values: [leadId, s.kind, s.at, s.reason, JSON.stringify(s.data ?? {})],
  });
  return rows[0]?.step ?? null;
}

/** Ends the lead's plan if it runs (its pending attempt cancelled); false when there was none. */
export async function endPlan(db: Queryable, leadId: string, reason: string): Promise<boolean> {
  const { rows } = await db.query<{ ended: boolean }>({
    name: 'contact-plan-end',
    text: 'SELECT contact_plan_end($1, $2) AS ended',
    values: [leadId, reason],
  });
  return rows[0]?.ended === true;
}

export async function readPlan(
  db: Queryable,
  leadId: string,
  opts: { forUpdate?: boolean } = {},
): Promise<PlanRow | null> {
  const { rows } = await db.query(
    `SELECT ${PLAN_COLUMNS} FROM contact_plans p WHERE p.lead_id = $1${opts.forUpdate ? ' FOR UPDATE' : ''}`,
    [leadId],
  );
  return rows[0] ? planRow(rows[0]) : null;
}

/** Plans of several leads (the inbox's "next attempt"). */
export async function readPlans(db: Queryable, leadIds: string[]): Promise<Map<string, PlanRow>> {
  if (leadIds.length === 0) return new Map();
  const { rows } = await db.query(`SELECT ${PLAN_COLUMNS} FROM contact_plans p WHERE p.lead_id = ANY($1::uuid[])`, [
    leadIds,
  ]);
  return new Map(rows.map((r) => [r.lead_id as string, planRow(r)]));
}

/** A worker took the pending attempt: marked, so a retried job knows it may have been made already. */
export async function markInFlight(db: Queryable, leadId: string, step: number): Promise<void> {
  await db.query(
    'UPDATE contact_plans SET in_flight_since = now(), updated_at = now() WHERE lead_id = $1 AND step = $2',
    [leadId, step],
  );
}

/**
 * The attempt of `step` was made (or given up): the pending step is cleared, unless the plan has
 * moved on meanwhile (ended by a reply, rescheduled by an operator). True when it was cleared.
 */
export async function completeStep(db: Queryable, leadId: string, step: number): Promise<boolean> {
  const { rowCount } = await db.query(
    `UPDATE contact_plans SET next_kind = NULL, next_at = NULL, next_reason = NULL, next_data = '{}',
            in_flight_since = NULL, updated_at = now()
      WHERE lead_id = $1 AND step = $2`,
    [leadId, step],
  );
  return (rowCount ?? 0) > 0;
}

export interface AttemptRecord {
  channel: PlanChannel;
  kind: StepKind | 'first_contact';
  /** no_answer, busy, voicemail, answered, invalid_number, failed, sent, skipped… */
  outcome: string;
  data?: Record<string, unknown>;
}

/**
 * Counts an attempt (creating the plan of a lead contacted for the first time) and puts it on the
 * timeline as `contact.attempted` (an outbound webhook). Returns the attempt's number. The database
 * function is the one the WhatsApp turn trigger calls (migrations/050), so both write one shape.
 */
export async function recordAttempt(db: Queryable, leadId: string, a: AttemptRecord): Promise<number> {
  const { rows } = await db.query<{ attempts: number | null }>({
    name: 'contact-plan-record-attempt',
    text: 'SELECT contact_plan_attempted($1, $2, $3, $4, $5::jsonb) AS attempts',
    values: [leadId, a.channel, a.kind, a.outcome, JSON.stringify(a.data ?? {})],
  });
  return rows[0]?.attempts ?? 0;
}

/** The lead answered or replied on attempt `attempt` (analytics: reached by attempt number). Once per lead. */
export async function recordReached(
  db: Queryable,
  leadId: string,
  channel: PlanChannel,
  attempt: number,
): Promise<void> {
  await db.query('SELECT contact_plan_reached($1, $2, $3)', [leadId, channel, attempt]);
}

/** Queues the job of an existing step again at `at` (a job that ran before its time). */
export async function requeueStep(db: Queryable, leadId: string, step: number, at: Date): Promise<void> {
  await db.query(
    `INSERT INTO outbox (queue, payload, start_after)
     VALUES ('contact-attempt', jsonb_build_object('leadId', $1::uuid, 'step', $2::int), $3)`,
    [leadId, step, at],
  );
}

function planRow(r: Record<string, unknown>): PlanRow {
  return {
    leadId: r.lead_id as string,
    workspaceId: r.workspace_id as string,
    channel: r.channel as PlanChannel,
    attempts: r.attempts as number,
    step: r.step as number,
    next: r.next_kind
      ? {
          kind: r.next_kind as StepKind,
          at: r.next_at as Date,
          reason: (r.next_reason as string | null) ?? '',
          data: (r.next_data as Record<string, unknown>) ?? {},
        }
      : null,
    inFlightSince: (r.in_flight_since as Date | null) ?? null,
    endedAt: (r.ended_at as Date | null) ?? null,
    endedReason: (r.ended_reason as string | null) ?? null,
    voicemailLeftAt: (r.voicemail_left_at as Date | null) ?? null,
    nudgedAt: (r.nudged_at as Date | null) ?? null,
    reachedAt: (r.reached_at as Date | null) ?? null,
  };
}

/** What an attempt is decided on: the lead, its workspace's switch and settings, the do-not-contact list. */
export interface AttemptContext {
  leadId: string;
  workspaceId: string;
  status: string;
  livemode: boolean;
  phoneE164: string;
  name: string;
  metadata: Record<string, unknown>;
  agentEnabled: boolean;
  /** `workspaces.agent` as stored ({} when not configured). */
  agent: Record<string, unknown>;
  workspaceName: string;
  suppressed: boolean;
}

export async function readAttemptContext(db: Queryable, leadId: string): Promise<AttemptContext | null> {
  const { rows } = await db.query(
    `SELECT l.id, l.workspace_id, l.status, l.livemode, l.phone_normalized, l.name, l.metadata,
            w.agent_enabled, w.agent, w.name AS workspace_name,
            EXISTS (SELECT 1 FROM suppressed_numbers s
                     WHERE s.workspace_id = l.workspace_id AND s.phone_e164 = l.phone_normalized) AS suppressed
       FROM leads l JOIN workspaces w ON w.id = l.workspace_id
      WHERE l.id = $1`,
    [leadId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    leadId: r.id,
    workspaceId: r.workspace_id,
    status: r.status,
    livemode: r.livemode,
    phoneE164: r.phone_normalized,
    name: r.name,
    metadata: r.metadata ?? {},
    agentEnabled: r.agent_enabled,
    agent: r.agent ?? {},
    workspaceName: r.workspace_name,
    suppressed: r.suppressed,
  };
}

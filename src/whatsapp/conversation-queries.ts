import type { LeadStatus } from '../leads/lead-state.ts';
import type { Queryable } from '../db/pool.ts';
import { AGENT_TURN_QUEUE } from '../jobs/queues.ts';
import { workspaceFromRow, type WorkspaceRow } from '../workspaces/workspace-queries.ts';

// The lead as a WhatsApp conversation sees it: who to write to, whether we may, and the flags the
// inbound receiver and the turn engine share (migrations/005_whatsapp_conversations.sql).

export interface ConversationLead {
  id: string;
  workspaceId: string;
  status: LeadStatus;
  name: string;
  phoneNormalized: string;
  /** false: a sandbox lead, whose turns use the sandbox's simulated providers (docs/SANDBOX.md). */
  livemode: boolean;
  optedOutAt: Date | null;
  lastInboundAt: Date | null;
  /** When the lead was accepted (the start of speed to lead). */
  createdAt: Date;
  /** The actor, time and (when the system escalated) outcome of the latest status change, from the timeline. */
  lastTransition: { actor: string; at: Date; outcome?: string } | null;
  /** An operator took the lead over (Take over sets the owner, even of a lead already with a person). */
  owned: boolean;
}

export interface TurnSubject {
  lead: ConversationLead;
  workspace: WorkspaceRow;
  agentEnabled: boolean;
  /** The state of the lead's unfinished turn, if any. */
  openTurn: 'generating' | 'ready' | null;
  /** Whether any turn was ever started (no: the first contact is due). */
  anyTurn: boolean;
  /** Whether the lead wrote something no turn has answered yet. */
  unanswered: boolean;
}

/**
 * The lead, its workspace (deleted ones included: the caller decides), the kill switch and where
 * its conversation stands, in one round trip: a turn reads this before each step.
 */
export async function loadTurnSubject(db: Queryable, leadId: string): Promise<TurnSubject | null> {
  return (await loadTurnSubjects(db, [leadId]))[0] ?? null;
}

/** The subjects of several leads' turns in one round trip (leads that do not exist are left out). */
export async function loadTurnSubjects(db: Queryable, leadIds: string[]): Promise<TurnSubject[]> {
  // w.* keeps the workspace's own column names for workspaceFromRow; the lead's are prefixed.
  const { rows } = await db.query({
    name: 'conversation-load-subject',
    text: `SELECT w.*, l.id AS lead_id, l.status AS lead_status, l.name AS lead_name, l.phone_normalized AS lead_phone,
                  l.livemode AS lead_livemode, l.opted_out_at AS lead_opted_out_at,
                  l.last_inbound_at AS lead_last_inbound_at, l.created_at AS lead_created_at,
                  l.owner_operator_id IS NOT NULL AS lead_owned,
                  t.data->>'actor' AS lead_transition_actor, t.at AS lead_transition_at,
                  t.data->>'outcome' AS lead_transition_outcome,
                  (SELECT state FROM agent_turns WHERE lead_id = l.id
                  AND state IN ('generating', 'ready')) AS lead_open_turn,
                  EXISTS (SELECT 1 FROM agent_turns WHERE lead_id = l.id) AS lead_any_turn,
                  EXISTS (SELECT 1 FROM whatsapp_messages WHERE lead_id = l.id
                  AND direction = 'inbound' AND turn_id IS NULL) AS lead_unanswered
             FROM leads l
             JOIN workspaces w ON w.id = l.workspace_id
             LEFT JOIN LATERAL (
               SELECT data, at FROM lead_events e WHERE e.lead_id = l.id AND e.data ? 'to' ORDER BY e.id DESC LIMIT 1
             ) t ON true
            WHERE l.id = ANY($1::uuid[])`,
    values: [leadIds],
  });
  return rows.map(subjectFromRow);
}

function subjectFromRow(r: Record<string, any>): TurnSubject {
  return {
    lead: {
      id: r.lead_id,
      workspaceId: r.id,
      status: r.lead_status,
      name: r.lead_name,
      phoneNormalized: r.lead_phone,
      livemode: r.lead_livemode,
      optedOutAt: r.lead_opted_out_at,
      lastInboundAt: r.lead_last_inbound_at,
      createdAt: r.lead_created_at,
      lastTransition: r.lead_transition_actor
        ? {
            actor: r.lead_transition_actor,
            at: r.lead_transition_at,
            ...(r.lead_transition_outcome ? { outcome: r.lead_transition_outcome } : {}),
          }
        : null,
      owned: r.lead_owned,
    },
    workspace: workspaceFromRow(r),
    agentEnabled: r.agent_enabled,
    openTurn: r.lead_open_turn,
    anyTurn: r.lead_any_turn,
    unanswered: r.lead_unanswered,
  };
}

/**
 * Enqueues the lead's next turn through the outbox, unless one is already waiting to start (that
 * one will answer this message too). A request older than ten minutes is not trusted to still be
 * coming (its job may sit in a long retry backoff): a second job costs nothing, turns of one lead
 * never overlap and a turn with nothing new to answer ends at once. True when a row was queued.
 */
export async function requestTurn(db: Queryable, leadId: string, workspaceId: string): Promise<boolean> {
  const { rowCount } = await db.query({
    name: 'conversation-request-turn',
    text: `WITH flag AS (
             UPDATE leads SET turn_requested_at = now()
              WHERE id = $1 AND (turn_requested_at IS NULL OR turn_requested_at < now() - interval '10 minutes')
             RETURNING id
           )
           INSERT INTO outbox (queue, payload)
           SELECT $3, jsonb_build_object('leadId', id, 'workspaceId', $2::uuid) FROM flag`,
    values: [leadId, workspaceId, AGENT_TURN_QUEUE],
  });
  return rowCount === 1;
}

export interface InboundLead {
  id: string;
  status: LeadStatus;
  optedOutAt: Date | null;
  /** Booked, or a booking is on record (a bare "Cancel" then means the booking). */
  hasBooking: boolean;
}

/**
 * The numbers a WhatsApp sender may be on a form: its own, then the one its WhatsApp id stands
 * for where ids and E.164 numbers differ. Mexican mobile ids keep the `1` after 52 that E.164
 * dropped in 2019; Brazilian accounts made before mobiles got their ninth digit keep an id
 * without it. Both providers report the id as the sender; a lead's form has the number.
 */
export function senderNumbers(from: string): string[] {
  const mx = /^\+521(\d{10})$/.exec(from);
  if (mx) return [from, `+52${mx[1]}`];
  // Mobile subscriber numbers start with 6-9; landlines (2-5) never got a ninth digit.
  const br = /^\+55([1-9]\d)([6-9]\d{7})$/.exec(from);
  if (br) return [from, `+55${br[1]}9${br[2]}`];
  return [from];
}

/**
 * The workspace's lead of this mode with this phone (or the number its WhatsApp id stands for,
 * when no lead has the id itself), locked until the transaction ends.
 */
export async function lockLeadByPhone(
  db: Queryable,
  workspaceId: string,
  livemode: boolean,
  phoneNormalized: string,
): Promise<InboundLead | null> {
  const { rows } = await db.query({
    name: 'conversation-lock-lead-by-phone',
    text: `SELECT id, status, opted_out_at, (status = 'booked' OR booking_uid IS NOT NULL) AS has_booking
             FROM leads WHERE workspace_id = $1 AND livemode = $2 AND phone_normalized = ANY($3::text[])
            ORDER BY phone_normalized = $4 DESC LIMIT 1 FOR UPDATE`,
    values: [workspaceId, livemode, senderNumbers(phoneNormalized), phoneNormalized],
  });
  const r = rows[0];
  return r ? { id: r.id, status: r.status, optedOutAt: r.opted_out_at, hasBooking: r.has_booking } : null;
}

/** The lead's latest message moves the 24-hour window (never backwards: webhooks may come out of order). */
export async function touchLastInbound(db: Queryable, leadId: string, at: Date): Promise<void> {
  await db.query({
    name: 'conversation-touch-last-inbound',
    text: 'UPDATE leads SET last_inbound_at = GREATEST(last_inbound_at, $2) WHERE id = $1',
    values: [leadId, at],
  });
}

/** The kill switch of a workspace; false when there is no such live workspace. */
export async function setAgentEnabled(db: Queryable, workspaceId: string, enabled: boolean): Promise<boolean> {
  const { rowCount } = await db.query('UPDATE workspaces SET agent_enabled = $2 WHERE id = $1 AND deleted_at IS NULL', [
    workspaceId,
    enabled,
  ]);
  return rowCount === 1;
}

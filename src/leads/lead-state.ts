import type { Queryable } from '../db/pool.ts';
import { countLeadTransition } from '../metrics/metrics.ts';

// The one owner of lead statuses and their transitions (docs/AGENT.md).
export const LEAD_STATUSES = ['new', 'in_conversation', 'booked', 'unqualified', 'needs_human'] as const;
export type LeadStatus = (typeof LEAD_STATUSES)[number];

/** Terminal for the agent: only an operator (take over / resume) moves a lead out of these. */
export const TERMINAL_STATUSES: ReadonlySet<LeadStatus> = new Set(['booked', 'unqualified', 'needs_human']);

/** Who asks for a change: the agent (tools), an operator (dashboard), or the system (webhooks). */
export type Actor = 'agent' | 'operator' | 'system';

const ALLOWED: Record<Actor, Partial<Record<LeadStatus, readonly LeadStatus[]>>> = {
  agent: {
    in_conversation: ['new'],
    booked: ['new', 'in_conversation'],
    unqualified: ['new', 'in_conversation'],
    needs_human: ['new', 'in_conversation'],
  },
  operator: {
    // Take over from anywhere; resume hands a lead back to the agent.
    needs_human: ['new', 'in_conversation', 'booked', 'unqualified'],
    in_conversation: ['needs_human'],
    // Set outcome by hand (the dashboard), with a note or reason.
    booked: ['new', 'in_conversation', 'needs_human'],
    unqualified: ['new', 'in_conversation', 'needs_human'],
  },
  system: {
    in_conversation: ['new'],
    // The lead opted out on WhatsApp (STOP): nothing more is sent, and the lead is closed.
    unqualified: ['new', 'in_conversation'],
    // A booking cancelled in the scheduling service goes to an operator for follow-up.
    needs_human: ['new', 'in_conversation', 'booked'],
  },
};

/** The statuses from which `actor` may move a lead to `to`. */
export function allowedFrom(actor: Actor, to: LeadStatus): readonly LeadStatus[] {
  return ALLOWED[actor][to] ?? [];
}

export function canTransition(actor: Actor, from: LeadStatus, to: LeadStatus): boolean {
  return allowedFrom(actor, to).includes(from);
}

export interface TransitionRequest {
  leadId: string;
  to: LeadStatus;
  actor: Actor;
  /** Timeline entry written in the same statement as the change. */
  event: { type: string; data?: Record<string, unknown> };
  /** Columns set together with the status. */
  set?: { qualificationNotes?: string | null; bookingUid?: string | null; bookingStart?: Date | null };
}

export type TransitionResult =
  | { ok: true; from: LeadStatus; to: LeadStatus }
  | { ok: false; reason: 'not_found' }
  | { ok: false; reason: 'refused'; status: LeadStatus };

/**
 * Moves a lead if, at the moment of the UPDATE, its status allows it. The guard is in the
 * statement itself (the row is locked and re-checked: migrations/022's lead_transition, which the
 * delivery functions there call too), so of two racing calls exactly one applies and the other is
 * refused with the status it lost to.
 */
export async function transitionLead(db: Queryable, r: TransitionRequest): Promise<TransitionResult> {
  const set = r.set ?? {};
  const { rows } = await db.query({
    name: 'lead-transition',
    text:
      'SELECT current_status AS current, from_status ' +
      'FROM lead_transition($1, $2, $3::text[], $4, $5, $6::jsonb, $7, $8, $9, $10, $11::timestamptz)',
    values: [
      r.leadId,
      r.to,
      allowedFrom(r.actor, r.to),
      r.actor,
      r.event.type,
      JSON.stringify(r.event.data ?? {}),
      'qualificationNotes' in set,
      set.qualificationNotes ?? null,
      'bookingUid' in set || 'bookingStart' in set,
      set.bookingUid ?? null,
      set.bookingStart ?? null,
    ],
  });
  const row = rows[0];
  if (!row || row.current === null) return { ok: false, reason: 'not_found' };
  if (row.from_status === null) return { ok: false, reason: 'refused', status: row.current };
  // Counted when the statement applies; a transaction rolled back after it still counts (rare).
  countLeadTransition(row.from_status, r.to);
  return { ok: true, from: row.from_status, to: r.to };
}

/** Appends a timeline entry that records something without changing the status. */
export async function recordLeadEvent(
  db: Queryable,
  leadId: string,
  type: string,
  data: Record<string, unknown> = {},
): Promise<void> {
  await db.query('INSERT INTO lead_events (lead_id, type, data) VALUES ($1, $2, $3)', [
    leadId,
    type,
    JSON.stringify(data),
  ]);
}

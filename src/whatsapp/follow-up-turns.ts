import type { Queryable } from '../db/pool.ts';
import type { PlanOnSent } from '../contact-plan/whatsapp-ladder.ts';
import type { SendMessageResult } from './messaging-provider.ts';
import type { AgentTurn } from './turn-queries.ts';

// The turns a contact plan queues (docs/WHATSAPP.md, "Follow-ups"): a follow-up template (kind
// `follow_up`, stored ready to send like a first contact) or the nudge the agent writes inside the
// 24-hour window (kind `nudge`, generated like a reply). Each is an ordinary turn from then on:
// locked, checkpointed and sent by the turn engine, through the outbound guard and the
// do-not-contact gate of every send. Its send moves the plan on (migrations/046).

/** What the model is told on a nudge turn, after the agent's usual prompt. */
export const NUDGE_INSTRUCTION =
  'The lead has not answered your last message for a while. Write one short, friendly message that picks ' +
  'the conversation up where it stopped (do not repeat your last message word for word, do not pressure the lead).';

/** Is this one of the plan's own turns (its refusals may be skipped rather than handed over)? */
export const isPlanTurn = (turn: AgentTurn): boolean => turn.kind === 'follow_up' || turn.kind === 'nudge';

// Meta's per-user marketing limit, Twilio's equivalent (Meta chose not to deliver): the lead is
// not unreachable, only not now.
const NOT_NOW_CODES = new Set(['131049', '63049']);

/**
 * Why a plan turn's refusal is skipped rather than handed to a person (the step is counted as
 * skipped and the plan goes on to its next step), or null: the refusal takes today's path.
 */
export function skippedBecause(r: Extract<SendMessageResult, { ok: false }>): string | null {
  if (r.code !== undefined && NOT_NOW_CODES.has(String(r.code))) return String(r.code);
  if (r.kind === 'window_closed') return r.code !== undefined ? String(r.code) : 'window_closed';
  return null;
}

export interface PlanTurn {
  leadId: string;
  planStep: number;
  planOnSent: PlanOnSent;
  provider: 'twilio' | 'meta';
  /** A template, stored ready to send; null: a nudge the model writes (the turn starts generating). */
  template: { body: string; variables: string[]; ref?: unknown } | null;
}

/**
 * Stores the plan turn of `planStep` unless it exists or another turn of the lead is open.
 * 'created' | 'exists' (a retried attempt: queue it again) | 'busy' (another turn is open).
 */
export async function createPlanTurn(db: Queryable, t: PlanTurn): Promise<'created' | 'exists' | 'busy'> {
  const { rows } = await db.query({
    name: 'follow-up-create-turn',
    text: `WITH turn AS (
             INSERT INTO agent_turns (lead_id, kind, state, plan_on_sent, plan_step)
             VALUES ($1, CASE WHEN $4::text IS NULL THEN 'nudge' ELSE 'follow_up' END,
                     CASE WHEN $4::text IS NULL THEN 'generating' ELSE 'ready' END, $2::jsonb, $3)
             ON CONFLICT DO NOTHING RETURNING id
           ), message AS (
             INSERT INTO whatsapp_messages (lead_id, direction, turn_id, provider, kind, body, template_variables,
                                            template_ref, idempotency_key, status)
             SELECT $1, 'outbound', turn.id, $5, 'template', $4, $6::jsonb, $7::jsonb,
                    whatsapp_outbound_key(), 'pending'
               FROM turn WHERE $4::text IS NOT NULL
           )
           SELECT (SELECT count(*) FROM turn)::int AS created,
                  EXISTS (SELECT 1 FROM agent_turns WHERE lead_id = $1 AND plan_step = $3) AS existed`,
    values: [
      t.leadId,
      JSON.stringify(t.planOnSent),
      t.planStep,
      t.template?.body ?? null,
      t.provider,
      JSON.stringify(t.template?.variables ?? []),
      t.template?.ref ? JSON.stringify(t.template.ref) : null,
    ],
  });
  const r = rows[0];
  return r.created === 1 ? 'created' : r.existed ? 'exists' : 'busy';
}

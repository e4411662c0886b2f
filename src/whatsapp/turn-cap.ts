import type { Queryable } from '../db/pool.ts';
import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';
import type { TurnSubject } from './conversation-queries.ts';

// The bound on a lead's agent turns (MAX_AGENT_TURNS_PER_LEAD). A conversation that never ends —
// a lead, a bot or a simulated persona that keeps answering beside the point — would otherwise
// cost a model call and a message per turn for ever. Each agent turn sends at most one message,
// so the bound on turns is a bound on the agent's messages too. Counted from the rows that exist
// (the lead's turns are few and indexed by lead), so no counter to keep in step.

/** The outcome on the timeline of a lead handed to a person at the bound. */
export const AGENT_TURN_LIMIT = 'agent_turn_limit';

/**
 * The lead's agent turns (first contact and replies; an operator's replies do not count) since
 * an operator last changed its status: after "Resume AI" the agent has the whole bound again.
 */
export async function agentTurnsSinceOperator(db: Queryable, leadId: string): Promise<number> {
  const { rows } = await db.query({
    name: 'turn-cap-count',
    text: `SELECT count(*)::int AS n FROM agent_turns
            WHERE lead_id = $1 AND kind <> 'operator'
              AND created_at > coalesce((SELECT max(at) FROM lead_events
                                          WHERE lead_id = $1 AND data ? 'to' AND data->>'actor' = 'operator'),
                                        '-infinity')`,
    values: [leadId],
  });
  return rows[0].n;
}

/** Hands the lead to a person (in the caller's transaction, the lead's row locked), saying why. */
export async function escalateAtTurnLimit(tx: Queryable, s: TurnSubject, max: number): Promise<void> {
  const reason =
    `The agent used this installation's limit of ${max} agent turns for one lead without finishing the ` +
    `conversation; a person takes over ("Resume AI" gives the agent ${max} more).`;
  const data = { reason, outcome: AGENT_TURN_LIMIT };
  const event = { type: 'conversation.escalated', data };
  const moved = await transitionLead(tx, { leadId: s.lead.id, to: 'needs_human', actor: 'system', event });
  if (!moved.ok) await recordLeadEvent(tx, s.lead.id, event.type, { ...data, status: s.lead.status, actor: 'system' });
}

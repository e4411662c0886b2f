import type { DeadTurn } from '../jobs/dead-letters.ts';
import { AGENT_TURN_QUEUE } from '../jobs/queues.ts';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import { scrubText } from '../shared/logger.ts';
import { handOverUntilRetried } from './hand-over.ts';
import { TURN_FAILED } from './turn-rules.ts';

// A turn can reach the dead-letter queue with its lead still waiting and nobody told: pg-boss fails
// a job's last attempt itself when a shutdown outlasts its grace period or a killed worker's
// heartbeat lapses (the worker never sees the failure), and the worker's own hand-over can fail
// with the database. Each worker therefore looks at the queue when it starts and every minute
// (turn-worker.ts), and hands such a lead to a person: the same `turn_failed` hand-over as a last
// attempt that failed, naming the job `leadintake jobs retry` takes.

/**
 * The leads of `dead` that still wait for the agent: still new or in conversation, with no status
 * change since the turn died (a person may have handed the lead back to the agent meanwhile), no
 * other turn job of the lead queued or running (in the outbox or pg-boss), not opted out, and work
 * the agent did not finish (a turn left open, a message nobody answered, or no first contact at
 * all). `lock`: row-locks them, for the hand-over.
 */
async function stillWaiting(db: Queryable, dead: DeadTurn[], lock: boolean): Promise<Set<string>> {
  const { rows } = await db.query<{ id: string }>(
    `SELECT l.id FROM unnest($1::uuid[], $2::timestamptz[]) AS d(lead_id, dead_at)
       JOIN leads l ON l.id = d.lead_id
      WHERE l.status IN ('new', 'in_conversation') AND l.opted_out_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM lead_events e WHERE e.lead_id = l.id AND e.data ? 'to' AND e.at >= d.dead_at)
        AND NOT EXISTS (SELECT 1 FROM outbox o WHERE o.queue = $3 AND o.payload->>'leadId' = l.id::text)
        AND NOT EXISTS (SELECT 1 FROM pgboss.job j
                         WHERE j.name = $3 AND j.state IN ('created', 'retry', 'active')
                           AND j.data->>'leadId' = l.id::text)
        AND (EXISTS (SELECT 1 FROM agent_turns t WHERE t.lead_id = l.id AND t.state IN ('generating', 'ready'))
             OR EXISTS (SELECT 1 FROM whatsapp_messages m
                         WHERE m.lead_id = l.id AND m.direction = 'inbound' AND m.turn_id IS NULL)
             OR NOT EXISTS (SELECT 1 FROM agent_turns t WHERE t.lead_id = l.id))
      ${lock ? 'FOR UPDATE OF l' : ''}`,
    [dead.map((d) => d.leadId), dead.map((d) => d.deadAt), AGENT_TURN_QUEUE],
  );
  return new Set(rows.map((r) => r.id));
}

/** Hands each waiting lead of `dead` to a person; returns the turns whose lead went. */
export async function handOverDeadTurns(pool: Pool, dead: DeadTurn[]): Promise<DeadTurn[]> {
  const withLead = dead.filter((d) => d.leadId !== null);
  if (withLead.length === 0) return [];
  const waiting = await stillWaiting(pool, withLead, false);
  const handed: DeadTurn[] = [];
  for (const turn of withLead.filter((d) => waiting.has(d.leadId!))) {
    const reason =
      `The agent's turn stopped for good before the lead was answered (${scrubText(turn.reason).slice(0, 200)}). ` +
      `Once the cause is fixed, \`leadintake jobs retry ${turn.id}\` resumes the turn.`;
    const moved = await withTransaction(pool, async (tx) => {
      // Looked at again under the lead's row lock: a turn may have answered the lead meanwhile.
      if (!(await stillWaiting(tx, [turn], true)).has(turn.leadId!)) return false;
      return handOverUntilRetried(tx, turn.leadId!, { outcome: TURN_FAILED, reason });
    });
    if (moved) handed.push(turn);
  }
  return handed;
}

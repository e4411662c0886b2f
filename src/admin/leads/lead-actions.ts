import type { Pool, PoolClient } from '../../db/pool.ts';
import { eraseLead } from '../../leads/lead-erasure.ts';
import { recordLeadEvent, transitionLead, type LeadStatus } from '../../leads/lead-state.ts';
import { AppError } from '../../shared/errors.ts';
import { requestTurn } from '../../whatsapp/conversation-queries.ts';
import { inTransaction } from '../../leads/lead-lock.ts';
import { lockForClaim, setOwner } from './lead-ownership.ts';

// The operators' actions on a lead (docs/DASHBOARD.md, "Actions"). Each is one transaction that
// moves the lead through the state machine (src/leads/lead-state.ts) and writes the timeline
// entry with the operator's name; migration 011's triggers announce the change to open pages.

export interface OperatorRef {
  id: string;
  name: string;
}

export interface LeadActionDeps {
  pool: Pool;
  /** Wakes the outbox relay after a turn was queued. */
  wake: () => void;
}

const who = (op: OperatorRef) => ({ operator: op.name, operatorId: op.id });

/**
 * Outcomes the spec makes terminal: taking over such a lead, or resuming the AI on it, records who
 * did it but keeps the status, so a booked lead stays in Booked and in the analytics.
 */
export const KEPT_STATUSES: ReadonlySet<LeadStatus> = new Set(['booked', 'unqualified']);

export class LeadActions {
  readonly #d: LeadActionDeps;

  constructor(deps: LeadActionDeps) {
    this.#d = deps;
  }

  /**
   * The lead goes to a person at once: no turn sends anything from now on (the turn engine's rule),
   * and the operator owns it. Under the lead's row lock: a lead another operator owns is refused
   * (409 lead_taken, naming them); one already waiting for a person (needs_human) or with a kept
   * outcome keeps its status and gets its owner; the operator's own lead is left as it is.
   */
  async takeOver(workspaceId: string, leadId: string, op: OperatorRef): Promise<LeadStatus> {
    const client = await this.#d.pool.connect();
    try {
      return await inTransaction(client, async (tx) => {
        const { status, mine } = await lockForClaim(tx, workspaceId, leadId, op.id);
        if (mine) return status;
        let now: LeadStatus = 'needs_human';
        if (status === 'needs_human' || KEPT_STATUSES.has(status)) {
          await recordLeadEvent(tx, leadId, 'operator.took_over', { ...who(op), status, actor: 'operator' });
          now = status;
        } else {
          const event = { type: 'operator.took_over', data: who(op) };
          const moved = await transitionLead(tx, { leadId, to: 'needs_human', actor: 'operator', event });
          if (!moved.ok) {
            throw moved.reason === 'not_found'
              ? new AppError('lead_not_found')
              : new AppError('lead_status_conflict', { message: moved.status });
          }
        }
        await setOwner(tx, leadId, op.id);
        return now;
      });
    } finally {
      client.release();
    }
  }

  /**
   * Back to the agent. If the lead wrote something nobody answered, the agent answers it now (a
   * turn is queued); the agent's context shows what the person wrote meanwhile (chat-history.ts).
   */
  async resume(workspaceId: string, leadId: string, op: OperatorRef): Promise<LeadStatus> {
    let queued = false;
    const status = await this.#move(
      workspaceId,
      leadId,
      'in_conversation',
      'operator.resumed',
      who(op),
      async (tx) => {
        const { rows } = await tx.query(
          `SELECT EXISTS (SELECT 1 FROM whatsapp_messages WHERE lead_id = $1
            AND direction = 'inbound' AND turn_id IS NULL) AS unanswered`,
          [leadId],
        );
        if (rows[0].unanswered) queued = await requestTurn(tx, leadId, workspaceId);
      },
      undefined,
      true,
    );
    if (queued) this.#d.wake();
    return status;
  }

  /** Booked (with a note) or unqualified (with the reason, kept as the qualification notes). */
  async setOutcome(
    workspaceId: string,
    leadId: string,
    op: OperatorRef,
    outcome: 'booked' | 'unqualified',
    note: string,
  ): Promise<LeadStatus> {
    return this.#move(workspaceId, leadId, outcome, 'operator.outcome_set', { ...who(op), note }, undefined, {
      qualificationNotes: note,
    });
  }

  /** The same erasure as `leadintake lead delete`; the audit row names the operator. */
  async delete(workspaceId: string, leadId: string, op: OperatorRef): Promise<void> {
    const { erased } = await eraseLead(this.#d.pool, { leadId, workspaceId, actor: `operator:${op.id}` });
    if (!erased) throw new AppError('lead_not_found');
  }

  async #move(
    workspaceId: string,
    leadId: string,
    to: LeadStatus,
    type: string,
    data: Record<string, unknown>,
    alsoDo?: (tx: PoolClient) => Promise<void>,
    set?: { qualificationNotes?: string },
    keepOutcome = false,
  ): Promise<LeadStatus> {
    const client = await this.#d.pool.connect();
    try {
      return await inTransaction(client, async (tx) => {
        // Locked: an outcome the agent records meanwhile waits, so the status read here still holds.
        const { rows } = await tx.query('SELECT status FROM leads WHERE id = $1 AND workspace_id = $2 FOR UPDATE', [
          leadId,
          workspaceId,
        ]);
        if (!rows[0]) throw new AppError('lead_not_found');
        const status: LeadStatus = rows[0].status;
        if (keepOutcome && KEPT_STATUSES.has(status)) {
          await recordLeadEvent(tx, leadId, type, { ...data, status, actor: 'operator' });
          // Resume on a kept outcome gives the lead back (nobody owns it); the AI still sends nothing to it.
          if (type === 'operator.resumed') {
            await tx.query('UPDATE leads SET owner_operator_id = NULL WHERE id = $1', [leadId]);
          }
          return status;
        }
        const moved = await transitionLead(tx, {
          leadId,
          to,
          actor: 'operator',
          event: { type, data },
          ...(set ? { set } : {}),
        });
        if (!moved.ok)
          throw moved.reason === 'not_found'
            ? new AppError('lead_not_found')
            : new AppError('lead_status_conflict', { message: moved.status });
        await alsoDo?.(tx);
        return to;
      });
    } finally {
      client.release();
    }
  }
}

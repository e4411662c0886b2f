import type { Pool, PoolClient } from '../db/pool.ts';
import { eraseLead } from '../leads/lead-erasure.ts';
import { transitionLead, type LeadStatus } from '../leads/lead-state.ts';
import { AppError } from '../shared/errors.ts';
import { requestTurn } from '../whatsapp/conversation-queries.ts';
import { inTransaction } from '../whatsapp/lead-lock.ts';

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

export class LeadActions {
  readonly #d: LeadActionDeps;

  constructor(deps: LeadActionDeps) {
    this.#d = deps;
  }

  /** The lead goes to a person at once: no turn sends anything from now on (the turn engine's rule). */
  async takeOver(workspaceId: string, leadId: string, op: OperatorRef): Promise<LeadStatus> {
    return this.#move(workspaceId, leadId, 'needs_human', 'operator.took_over', who(op));
  }

  /**
   * Back to the agent. If the lead wrote something nobody answered, the agent answers it now (a
   * turn is queued); the agent's context shows what the person wrote meanwhile (chat-history.ts).
   */
  async resume(workspaceId: string, leadId: string, op: OperatorRef): Promise<LeadStatus> {
    let queued = false;
    const status = await this.#move(workspaceId, leadId, 'in_conversation', 'operator.resumed', who(op), async (tx) => {
      const { rows } = await tx.query(
        `SELECT EXISTS (SELECT 1 FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound' AND turn_id IS NULL) AS unanswered`,
        [leadId],
      );
      if (rows[0].unanswered) queued = await requestTurn(tx, leadId, workspaceId);
    });
    if (queued) this.#d.wake();
    return status;
  }

  /** Booked (with a note) or unqualified (with the reason, kept as the qualification notes). */
  async setOutcome(workspaceId: string, leadId: string, op: OperatorRef, outcome: 'booked' | 'unqualified', note: string): Promise<LeadStatus> {
    return this.#move(workspaceId, leadId, outcome, 'operator.outcome_set', { ...who(op), note }, undefined, { qualificationNotes: note });
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
  ): Promise<LeadStatus> {
    const client = await this.#d.pool.connect();
    try {
      return await inTransaction(client, async (tx) => {
      const { rows } = await tx.query('SELECT 1 FROM leads WHERE id = $1 AND workspace_id = $2', [leadId, workspaceId]);
      if (!rows[0]) throw new AppError('lead_not_found');
      const moved = await transitionLead(tx, { leadId, to, actor: 'operator', event: { type, data }, ...(set ? { set } : {}) });
      if (!moved.ok) throw moved.reason === 'not_found' ? new AppError('lead_not_found') : new AppError('lead_status_conflict', { message: moved.status });
      await alsoDo?.(tx);
      return to;
      });
    } finally {
      client.release();
    }
  }
}

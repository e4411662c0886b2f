import type { Pool, PoolClient } from '../db/pool.ts';
import { inTransaction } from '../leads/lead-lock.ts';
import { recordLeadEvent, type LeadStatus } from '../leads/lead-state.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import { agentFromColumn } from '../workspaces/agent-config.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';
import * as q from './contact-plan-queries.ts';
import { planDelayMs } from './contact-plan-service.ts';
import { nextVoiceStepFor } from './voice-ladder.ts';
import { afterTemplate } from './whatsapp-ladder.ts';

// An operator's hand on a lead's contact plan (docs/DASHBOARD.md, "Follow-ups"): Call now, Skip
// and Stop follow-ups. Each is one transaction under the lead's row lock, so a reply, a booking or
// the kill switch that changes the lead meanwhile waits and is seen. The attempt itself is still
// made by the plan's job (ContactPlanService.run), which checks the stop conditions again.

export interface PlanOperator {
  id: string;
  name: string;
}

export interface PlanActionDeps {
  pool: Pool;
  clock: Clock;
  /** Wakes the outbox relay after a step was queued. */
  wake: () => void;
}

/** Statuses in which the agent still tries to reach the lead; the others end the plan (migration 045). */
const REACHABLE: ReadonlySet<LeadStatus> = new Set(['new', 'in_conversation']);

interface LockedLead {
  status: LeadStatus;
  channel: q.PlanChannel;
  agentEnabled: boolean;
  suppressed: boolean;
}

const conflict = (message: string) => new AppError('contact_plan_conflict', { message });
const who = (op: PlanOperator) => ({ operator: op.name, operatorId: op.id });

export class PlanActions {
  readonly #d: PlanActionDeps;

  constructor(deps: PlanActionDeps) {
    this.#d = deps;
  }

  /**
   * The pending attempt (or a first one: a call on voice, the template on WhatsApp) is made now,
   * outside the calling window (`byOperator`: the operator decided), but never past the kill switch
   * or the do-not-contact list, and only for a lead the agent still works on.
   */
  async callNow(workspaceId: string, leadId: string, op: PlanOperator): Promise<LeadStatus> {
    const status = await this.#tx(workspaceId, leadId, async (tx, lead) => {
      // As the other lead actions answer a status that does not allow them: 409 with the status.
      if (!REACHABLE.has(lead.status)) throw new AppError('lead_status_conflict', { message: lead.status });
      if (!lead.agentEnabled) throw conflict('The agent is switched off for this workspace.');
      if (lead.suppressed) throw conflict('The number is on the do-not-contact list.');
      const plan = await q.readPlan(tx, leadId, { forUpdate: true });
      if (plan?.inFlightSince) throw conflict('An attempt is being made right now.');
      const pending = plan?.next && plan.next.kind !== 'give_up' ? plan.next : null;
      const kind: q.StepKind = pending?.kind ?? (lead.channel === 'voice' ? 'call' : 'template');
      await q.scheduleStep(tx, leadId, {
        kind,
        at: this.#d.clock(),
        reason: `${op.name} asked for it now`,
        data: { ...(pending?.data ?? {}), byOperator: true, ...who(op) },
      });
      return lead.status;
    });
    this.#d.wake();
    return status;
  }

  /**
   * The pending attempt is not made and the plan moves on to the step after it, as if it had been
   * made without reaching the lead: the next call of the ladder or the next follow-up template
   * (stepAfterSkip). A pending `give_up` cannot be skipped (Stop follow-ups ends the plan at once).
   */
  async skip(workspaceId: string, leadId: string, op: PlanOperator): Promise<LeadStatus> {
    const status = await this.#tx(workspaceId, leadId, async (tx, lead) => {
      const plan = await q.readPlan(tx, leadId, { forUpdate: true });
      const pending = plan && !plan.endedAt ? plan.next : null;
      if (!plan || !pending) throw conflict('No attempt is pending.');
      if (plan.inFlightSince) throw conflict('An attempt is being made right now.');
      if (pending.kind === 'give_up') throw conflict('Only the end of the plan is pending: use Stop follow-ups.');
      await recordLeadEvent(tx, leadId, 'contact.skipped', {
        by: op.name,
        operatorId: op.id,
        kind: pending.kind,
        at: pending.at.toISOString(),
      });
      const context = await q.readAttemptContext(tx, leadId);
      const next = await stepAfterSkip(plan, pending, context!);
      await q.scheduleStep(tx, leadId, {
        ...next,
        reason: `${next.reason} (the ${pending.kind} was skipped by ${op.name})`,
      });
      return lead.status;
    });
    this.#d.wake();
    return status;
  }

  /** The plan ends (its pending attempt cancelled); the lead stays as it is: the operator has it. */
  async stop(workspaceId: string, leadId: string, op: PlanOperator): Promise<LeadStatus> {
    return this.#tx(workspaceId, leadId, async (tx, lead) => {
      if (!(await q.endPlan(tx, leadId, 'operator_stopped'))) throw conflict('No follow-ups are running.');
      // The timeline says who stopped it: the entry contact_plan_end just wrote, in this transaction
      // (its outbound webhook, captured at insert, carries no operator).
      await tx.query(
        `UPDATE lead_events SET data = data || $2::jsonb
          WHERE id = (SELECT max(id) FROM lead_events WHERE lead_id = $1 AND type = 'contact.plan_ended')`,
        [leadId, JSON.stringify(who(op))],
      );
      return lead.status;
    });
  }

  async #tx<T>(workspaceId: string, leadId: string, fn: (tx: PoolClient, lead: LockedLead) => Promise<T>): Promise<T> {
    const client = await this.#d.pool.connect();
    try {
      return await inTransaction(client, async (tx) => {
        const { rows } = await tx.query(
          `SELECT l.status, w.channel, w.agent_enabled,
                  EXISTS (SELECT 1 FROM suppressed_numbers s
                           WHERE s.workspace_id = l.workspace_id AND s.phone_e164 = l.phone_normalized) AS suppressed
             FROM leads l JOIN workspaces w ON w.id = l.workspace_id
            WHERE l.id = $1 AND l.workspace_id = $2 FOR UPDATE OF l`,
          [leadId, workspaceId],
        );
        const r = rows[0];
        if (!r) throw new AppError('lead_not_found');
        return fn(tx, {
          status: r.status,
          channel: r.channel,
          agentEnabled: r.agent_enabled,
          suppressed: r.suppressed,
        });
      });
    } finally {
      client.release();
    }
  }
}

/** The step after a skipped one: the ladder's next, counted from the skipped step's time. */
async function stepAfterSkip(plan: q.PlanRow, skipped: q.PlannedStep, lead: q.AttemptContext): Promise<q.PlannedStep> {
  const settings = contactPlanOf(agentFromColumn(lead.agent));
  const giveUp = (afterMs: number): q.PlannedStep => ({
    kind: 'give_up',
    at: new Date(skipped.at.getTime() + afterMs),
    reason: 'no answer',
  });
  if (plan.channel === 'whatsapp') {
    const w = settings.whatsapp;
    const n = typeof skipped.data?.followUp === 'number' ? skipped.data.followUp : null;
    if (skipped.kind === 'template' && n !== null) {
      const step = afterTemplate(w, n, lead.livemode);
      return {
        kind: step.kind,
        at: new Date(skipped.at.getTime() + step.afterMs),
        reason: step.reason,
        data: step.data,
      };
    }
    return giveUp(planDelayMs(w.giveUpAfterHours * 3_600_000, lead.livemode));
  }
  // The skipped call counts as made: the ladder moves on, and the plan still ends at maxAttempts.
  const next = await nextVoiceStepFor(
    lead,
    { attempts: plan.attempts + 1, callTimes: [], lastOutcome: 'no_answer' },
    skipped.at,
  );
  return next.kind === 'call' ? { kind: 'call', at: next.at, reason: next.reason } : giveUp(0);
}

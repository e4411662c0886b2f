import type { Pool, PoolClient, Queryable } from '../db/pool.ts';
import { lockLeadRow } from '../leads/lead-lock.ts';
import { transitionLead } from '../leads/lead-state.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { agentFromColumn } from '../workspaces/agent-config.ts';
import { contactPlanOf, type ContactPlanSettings } from '../workspaces/contact-plan-config.ts';
import * as q from './contact-plan-queries.ts';
import { insideWindow, nextOpening, windowZones } from './lead-clock.ts';

// Runs a contact plan's attempts (docs/FOLLOW-UP.md). A pg-boss job per step, held until the step
// is due, calls run(); the plan row decides whether the step still stands (a reply, a booking, an
// operator or the kill switch may have ended or moved it since), whether it is inside the lead's
// calling window, and whether the plan has run out. The channels make the attempts.

/** A channel's side of an attempt; it records the outcome and the next step itself. */
export interface ChannelAttempter {
  /**
   * Makes the attempt of `step` (already marked in flight and committed). `resumed`: a previous
   * run of this step was interrupted after it was marked, so the attempt may have been made.
   */
  attempt(a: Attempt): Promise<void>;
  /**
   * Whether an attempt was made for the lead since `since`. A resumed step whose attempt was not
   * made is decided as a fresh one (its job's retry may come long after, outside the calling
   * window). Without it, a resumed step's attempt is taken as possibly made.
   */
  attemptMadeSince?(db: Queryable, leadId: string, since: Date): Promise<boolean>;
}

export interface Attempt {
  plan: q.PlanRow;
  step: number;
  kind: q.StepKind;
  data: Record<string, unknown>;
  lead: q.AttemptContext;
  settings: ContactPlanSettings;
  resumed: boolean;
}

export interface ContactPlanServiceDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  attempters: Partial<Record<q.PlanChannel, ChannelAttempter>>;
}

export type RunOutcome = 'superseded' | 'ended' | 'early' | 'moved' | 'exhausted' | 'attempted';

/** Sandbox leads follow their plan this many times faster (docs/SANDBOX.md), so a demo shows a retry in seconds. */
export const SANDBOX_PLAN_SPEED = 60;

/** A plan delay as it runs for this lead: as configured for a live lead, 60× shorter in the sandbox. */
export function planDelayMs(ms: number, livemode: boolean): number {
  return livemode ? ms : Math.round(ms / SANDBOX_PLAN_SPEED);
}

export class ContactPlanService {
  readonly #d: ContactPlanServiceDeps;

  constructor(deps: ContactPlanServiceDeps) {
    this.#d = deps;
  }

  /** The job of `step` of the lead's plan. */
  async run(leadId: string, step: number): Promise<RunOutcome> {
    const now = this.#d.clock();
    let attempt: Attempt | null = null;
    const outcome = await this.#tx(async (db): Promise<RunOutcome> => {
      await lockLeadRow(db, leadId);
      const plan = await q.readPlan(db, leadId, { forUpdate: true });
      if (!plan || plan.step !== step || plan.endedAt || !plan.next) return 'superseded';
      const lead = await q.readAttemptContext(db, leadId);
      if (!lead) return 'superseded';
      const stop = stopReason(lead);
      if (stop) {
        await q.endPlan(db, leadId, stop);
        return 'ended';
      }
      // pg-boss may start a job a little early (or a test's clock lags the database's).
      if (plan.next.at.getTime() > now.getTime() + 1000) {
        await q.requeueStep(db, leadId, step, plan.next.at);
        return 'early';
      }
      const settings = contactPlanOf(agentFromColumn(lead.agent));
      if (plan.next.kind === 'give_up') {
        await this.#exhaust(db, plan, lead);
        return 'exhausted';
      }
      const byOperator = plan.next.data?.byOperator === true;
      if (!byOperator && !(await this.#attemptMaybeMade(db, plan))) {
        const zones = await windowZones(now, settings.window, {
          phoneE164: lead.phoneE164,
          metadata: lead.metadata,
          workspaceTimeZone: workspaceTimeZone(lead.agent),
        });
        if (!insideWindow(now, settings.window, zones)) {
          const opening = nextOpening(now, settings.window, zones);
          if (!opening) {
            await this.#exhaust(db, plan, lead, 'no calling window');
            return 'exhausted';
          }
          await q.scheduleStep(db, leadId, {
            ...plan.next,
            at: opening,
            reason: `${plan.next.reason} (moved into the calling window)`,
          });
          return 'moved';
        }
      }
      await q.markInFlight(db, leadId, step);
      attempt = {
        plan,
        step,
        kind: plan.next.kind,
        data: plan.next.data ?? {},
        lead,
        settings,
        resumed: plan.inFlightSince !== null,
      };
      return 'attempted';
    });
    if (outcome === 'attempted' && attempt) {
      const a: Attempt = attempt;
      const attempter = this.#d.attempters[a.plan.channel];
      if (!attempter) throw new Error(`no attempter for the ${a.plan.channel} channel`);
      await attempter.attempt(a);
    }
    return outcome;
  }

  /** A step marked in flight before this run whose attempt may have been made (then the window no longer applies). */
  async #attemptMaybeMade(db: PoolClient, plan: q.PlanRow): Promise<boolean> {
    if (plan.inFlightSince === null) return false;
    const attempter = this.#d.attempters[plan.channel];
    return attempter?.attemptMadeSince ? attempter.attemptMadeSince(db, plan.leadId, plan.inFlightSince) : true;
  }

  async #exhaust(db: PoolClient, plan: q.PlanRow, lead: q.AttemptContext, detail?: string): Promise<void> {
    if (!(await exhaustPlan(db, plan, detail)))
      this.#d.log.info({ leadId: lead.leadId, status: lead.status }, 'plan ran out on a lead already closed');
  }

  /**
   * A step whose job failed on its last retry (an error, not a provider's answer: the database
   * away, settings that cannot be read): the lead goes to a person with the reason, and its plan
   * ends with that (migrations/045), rather than staying in flight with nothing to run it. False
   * when the plan has moved on since, or the lead is not the agent's to hand over.
   */
  async handOverFailedStep(leadId: string, step: number, detail: string): Promise<boolean> {
    return this.#tx(async (db) => {
      await lockLeadRow(db, leadId);
      const plan = await q.readPlan(db, leadId, { forUpdate: true });
      if (!plan || plan.step !== step || plan.endedAt) return false;
      const moved = await transitionLead(db, {
        leadId,
        to: 'needs_human',
        actor: 'system',
        event: { type: 'conversation.escalated', data: { reason: 'attempt_failed', detail, attempts: plan.attempts } },
      });
      if (!moved.ok) await q.endPlan(db, leadId, 'attempt_failed');
      return moved.ok;
    });
  }

  /** Runs `fn` in a transaction on a connection of its own. */
  async #tx<T>(fn: (db: PoolClient) => Promise<T>): Promise<T> {
    const client = await this.#d.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const out = await fn(client);
      await client.query('COMMIT');
      return out;
    } catch (err) {
      await client.query('ROLLBACK').catch((e: Error) => (broken = e));
      throw err;
    } finally {
      client.release(broken);
    }
  }
}

/**
 * The plan ran out: it ends ('not_reached') and the lead goes to needs_human, in the caller's
 * transaction. Also called by a channel at an attempt's end (a call that rang out). False when
 * the lead was already closed.
 */
export async function exhaustPlan(db: PoolClient, plan: q.PlanRow, detail?: string): Promise<boolean> {
  const reason = `not reached after ${plan.attempts} attempt${plan.attempts === 1 ? '' : 's'}`;
  await q.endPlan(db, plan.leadId, 'not_reached');
  const moved = await transitionLead(db, {
    leadId: plan.leadId,
    to: 'needs_human',
    actor: 'system',
    event: {
      type: 'conversation.escalated',
      data: { reason: 'not_reached', detail: detail ? `${reason} (${detail})` : reason, attempts: plan.attempts },
    },
  });
  return moved.ok;
}

/** Why no attempt may be made now, whatever the plan says (the triggers end most plans first). */
export function stopReason(lead: q.AttemptContext): string | null {
  if (lead.status === 'booked' || lead.status === 'unqualified' || lead.status === 'needs_human') return lead.status;
  if (!lead.agentEnabled) return 'agent_off';
  if (lead.suppressed) return 'do_not_contact';
  return null;
}

export function workspaceTimeZone(agent: Record<string, unknown>): string {
  const tz = agentFromColumn(agent)?.timeZone;
  return typeof tz === 'string' && tz.length > 0 ? tz : 'UTC';
}

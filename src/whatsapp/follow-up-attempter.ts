import type { Attempt, ChannelAttempter } from '../contact-plan/contact-plan-service.ts';
import { exhaustPlan, planDelayMs } from '../contact-plan/contact-plan-service.ts';
import { readPlan, scheduleStep } from '../contact-plan/contact-plan-queries.ts';
import {
  callbackOnSent,
  followUpOnSent,
  followUpTemplate,
  nudgeOnSent,
  type PlanOnSent,
  timedFrom,
  type WhatsappPlanSettings,
} from '../contact-plan/whatsapp-ladder.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import { inTransaction, lockLeadRow } from '../leads/lead-lock.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { FollowUpTemplate } from '../workspaces/contact-plan-config.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { loadTurnSubject, requestTurn, type TurnSubject } from './conversation-queries.ts';
import { createPlanTurn, type PlanTurn } from './follow-up-turns.ts';
import { firstName, templateText } from './outbound-text.ts';
import { WINDOW_MS } from './turn-context.ts';

// The WhatsApp attempts of a contact plan (docs/FOLLOW-UP.md): a follow-up template, or the nudge
// — free-form and written by the agent inside the 24-hour window, a template outside it. The
// attempt is a turn queued for the turn engine (src/whatsapp/follow-up-turns.ts), stored with the
// plan's step in the transaction that queues its job: a retried attempt (a.resumed) finds the turn
// of its step and only queues its job again, so a killed worker neither loses nor doubles it. What
// the send means for the plan (sent or skipped, the next step) is applied when it is recorded.

export interface WhatsappAttempterDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  workspaces: WorkspaceService;
  /** The simulated providers of sandbox leads (their settings: the sandbox's first-contact template). */
  sandbox?: Sandbox;
}

/** How long a step waits when another turn of the lead is still open (an operator's message, say). */
const BUSY_RETRY_MS = 15 * 60 * 1000;

export class WhatsappFollowUpAttempter implements ChannelAttempter {
  readonly #d: WhatsappAttempterDeps;

  constructor(deps: WhatsappAttempterDeps) {
    this.#d = deps;
  }

  async attempt(a: Attempt): Promise<void> {
    const leadId = a.lead.leadId;
    const s = await loadTurnSubject(this.#d.pool, leadId);
    const settings = s ? await this.#settingsOf(s) : null;
    const whatsapp = settings?.whatsapp;
    if (!s) return; // the lead is gone
    if (!whatsapp) {
      // Never a step left hanging: the plan ends and the lead goes to a person, saying why.
      this.#d.log.warn({ leadId, step: a.step }, 'follow-up not sent: WhatsApp is not configured');
      await withTransaction(this.#d.pool, async (tx) => {
        await lockLeadRow(tx, leadId);
        const plan = await readPlan(tx, leadId, { forUpdate: true });
        if (plan) await exhaustPlan(tx, plan, 'WhatsApp is not configured for this workspace');
      });
      return;
    }
    const planned = this.#turnOf(a, s, whatsapp);
    const turn = { ...planned, planOnSent: timedFrom(planned.planOnSent, this.#d.clock()) };
    const client = await this.#d.pool.connect();
    try {
      await this.#queue(client, a, s, turn);
    } finally {
      client.release();
    }
  }

  async #queue(db: PoolClient, a: Attempt, s: TurnSubject, turn: PlanTurn): Promise<void> {
    const leadId = s.lead.id;
    await inTransaction(db, async (tx) => {
      // The lead's row first (docs/WHATSAPP.md, "Lock order").
      if (!(await lockLeadRow(tx, leadId))) return;
      const stored = await createPlanTurn(tx, turn);
      if (stored === 'busy') {
        await scheduleStep(tx, leadId, {
          kind: a.kind,
          at: new Date(this.#d.clock().getTime() + planDelayMs(BUSY_RETRY_MS, s.lead.livemode)),
          reason: `${a.plan.next?.reason ?? a.kind} (another message was under way)`,
          data: a.data,
        });
        await tx.query('UPDATE contact_plans SET in_flight_since = NULL WHERE lead_id = $1', [leadId]);
        return;
      }
      await requestTurn(tx, leadId, s.workspace.id);
    });
  }

  /** The turn of this attempt: a follow-up template, or the nudge (free-form inside the window). */
  #turnOf(a: Attempt, s: TurnSubject, whatsapp: NonNullable<WorkspaceSettings['whatsapp']>): PlanTurn {
    const w: WhatsappPlanSettings = a.settings.whatsapp;
    const livemode = s.lead.livemode;
    const base = { leadId: s.lead.id, planStep: a.step, provider: whatsapp.provider };
    if (a.kind === 'nudge' || a.kind === 'callback') {
      const onSent: PlanOnSent = a.kind === 'nudge' ? nudgeOnSent(w, livemode) : callbackOnSent(w, livemode);
      const last = s.lead.lastInboundAt;
      const windowOpen = last !== null && this.#d.clock().getTime() - last.getTime() < WINDOW_MS;
      if (windowOpen) return { ...base, planOnSent: onSent, template: null };
      return { ...base, planOnSent: onSent, template: template(s, whatsapp, livemode ? w.nudgeTemplate : undefined) };
    }
    const n = typeof a.data.followUp === 'number' ? a.data.followUp : 1;
    return {
      ...base,
      planOnSent: followUpOnSent(w, n, livemode),
      // The simulators know only the sandbox's first-contact template: sandbox leads get it again.
      template: template(s, whatsapp, livemode ? followUpTemplate(w, n) : undefined),
    };
  }

  async #settingsOf(s: TurnSubject): Promise<WorkspaceSettings | null> {
    if (s.lead.livemode) return this.#d.workspaces.settingsOf(s.workspace);
    if (!this.#d.sandbox) return null;
    return (await this.#d.sandbox.providers()).settings;
  }
}

/** A template message with the first contact's variables: the step's own template, or the first contact's. */
function template(
  s: TurnSubject,
  whatsapp: NonNullable<WorkspaceSettings['whatsapp']>,
  own: FollowUpTemplate | undefined,
): NonNullable<PlanTurn['template']> {
  const variables = [firstName(s.lead.name)];
  const id = own
    ? 'contentSid' in own
      ? own.contentSid
      : own.name
    : whatsapp.provider === 'twilio'
      ? whatsapp.templateContentSid
      : whatsapp.templateName;
  // The first contact's body text describes only its own template.
  const body = templateText(
    { id, ...(!own && whatsapp.templateBody ? { body: whatsapp.templateBody } : {}) },
    variables,
  );
  return { body, variables, ...(own ? { ref: own } : {}) };
}

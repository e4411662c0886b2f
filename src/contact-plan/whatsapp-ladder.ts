import type { ContactPlanSettings, FollowUpTemplate } from '../workspaces/contact-plan-config.ts';
import { planDelayMs } from './contact-plan-service.ts';

// The WhatsApp side of a contact plan (docs/FOLLOW-UP.md), without I/O: what a message the plan
// sends counts as, and which step comes after it. An unanswered first template gets the
// workspace's follow-up templates (`afterHours` counted from the first template), then the plan
// gives up; a lead who answered and fell silent gets one nudge, then the plan gives up. The result
// is stored on the message's turn (`agent_turns.plan_on_sent`) and applied by the database in the
// statement that records the send (migrations/046_follow_up_turns.sql).

export type WhatsappPlanSettings = ContactPlanSettings['whatsapp'];

/**
 * The step after a send: `afterMs` after it, or at `at` when the caller fixed the time on its own
 * clock (timedFrom: the moment the turn is stored; a send is seconds later).
 */
export interface LadderStep {
  kind: 'template' | 'nudge' | 'give_up';
  afterMs: number;
  at?: string;
  /** Words for the timeline. */
  reason: string;
  data: Record<string, unknown>;
}

/** What a plan turn's send means for the plan: the attempt it counts as, and what comes next. */
export interface PlanOnSent {
  attempt?: { kind: 'first_contact' | 'template' | 'nudge' | 'callback'; data: Record<string, unknown> };
  next?: LadderStep;
  /** A reply turn: the nudge to schedule when the lead has not been nudged yet. */
  nudge?: { afterMs: number; at?: string; reason: string };
  /** This send is the lead's nudge (once per lead: contact_plans.nudged_at). */
  nudged?: true;
}

const HOUR_MS = 60 * 60 * 1000;
const ordinal = (n: number) => (n === 1 ? 'first' : n === 2 ? 'second' : n === 3 ? 'third' : `${n}th`);

function giveUp(w: WhatsappPlanSettings, livemode: boolean): LadderStep {
  return {
    kind: 'give_up',
    afterMs: planDelayMs(w.giveUpAfterHours * HOUR_MS, livemode),
    reason: 'no answer',
    data: {},
  };
}

/**
 * The step after follow-up `sent` (0: the first template) was sent: the next follow-up, at its
 * `afterHours` from the first template, or giving up once the last one has waited its time.
 */
export function afterTemplate(w: WhatsappPlanSettings, sent: number, livemode: boolean): LadderStep {
  const next = w.followUps[sent];
  if (!next) return giveUp(w, livemode);
  const since = sent === 0 ? 0 : w.followUps[sent - 1]!.afterHours;
  return {
    kind: 'template',
    afterMs: planDelayMs((next.afterHours - since) * HOUR_MS, livemode),
    reason: `${ordinal(sent + 1)} follow-up`,
    data: { followUp: sent + 1 },
  };
}

/** What the first template's send means: the first attempt, then the first follow-up. */
export function firstContactOnSent(w: WhatsappPlanSettings, livemode: boolean): PlanOnSent {
  return { attempt: { kind: 'first_contact', data: {} }, next: afterTemplate(w, 0, livemode) };
}

/** What follow-up `n` (1-based) means when sent: an attempt, then the next step. */
export function followUpOnSent(w: WhatsappPlanSettings, n: number, livemode: boolean): PlanOnSent {
  return { attempt: { kind: 'template', data: { followUp: n } }, next: afterTemplate(w, n, livemode) };
}

/** What the nudge (free-form or template) means when sent: an attempt, once, then giving up. */
export function nudgeOnSent(w: WhatsappPlanSettings, livemode: boolean): PlanOnSent {
  return { attempt: { kind: 'nudge', data: {} }, next: giveUp(w, livemode), nudged: true };
}

/** What the message of a callback the lead asked for means when sent: an attempt, then giving up. */
export function callbackOnSent(w: WhatsappPlanSettings, livemode: boolean): PlanOnSent {
  return { attempt: { kind: 'callback', data: {} }, next: giveUp(w, livemode) };
}

/** What an agent reply means: the nudge after the lead's silence (null when the workspace has none). */
export function replyOnSent(w: WhatsappPlanSettings, livemode: boolean): PlanOnSent | null {
  if (w.nudgeAfterMinutes === null) return null;
  return { nudge: { afterMs: planDelayMs(w.nudgeAfterMinutes * 60_000, livemode), reason: 'the lead went quiet' } };
}

/** The approved template of follow-up `n` (1-based), or undefined: the first-contact template again. */
export function followUpTemplate(w: WhatsappPlanSettings, n: number): FollowUpTemplate | undefined {
  return w.followUps[n - 1]?.template;
}

/** `p` with its steps' times fixed from `now` (the caller's clock, which tests move). */
export function timedFrom(p: PlanOnSent, now: Date): PlanOnSent {
  const at = (ms: number) => new Date(now.getTime() + ms).toISOString();
  return {
    ...p,
    ...(p.next ? { next: { ...p.next, at: at(p.next.afterMs) } } : {}),
    ...(p.nudge ? { nudge: { ...p.nudge, at: at(p.nudge.afterMs) } } : {}),
  };
}

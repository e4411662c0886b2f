import { z } from 'zod';
import { withTransaction, type Queryable } from '../../db/pool.ts';
import { readAttemptContext, scheduleStep, type PlanRow } from '../../contact-plan/contact-plan-queries.ts';
import { workspaceTimeZone } from '../../contact-plan/contact-plan-service.ts';
import { windowZones } from '../../contact-plan/lead-clock.ts';
import type { LeadStatus } from '../../leads/lead-state.ts';
import { agentFromColumn } from '../../workspaces/agent-config.ts';
import { contactPlanOf } from '../../workspaces/contact-plan-config.ts';
import { findAgentLead } from '../agent-lead-queries.ts';
import { formatLocalDateTime } from '../local-time.ts';
import { type CallbackTime, callbackTime, MAX_CALLBACK_DAYS } from './callback-time.ts';
import { alreadyTerminal, defineTool, LEAD_NOT_FOUND } from './tool-context.ts';

// "Call me tomorrow after six": the lead's next contact attempt (a call on voice, a message on
// WhatsApp) at the time they asked, moved into the calling window, with their words on the
// timeline (contact.scheduled). The model is untrusted: the server decides whether and when,
// and the model only hears the result, to tell the lead.

/** Callbacks the agent may arrange for one lead, over its whole life: a lead is not put off forever. */
export const MAX_CALLBACKS_PER_LEAD = 3;
/** The reason of a callback step; a step moved later by the plan keeps the words with a suffix. */
export const CALLBACK_REASON = 'the lead asked';

export const scheduleCallback = defineTool({
  name: 'scheduleCallback',
  description:
    'The lead asks to be contacted again later at a time they name ("call me tomorrow after six"). Schedules our ' +
    'next call (on WhatsApp: message) at that time, moved into our contact hours, and answers with the confirmed ' +
    'time: tell the lead that time, never another. Not for booking a consultation (use bookConsult) ' +
    'nor for a lead who wants no contact (use optOut).',
  args: z.object({
    at: z
      .string()
      .trim()
      .min(1, 'give the date and time')
      .max(40)
      .describe(
        "When, in the lead's own local time, as ISO 8601 without offset (2026-12-01T18:00), " +
          'or with an offset (2026-12-01T18:00+01:00)',
      ),
    leadWords: z
      .string()
      .trim()
      .min(1, "give the lead's words")
      .max(300)
      .describe('What the lead said about when to contact them, in their own words, briefly'),
  }),
  async run(ctx, args) {
    const channel = ctx.workspace.channel;
    // Not found (another workspace's lead, a malformed id) before any statement that needs a uuid.
    if (!(await findAgentLead(ctx.pool, ctx.workspace.id, ctx.leadId))) return LEAD_NOT_FOUND;
    return withTransaction(ctx.pool, async (db) => {
      // The lead's row locked: two tool calls racing cannot both pass the count below.
      const { rowCount } = await db.query('SELECT 1 FROM leads WHERE id = $1 AND workspace_id = $2 FOR UPDATE', [
        ctx.leadId,
        ctx.workspace.id,
      ]);
      const lead = rowCount ? await readAttemptContext(db, ctx.leadId) : null;
      if (!lead) return LEAD_NOT_FOUND;
      if (lead.status !== 'new' && lead.status !== 'in_conversation') return alreadyTerminal(lead.status as LeadStatus);
      if (!lead.agentEnabled) return PAUSED;
      if (lead.suppressed) return SUPPRESSED;
      if ((await callbacksArranged(db, ctx.leadId)) >= MAX_CALLBACKS_PER_LEAD) return TOO_MANY;
      const { window } = contactPlanOf(agentFromColumn(lead.agent));
      const now = ctx.clock();
      const zones = await windowZones(now, window, {
        phoneE164: lead.phoneE164,
        metadata: lead.metadata,
        workspaceTimeZone: workspaceTimeZone(lead.agent),
      });
      const time = callbackTime({ text: args.at, now, zones, window });
      const zone = zones[0]!;
      if (!time.ok) return refusal(time, now, zone);
      const data = { leadWords: args.leadWords, ...(ctx.call ? { providerCallId: ctx.call.providerCallId } : {}) };
      const step = await scheduleStep(db, ctx.leadId, { kind: 'callback', at: time.at, reason: CALLBACK_REASON, data });
      // (A step scheduled during a call that is itself a plan attempt starts without the call's
      // in-flight mark: contact_plan_schedule clears it.)
      if (step === null) return LEAD_NOT_FOUND;
      return confirmation(time, zone, channel === 'voice' ? 'call' : 'write to');
    });
  },
});

/**
 * Whether the lead's pending step is a callback the lead asked for during the call
 * `providerCallId`: the call's "answered" end must then leave the plan running (H5's end handler).
 */
export function callbackScheduledInCall(plan: PlanRow | null, providerCallId: string): boolean {
  const next = plan?.next;
  return next?.kind === 'callback' && next.data?.providerCallId === providerCallId && plan?.endedAt === null;
}

/** Callbacks the agent arranged for the lead so far (a step the plan moved later is the same callback). */
async function callbacksArranged(db: Queryable, leadId: string): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM lead_events
      WHERE lead_id = $1 AND type = 'contact.scheduled' AND data->>'kind' = 'callback' AND data->>'reason' = $2`,
    [leadId, CALLBACK_REASON],
  );
  return rows[0]?.n ?? 0;
}

const PAUSED =
  'Nothing was scheduled: the team has paused automatic contact for now. ' +
  'Do not promise a callback; tell the lead a colleague will be in touch.';
const SUPPRESSED =
  'Nothing was scheduled: this number is on the do-not-contact list, so we will not call or write to it. ' +
  'Do not promise a callback.';
const TOO_MANY =
  `Nothing was scheduled: this lead already asked for ${MAX_CALLBACKS_PER_LEAD} callbacks, the most we arrange. ` +
  'Offer to book a consultation now, or call escalateToHuman so a colleague follows up.';

function refusal(time: Extract<CallbackTime, { ok: false }>, now: Date, zone: string): string {
  switch (time.problem) {
    case 'unreadable':
      return (
        'Nothing was scheduled: "at" must be a date and time such as 2026-12-01T18:00 ' +
        "(the lead's local time) or 2026-12-01T18:00+01:00. Call scheduleCallback again with one."
      );
    case 'past':
      return (
        `Nothing was scheduled: that time has already passed (it is now ${formatLocalDateTime(now, zone)} ` +
        `for the lead, ${zone}). Ask the lead for a time in the future.`
      );
    case 'too_far':
      return (
        `Nothing was scheduled: a callback can be at most ${MAX_CALLBACK_DAYS} days ahead. ` +
        'Ask the lead for an earlier time, or offer to book a consultation now.'
      );
    case 'no_window':
      return (
        'Nothing was scheduled: there is no time within our contact hours after that. ' +
        'Ask the lead for another time.'
      );
  }
}

function confirmation(time: Extract<CallbackTime, { ok: true }>, zone: string, verb: string): string {
  const when = `${formatLocalDateTime(time.at, zone)} (the lead's time, ${zone})`;
  if (!time.moved) return `Callback scheduled: we will ${verb} the lead on ${when}. Tell the lead this time.`;
  return (
    `The time the lead asked for, ${formatLocalDateTime(time.requested, zone)}, is outside our contact hours, so the ` +
    `callback is scheduled for the next possible time: we will ${verb} the lead on ${when}. Tell the lead this time.`
  );
}

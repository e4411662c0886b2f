import type { Booking, ProviderFailure } from '../../scheduling/scheduling-provider.ts';
import { scrubText } from '../../shared/logger.ts';
import type { CalcomSettings } from '../../workspaces/workspace-config.ts';
import { findAgentLead, type AgentLead } from '../agent-lead-queries.ts';
import { recordLeadEvent, transitionLead } from '../../leads/lead-state.ts';
import { formatLocalDateTime } from '../local-time.ts';
import { schedulingTrouble } from './scheduling-answers.ts';
import { refusalAnswer, type ToolContext } from './tool-context.ts';

// How a bookConsult call ends: booked, failed, or unknown (handed to a human).

export interface BookingAttempt {
  lead: AgentLead;
  scheduling: CalcomSettings;
  startMs: number;
  tz: string;
  /** The attendee the booking is made for (no phone: the timeline and webhooks do not need it). */
  email: string;
  name: string;
}

/** Records the booking on the lead; a booking that lost a race to another outcome is cancelled again. */
export async function confirmBooking(
  ctx: ToolContext,
  a: BookingAttempt,
  booking: Booking,
  foundAfterError: boolean,
): Promise<string> {
  const moved = await transitionLead(ctx.pool, {
    leadId: a.lead.id,
    to: 'booked',
    actor: 'agent',
    event: {
      type: 'booking.created',
      data: {
        bookingUid: booking.uid,
        bookingStart: booking.start,
        // Who was booked, so the operator and the webhook receiver see it.
        attendee: { name: a.name, email: a.email },
        ...(foundAfterError ? { foundAfterProviderError: true } : {}),
      },
    },
    set: { bookingUid: booking.uid, bookingStart: new Date(booking.start) },
  });
  const booked =
    `Booked for ${formatLocalDateTime(new Date(booking.start), a.tz)} (${a.tz}), booking reference ${booking.uid}. ` +
    `The confirmation goes to ${a.email}. Confirm the time with the lead, then wrap up.`;
  if (moved.ok) return booked;

  // Another tool call changed the lead between our check and this update (two bookConsult calls
  // racing, or an escalation). The lead keeps that outcome; this second booking must not stay
  // in the calendar unnoticed, unless it is the very booking the lead already holds.
  const current = await findAgentLead(ctx.pool, ctx.workspace.id, a.lead.id);
  if (current?.bookingUid === booking.uid) return booked;
  const cancelled = await ctx.scheduling.cancelBooking(
    a.scheduling.apiKey,
    booking.uid,
    'Booked twice by mistake: the lead already had another outcome.',
  );
  if (current) {
    await recordLeadEvent(ctx.pool, a.lead.id, 'booking.discarded', {
      bookingUid: booking.uid,
      cancelled: cancelled.ok,
      actor: 'agent',
    });
  }
  if (!cancelled.ok) {
    ctx.log.warn(
      { leadId: a.lead.id, bookingUid: booking.uid, kind: cancelled.error.kind },
      'surplus booking could not be cancelled',
    );
  }
  const cleanup = cancelled.ok
    ? 'The booking just made was cancelled again.'
    : `Cancelling the booking just made failed: a colleague must cancel booking ${booking.uid} in the calendar.`;
  return `${refusalAnswer(moved)} ${cleanup}`;
}

/** Nothing was booked: recorded on the timeline, and the model is told what to do next. */
export async function bookingFailed(ctx: ToolContext, a: BookingAttempt, error: ProviderFailure): Promise<string> {
  ctx.log.warn({ leadId: a.lead.id, kind: error.kind, status: error.status }, 'booking failed');
  await recordLeadEvent(ctx.pool, a.lead.id, 'booking.failed', {
    start: new Date(a.startMs).toISOString(),
    kind: error.kind,
    httpStatus: error.status ?? null,
    // Provider messages can echo what was sent (an e-mail address): masked like a log line.
    message: scrubText(error.message).slice(0, 500),
    actor: 'agent',
  });
  return schedulingTrouble(error, 'book');
}

/**
 * Cal.com failed in a way that may have booked, and cannot be asked whether it did. Offering
 * another time could book the lead twice, so the lead goes to a human who checks the calendar.
 */
export async function bookingUncertain(
  ctx: ToolContext,
  a: BookingAttempt,
  lookupError: ProviderFailure,
): Promise<string> {
  ctx.log.warn(
    { leadId: a.lead.id, kind: lookupError.kind, status: lookupError.status },
    'booking outcome unknown; lead handed to a human',
  );
  const moved = await transitionLead(ctx.pool, {
    leadId: a.lead.id,
    to: 'needs_human',
    actor: 'agent',
    event: {
      type: 'booking.uncertain',
      data: {
        start: new Date(a.startMs).toISOString(),
        reason:
          'The scheduling service failed while booking and could not be asked whether the booking exists: ' +
          'check the calendar.',
      },
    },
  });
  if (!moved.ok) return refusalAnswer(moved);
  return (
    `It is not certain whether ${formatLocalDateTime(new Date(a.startMs), a.tz)} was booked: ` +
    'the scheduling service failed while booking and cannot be asked right now. ' +
    'The lead is now with a colleague (needs_human) who will check the calendar and confirm. ' +
    'Tell the lead exactly that, do not offer other times, and end the conversation.'
  );
}

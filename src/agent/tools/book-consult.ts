import { z } from 'zod';
import { isPhoneShaped, PHONE_MESSAGE } from '../../leads/phone.ts';
import { outsideWindow } from '../../scheduling/booking-window.ts';
import type { Booking, ProviderFailure } from '../../scheduling/scheduling-provider.ts';
import type { CalcomSettings } from '../../workspaces/workspace-config.ts';
import { agentConfigOf } from '../../workspaces/agent-config.ts';
import { conversationKey, offeredAt } from '../conversation-scope.ts';
import { decideAttendee, recordLeadEmail } from './booking-attendee.ts';
import { bookingFailed, bookingUncertain, confirmBooking, type BookingAttempt } from './booking-outcomes.ts';
import { BOOKING_UNAVAILABLE, describeFreeSlots } from './scheduling-answers.ts';
import { defineTool, loadActiveLead, type ToolContext } from './tool-context.ts';

// Same shape the Cal.com client accepts: without an offset the wall time would be read in this
// server's zone, so it is refused here with a message the model can fix.
const START = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 86_400_000;

/** An offer younger than this is inside the event type's window: Cal.com's slot list applied it. */
const FRESH_OFFER_MS = 10 * 60_000;

const NOT_OFFERED =
  'Nothing was booked: that start was not among the times listSlots offered to this lead in this conversation. ' +
  'Call listSlots, offer the lead those times, and book one of them with its start exactly as listSlots gave it.';

export const bookConsult = defineTool({
  name: 'bookConsult',
  description:
    'Book the consultation for the lead at a time the lead picked from the times listSlots offered ' +
    "(no other start is accepted). The lead's stored name, e-mail and phone are used; " +
    'give email, name or phone only when the lead itself told you different ones. ' +
    'On success the lead is booked; if the time was taken meanwhile you get fresh times to offer.',
  args: z.object({
    start: z
      .string()
      .trim()
      .refine(
        (s) => START.test(s) && !Number.isNaN(Date.parse(s)),
        'start must be a date-time with an offset, exactly as listSlots gave it (e.g. 2050-09-05T09:00:00.000+02:00)',
      )
      .describe('Start of the chosen time, exactly as listSlots gave it'),
    name: z.string().trim().min(1).max(120).optional().describe("Name for the booking; default: the lead's name"),
    email: z
      .string()
      .trim()
      .max(254)
      .refine((s) => z.regexes.rfc5322Email.test(s), 'email must be a valid e-mail address')
      .optional()
      .describe("Where the confirmation goes; default: the lead's stored e-mail"),
    phone: z
      .string()
      .trim()
      .refine(isPhoneShaped, PHONE_MESSAGE)
      .optional()
      .describe("Phone for the booking; default: the lead's number"),
    notes: z.string().trim().max(500).optional().describe('Short notes for the consultant'),
  }),
  async run(ctx, args) {
    const loaded = await loadActiveLead(ctx);
    if ('answer' in loaded) return loaded.answer;
    const { lead } = loaded;
    const scheduling = ctx.settings.scheduling;
    if (!scheduling) return BOOKING_UNAVAILABLE;
    const startMs = Date.parse(args.start);
    if (startMs <= ctx.clock().getTime())
      return 'That time is in the past; nothing was booked. Call listSlots for the current free times.';
    // Only a time listSlots showed for this lead in this conversation: an invented or far-off
    // start (the model's own, or one planted in the lead's data) is never sent to the calendar.
    const offered = await offeredAt(ctx.pool, lead.id, conversationKey(ctx), startMs);
    if (!offered) return NOT_OFFERED;
    const agent = agentConfigOf(ctx.workspace);
    const tz = agent.timeZone;
    // Cal.com listed the time as bookable moments ago: its window is read only for an older offer.
    if (ctx.clock().getTime() - offered.getTime() > FRESH_OFFER_MS) {
      const outside = await outsideBookingWindow(ctx, scheduling, startMs, tz);
      if (outside) return outside;
    }
    const decided = await decideAttendee(ctx, lead, args, tz, agent.defaultCountry);
    if ('answer' in decided) return decided.answer;
    const { attendee } = decided;
    const attempt: BookingAttempt = { lead, scheduling, startMs, tz, email: attendee.email, name: attendee.name };
    // A new address becomes the lead's only once Cal.com holds the booking made with it (before the
    // status change, so booking.created and its webhook show the lead with it); a refused, failed or
    // uncertain booking leaves the lead's e-mail as it was.
    const booked = async (booking: Booking, foundAfterError: boolean) => {
      if (decided.newEmail) await recordLeadEmail(ctx.pool, lead.id, attendee.email);
      return confirmBooking(ctx, attempt, booking, foundAfterError);
    };
    const result = await ctx.scheduling.createBooking({
      apiKey: scheduling.apiKey,
      eventTypeId: scheduling.eventTypeId,
      start: args.start,
      attendee,
      // leadId lets us (and the Cal.com webhook receiver) find the lead a booking belongs to.
      metadata: { leadId: lead.id, ...(args.notes ? { notes: args.notes } : {}) },
    });
    if (result.ok) return booked(result.booking, false);

    // Before saying "taken" or "failed", look for the lead's own booking at this start: Cal.com
    // may have booked on an attempt whose answer was lost (this call's, which the client does not
    // post again, or an earlier call's that timed out or whose result could not be recorded).
    if ('slotTaken' in result) {
      const own = await findOwnBooking(ctx, attempt);
      if ('booking' in own) return booked(own.booking, true);
      // After an ambiguous retry the slot is most likely ours; if that cannot be checked, nobody knows.
      if ('error' in own && result.afterAmbiguousRetry) return bookingUncertain(ctx, attempt, own.error);
      return slotTaken(ctx, scheduling, tz);
    }
    if (result.error.ambiguous) {
      const own = await findOwnBooking(ctx, attempt);
      if ('booking' in own) return booked(own.booking, true);
      // Offering another time now could book the lead twice: a human checks the calendar.
      if ('error' in own) return bookingUncertain(ctx, attempt, own.error);
    }
    return bookingFailed(ctx, attempt, result.error);
  },
});

/**
 * An offered time may have left the event type's window since (the minimum notice passed, or the
 * window was shortened). If the limits cannot be read, Cal.com's own check at booking stands.
 */
async function outsideBookingWindow(
  ctx: ToolContext,
  scheduling: CalcomSettings,
  startMs: number,
  tz: string,
): Promise<string | null> {
  if (!ctx.scheduling.bookingWindow) return null;
  const read = await ctx.scheduling.bookingWindow(scheduling.apiKey, scheduling.eventTypeId);
  if (!read.ok) {
    const { kind, status } = read.error;
    ctx.log.warn({ leadId: ctx.leadId, kind, status }, 'booking window could not be read; left to the provider');
    return null;
  }
  const outside = outsideWindow(read.window, startMs, ctx.clock().getTime(), tz);
  if (!outside) return null;
  const why =
    outside === 'too_soon'
      ? 'is too soon to book now (the calendar needs more notice)'
      : 'is further ahead than this calendar takes bookings';
  return (
    `Nothing was booked: that time ${why}. ` +
    'Call listSlots for the times that can be booked now, and offer the lead those.'
  );
}

/** The lead's booking at exactly this start (found by metadata.leadId), if Cal.com has one. */
async function findOwnBooking(
  ctx: ToolContext,
  a: BookingAttempt,
): Promise<{ booking: Booking } | { none: true } | { error: ProviderFailure }> {
  const found = await ctx.scheduling.findBookings({
    apiKey: a.scheduling.apiKey,
    eventTypeId: a.scheduling.eventTypeId,
    // A minute of margin: whether Cal.com's afterStart is inclusive is not documented.
    afterStart: new Date(a.startMs - 60_000),
    beforeEnd: new Date(a.startMs + DAY_MS),
  });
  if (!found.ok) return { error: found.error };
  const booking = found.bookings.find(
    (b) =>
      b.metadata?.leadId === a.lead.id &&
      Date.parse(b.start) === a.startMs &&
      (b.status === 'accepted' || b.status === 'pending'),
  );
  return booking ? { booking } : { none: true };
}

async function slotTaken(ctx: ToolContext, scheduling: CalcomSettings, tz: string): Promise<string> {
  const free = await describeFreeSlots(ctx, scheduling, tz, 7);
  return `That time was taken by someone else in the meantime; nothing was booked.\n${free}`;
}

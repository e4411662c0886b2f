import { z } from 'zod';
import { isE164, isPhoneShaped, normalizePhone, PHONE_MESSAGE } from '../../leads/phone.ts';
import type { Booking, ProviderFailure } from '../../scheduling/scheduling-provider.ts';
import type { CalcomSettings } from '../../workspaces/workspace-config.ts';
import { agentConfigOf } from '../agent-config.ts';
import { bookingFailed, bookingUncertain, confirmBooking, type BookingAttempt } from './booking-outcomes.ts';
import { BOOKING_UNAVAILABLE, describeFreeSlots } from './scheduling-answers.ts';
import { defineTool, loadActiveLead, type ToolContext } from './tool-context.ts';

// Same shape the Cal.com client accepts: without an offset the wall time would be read in this
// server's zone, so it is refused here with a message the model can fix.
const START = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/i;
const DAY_MS = 86_400_000;

export const bookConsult = defineTool({
  name: 'bookConsult',
  description:
    'Book the consultation at a time the lead picked from listSlots. Needs an e-mail address (the lead\'s stored one is used when you give none). ' +
    'On success the lead is booked; if the time was taken meanwhile you get fresh times to offer.',
  args: z.object({
    start: z
      .string()
      .trim()
      .refine((s) => START.test(s) && !Number.isNaN(Date.parse(s)), 'start must be a date-time with an offset, exactly as listSlots gave it (e.g. 2050-09-05T09:00:00.000+02:00)')
      .describe('Start of the chosen time, exactly as listSlots gave it'),
    name: z.string().trim().min(1).max(120).optional().describe("Name for the booking; default: the lead's name"),
    email: z
      .string()
      .trim()
      .max(254)
      .refine((s) => z.regexes.rfc5322Email.test(s), 'email must be a valid e-mail address')
      .optional()
      .describe("Where the confirmation goes; default: the lead's stored e-mail"),
    phone: z.string().trim().refine(isPhoneShaped, PHONE_MESSAGE).optional().describe("Phone for the booking; default: the lead's number"),
    notes: z.string().trim().max(500).optional().describe('Short notes for the consultant'),
  }),
  async run(ctx, args) {
    const loaded = await loadActiveLead(ctx);
    if ('answer' in loaded) return loaded.answer;
    const { lead } = loaded;
    const scheduling = ctx.settings.scheduling;
    if (!scheduling) return BOOKING_UNAVAILABLE;
    const startMs = Date.parse(args.start);
    if (startMs <= ctx.clock().getTime()) return 'That time is in the past; nothing was booked. Call listSlots for the current free times.';
    const email = args.email ?? lead.email;
    if (!email) {
      return "Nothing was booked yet: an e-mail address is needed (the booking confirmation goes there). Ask the lead for it, then call bookConsult again with email.";
    }
    const agent = agentConfigOf(ctx.workspace);
    const tz = agent.timeZone;
    // Cal.com wants attendee phones in E.164; any other number would make it refuse the whole
    // booking, so such a number is left out.
    const phone = args.phone ? normalizePhone(args.phone, agent.defaultCountry) : lead.phoneNormalized;
    const attempt: BookingAttempt = { lead, scheduling, startMs, tz, email };
    const result = await ctx.scheduling.createBooking({
      apiKey: scheduling.apiKey,
      eventTypeId: scheduling.eventTypeId,
      start: args.start,
      attendee: { name: args.name ?? lead.name, email, timeZone: tz, ...(phone && isE164(phone) ? { phoneNumber: phone } : {}) },
      // leadId lets us (and the Cal.com webhook receiver) find the lead a booking belongs to.
      metadata: { leadId: lead.id, ...(args.notes ? { notes: args.notes } : {}) },
    });
    if (result.ok) return confirmBooking(ctx, attempt, result.booking, false);

    // Before saying "taken" or "failed", look for the lead's own booking at this start: Cal.com
    // may have booked on an attempt whose answer was lost (this call's retry, or an earlier
    // call that timed out or whose result could not be recorded).
    if ('slotTaken' in result) {
      const own = await findOwnBooking(ctx, attempt);
      if ('booking' in own) return confirmBooking(ctx, attempt, own.booking, true);
      // After an ambiguous retry the slot is most likely ours; if that cannot be checked, nobody knows.
      if ('error' in own && result.afterAmbiguousRetry) return bookingUncertain(ctx, attempt, own.error);
      return slotTaken(ctx, scheduling, tz);
    }
    if (result.error.ambiguous) {
      const own = await findOwnBooking(ctx, attempt);
      if ('booking' in own) return confirmBooking(ctx, attempt, own.booking, true);
      // Offering another time now could book the lead twice: a human checks the calendar.
      if ('error' in own) return bookingUncertain(ctx, attempt, own.error);
    }
    return bookingFailed(ctx, attempt, result.error);
  },
});

/** The lead's booking at exactly this start (found by metadata.leadId), if Cal.com has one. */
async function findOwnBooking(ctx: ToolContext, a: BookingAttempt): Promise<{ booking: Booking } | { none: true } | { error: ProviderFailure }> {
  const found = await ctx.scheduling.findBookings({
    apiKey: a.scheduling.apiKey,
    eventTypeId: a.scheduling.eventTypeId,
    // A minute of margin: whether Cal.com's afterStart is inclusive is not documented.
    afterStart: new Date(a.startMs - 60_000),
    beforeEnd: new Date(a.startMs + DAY_MS),
  });
  if (!found.ok) return { error: found.error };
  const booking = found.bookings.find(
    (b) => b.metadata?.leadId === a.lead.id && Date.parse(b.start) === a.startMs && (b.status === 'accepted' || b.status === 'pending'),
  );
  return booking ? { booking } : { none: true };
}

async function slotTaken(ctx: ToolContext, scheduling: CalcomSettings, tz: string): Promise<string> {
  return `That time was taken by someone else in the meantime; nothing was booked.\n${await describeFreeSlots(ctx, scheduling, tz, 7)}`;
}

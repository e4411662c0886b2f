import type { ProviderFailure } from '../../scheduling/scheduling-provider.ts';
import type { CalcomSettings } from '../../workspaces/workspace-config.ts';
import { conversationKey, recordOfferedSlots } from '../conversation-scope.ts';
import { formatLocalDateTime } from '../local-time.ts';
import { chooseSlotsToOffer } from '../slot-choice.ts';
import type { ToolContext } from './tool-context.ts';

// What listSlots and bookConsult tell the model about the scheduling service: free times it can
// offer, and failures it can act on (retry, or hand the lead to a human).

export const MAX_OFFERED_SLOTS = 10;
const DAY_MS = 86_400_000;

export const BOOKING_UNAVAILABLE =
  'Booking is unavailable: this workspace has no scheduling service configured, so there are no times to offer. ' +
  'Tell the lead a colleague will get in touch to arrange the consultation, then call escalateToHuman.';

/** Free times for the next `daysAhead` days, phrased for the model; failures phrased too. */
export async function describeFreeSlots(
  ctx: ToolContext,
  scheduling: CalcomSettings,
  tz: string,
  daysAhead: number,
): Promise<string> {
  const from = ctx.clock();
  const result = await ctx.scheduling.listSlots({
    apiKey: scheduling.apiKey,
    eventTypeId: scheduling.eventTypeId,
    start: from,
    end: new Date(from.getTime() + daysAhead * DAY_MS),
    timeZone: tz,
  });
  if (!result.ok) {
    ctx.log.warn(
      { leadId: ctx.leadId, kind: result.error.kind, status: result.error.status },
      'listing free slots failed',
    );
    return schedulingTrouble(result.error, 'fetch free times');
  }
  const offer = chooseSlotsToOffer(result.slots, tz, MAX_OFFERED_SLOTS);
  // Only what the model is shown can be booked (bookConsult checks it against this record).
  await recordOfferedSlots(
    ctx.pool,
    ctx.leadId,
    conversationKey(ctx),
    offer.map((s) => s.start),
    from,
  );
  if (offer.length === 0) {
    return (
      `No free consultation times in the next ${daysAhead} days. ` +
      'Call listSlots with a larger daysAhead (at most 30), or call escalateToHuman if nothing suits the lead.'
    );
  }
  return [
    `Free consultation times in the next ${daysAhead} days (${tz}):`,
    ...offer.map((s) => `- ${formatLocalDateTime(new Date(s.start), tz)} (start: ${s.start})`),
    'Offer two or three that suit the lead. To book, call bookConsult with the start exactly as given.',
  ].join('\n');
}

/** A scheduling failure as an instruction the model can follow. */
export function schedulingTrouble(error: ProviderFailure, action: 'fetch free times' | 'book'): string {
  const nothingBooked = action === 'book' ? ' Nothing was booked.' : '';
  switch (error.kind) {
    case 'unauthorized':
    case 'not_found':
      return (
        `Could not ${action}: the scheduling service refused this workspace's settings ` +
        `(${error.kind}).${nothingBooked} ` +
        'This needs a human: tell the lead a colleague will arrange the consultation, then call escalateToHuman.'
      );
    case 'bad_request':
      return (
        `Could not ${action}: the scheduling service refused the request ` +
        `(${error.message.slice(0, 300)}).${nothingBooked} ` +
        'If the start was not one listSlots gave, call listSlots and offer those times; otherwise call escalateToHuman.'
      );
    case 'rate_limited':
    case 'unavailable':
    case 'network':
      return (
        `Could not ${action}: the scheduling service is not answering right now.${nothingBooked} ` +
        'Try once more in a minute; if it fails again, ' +
        'tell the lead a colleague will follow up and call escalateToHuman.'
      );
  }
}

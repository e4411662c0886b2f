import { z } from 'zod';
import { agentConfigOf } from '../../workspaces/agent-config.ts';
import { BOOKING_UNAVAILABLE, describeFreeSlots, MAX_OFFERED_SLOTS } from './scheduling-answers.ts';
import { defineTool, loadActiveLead } from './tool-context.ts';

export const listSlots = defineTool({
  name: 'listSlots',
  description:
    "Free consultation times from the calendar, in the workspace's time zone " +
    `(at most ${MAX_OFFERED_SLOTS}, spread over the days). ` +
    'Call it before offering any time; never invent times.',
  args: z.object({
    daysAhead: z.number().int().min(1).max(30).default(7).describe('How many days ahead to look, 1 to 30 (default 7)'),
  }),
  async run(ctx, args) {
    // A booked, unqualified or escalated lead is not offered times.
    const loaded = await loadActiveLead(ctx);
    if ('answer' in loaded) return loaded.answer;
    const scheduling = ctx.settings.scheduling;
    if (!scheduling) return BOOKING_UNAVAILABLE;
    return describeFreeSlots(ctx, scheduling, agentConfigOf(ctx.workspace).timeZone, args.daysAhead);
  },
});

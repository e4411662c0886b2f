import { z } from 'zod';
import { transitionLead } from '../../leads/lead-state.ts';
import { defineTool, loadActiveLead, refusalAnswer } from './tool-context.ts';

export const markUnqualified = defineTool({
  name: 'markUnqualified',
  description: 'The lead clearly does not meet the qualification criteria. Closes the lead as unqualified; nothing is booked.',
  args: z.object({
    reason: z.string().trim().min(1, 'give the reason').max(1000).describe('Why the lead is not a fit, in one or two sentences'),
  }),
  async run(ctx, args) {
    const loaded = await loadActiveLead(ctx);
    if ('answer' in loaded) return loaded.answer;
    const moved = await transitionLead(ctx.pool, {
      leadId: loaded.lead.id,
      to: 'unqualified',
      actor: 'agent',
      event: { type: 'lead.unqualified', data: { reason: args.reason } },
      set: { qualificationNotes: args.reason },
    });
    if (!moved.ok) return refusalAnswer(moved);
    return 'The lead is now unqualified. Thank them politely, do not offer a consultation, and end the conversation.';
  },
});

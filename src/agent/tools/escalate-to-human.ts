import { z } from 'zod';
import { transitionLead } from '../../leads/lead-state.ts';
import { defineTool, loadActiveLead, refusalAnswer } from './tool-context.ts';

export const escalateToHuman = defineTool({
  name: 'escalateToHuman',
  description:
    'Hand the lead to a human colleague: the lead asks for a person, is upset, has a question you cannot answer, ' +
    'or booking is unavailable or failing. The agent stops working on the lead.',
  args: z.object({
    reason: z
      .string()
      .trim()
      .min(1, 'give the reason')
      .max(1000)
      .describe('What the colleague needs to know, in one or two sentences'),
  }),
  async run(ctx, args) {
    const loaded = await loadActiveLead(ctx);
    if ('answer' in loaded) return loaded.answer;
    const moved = await transitionLead(ctx.pool, {
      leadId: loaded.lead.id,
      to: 'needs_human',
      actor: 'agent',
      event: { type: 'lead.escalated', data: { reason: args.reason } },
    });
    if (!moved.ok) return refusalAnswer(moved);
    return (
      'The lead is now with a human colleague (needs_human). ' +
      'Tell the lead a colleague will get back to them soon, then end the conversation.'
    );
  },
});

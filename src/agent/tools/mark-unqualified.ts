import { z } from 'zod';
import { transitionLead } from '../../leads/lead-state.ts';
import { defineTool, loadActiveLead, refusalAnswer } from './tool-context.ts';

// A reason that says the lead opted out is refused: closing such a lead as unqualified would
// leave it without the opt-out on record, so an operator's "resume" could message it again. Only
// the opt-out path (the optOut tool, the inbound keywords) records an opt-out; the model is told
// to use it. The pattern is narrow on purpose: a refusal only costs the model one more call.
const OPT_OUT_REASON = new RegExp(
  [
    String.raw`\bopt(?:s|ed|ing)?[\s-]?out\b`,
    String.raw`\bunsubscrib`,
    String.raw`\bstop (?:messag|contact|text|writ|call)`,
    String.raw`\b(?:do not|don'?t) (?:contact|message|text|call|write)`,
  ].join('|'),
  'i',
);

export const markUnqualified = defineTool({
  name: 'markUnqualified',
  description:
    'The lead clearly does not meet the qualification criteria. Closes the lead as unqualified; nothing is booked. ' +
    'Not for a lead who asks not to be contacted: use optOut for that.',
  args: z.object({
    reason: z
      .string()
      .trim()
      .min(1, 'give the reason')
      .max(1000)
      .describe('Why the lead is not a fit, in one or two sentences'),
  }),
  async run(ctx, args) {
    if (OPT_OUT_REASON.test(args.reason)) {
      return (
        'Nothing was done: if the lead asked not to be contacted any more, call optOut (it records the opt-out ' +
        'and stops every message). markUnqualified is only for leads who do not meet the criteria.'
      );
    }
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

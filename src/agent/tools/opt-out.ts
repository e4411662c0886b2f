import { z } from 'zod';
import { withTransaction } from '../../db/pool.ts';
import { recordOptOut } from '../../leads/lead-opt-out.ts';
import { findAgentLead } from '../agent-lead-queries.ts';
import { defineTool, LEAD_NOT_FOUND } from './tool-context.ts';

// The lead asked, in words the keyword check does not know, to be contacted no more. The same
// path as the keyword (src/leads/lead-opt-out.ts): the opt-out is recorded and nothing more is
// sent, whatever the lead's status. markUnqualified never does this.

export const optOut = defineTool({
  name: 'optOut',
  description:
    'The lead asks not to be contacted any more (in any words or language: "leave me alone", "no more messages"). ' +
    'Records the opt-out and closes the lead; nothing more is sent to them, your reply included. ' +
    'Not for a lead who only cancels a booking or is merely not interested.',
  args: z.object({
    reason: z.string().trim().max(500).optional().describe("What the lead said, briefly (for the team's records)"),
  }),
  async run(ctx, args) {
    const lead = await findAgentLead(ctx.pool, ctx.workspace.id, ctx.leadId);
    if (!lead) return LEAD_NOT_FOUND;
    const data = { via: 'agent', ...(args.reason ? { reason: args.reason } : {}) };
    await withTransaction(ctx.pool, (tx) => recordOptOut(tx, { leadId: lead.id, actor: 'agent', data }));
    return (
      'The lead is opted out: nothing more will be sent to them, including any reply you write now. ' +
      'Do not write anything further.'
    );
  },
});

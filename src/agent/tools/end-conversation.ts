import { z } from 'zod';
import { findAgentLead } from '../agent-lead-queries.ts';
import { recordLeadEvent } from '../../leads/lead-state.ts';
import { defineTool, LEAD_NOT_FOUND } from './tool-context.ts';

export const endConversation = defineTool({
  name: 'endConversation',
  description: 'The conversation is over (after saying goodbye). Records the end; the lead keeps its status.',
  args: z.object({}),
  async run(ctx) {
    // Allowed in every status, terminal ones included: it records, it changes nothing, and it is
    // what the agent calls right after booking or escalating.
    const lead = await findAgentLead(ctx.pool, ctx.workspace.id, ctx.leadId);
    if (!lead) return LEAD_NOT_FOUND;
    await recordLeadEvent(ctx.pool, lead.id, 'conversation.ended', { status: lead.status, actor: 'agent' });
    return `Conversation end recorded; the lead stays ${lead.status}. Do not send anything further.`;
  },
});

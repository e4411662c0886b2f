import type { ToolContext } from '../../agent/tool-registry.ts';
import { transitionLead } from '../../leads/lead-state.ts';

// A tool call answered "still working" (vapi-tool-calls.ts) had the model tell the lead that a
// colleague will confirm. Nobody else knows of that promise, and the call may well end before the
// tool does, so when the tool finishes a lead it did not close goes to a person, with the tool's
// result on the timeline: a booking that failed late (Cal.com kept refusing, the time was taken)
// would otherwise leave the lead waiting for a confirmation that never comes.

export interface LateToolCall {
  providerCallId: string;
  toolCallId: string;
  name: string;
}

/** Never throws: it runs in the background, after the answer to Vapi. */
export async function handOverAfterLateTool(ctx: ToolContext, call: LateToolCall, result: string): Promise<void> {
  const tool = call.name.slice(0, 64);
  try {
    const moved = await transitionLead(ctx.pool, {
      leadId: ctx.leadId,
      to: 'needs_human',
      // The agent moves a lead only from new or in_conversation, checked in the statement: a lead
      // the late run booked (or closed otherwise), or that is with a person already, keeps its status.
      actor: 'agent',
      event: {
        type: 'conversation.escalated',
        data: {
          reason: 'tool_finished_late',
          detail:
            `${tool} took longer than the call could wait, so the lead was told a colleague will confirm: ` +
            'confirm or complete it with the lead (the result below says what was done).',
          tool,
          providerCallId: call.providerCallId,
          toolCallId: call.toolCallId,
          result: result.slice(0, 2000),
        },
      },
    });
    // The result stays out of the log: it can carry the lead's personal data.
    const outcome = moved.ok ? 'needs_human' : moved.reason === 'refused' ? moved.status : moved.reason;
    ctx.log.info({ leadId: ctx.leadId, tool, outcome }, 'voice tool finished after "still working"');
  } catch (err) {
    ctx.log.error({ err, leadId: ctx.leadId, tool }, 'voice tool finished late; lead not handed to a person');
  }
}

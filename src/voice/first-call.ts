import { firstContactAfter } from '../contact-plan/first-contact-window.ts';
import { voicemailMessageFor } from '../contact-plan/voice-ladder.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import { type CallLead, firstNameOf } from './call-request.ts';
import type { PlaceCallRequest } from './voice-provider.ts';

// What a call asks of Vapi beyond the conversation: the voicemail (detection always on, a message
// at most once per lead per 24 hours) and, for the first call of an `in_window` workspace, the
// time Vapi dials it (docs/VOICE.md, "Calling again").

/** Vapi's voicemail settings for a call to this lead: detection on, the message or none. */
export function voicemailFor(
  workspace: Pick<WorkspaceRow, 'name' | 'agent'>,
  leadName: string,
  voicemailLeftAt: Date | null,
  now: Date,
  livemode: boolean,
): { message: string | null } {
  const voice = contactPlanOf(workspace.agent).voice;
  const persona = workspace.agent?.persona;
  const vars = {
    leadFirstName: firstNameOf(leadName),
    agentName: persona?.agentName ?? '',
    businessName: persona?.company ?? workspace.name,
  };
  return { message: voicemailMessageFor({ voice, voicemailLeftAt, now, livemode, vars }) };
}

/**
 * The first call's extras: the voicemail, and `earliestAt` (the next opening of the lead's calling
 * window) when the workspace contacts first in the window and the window is shut now. Vapi still
 * answers with the call's id, so the POST's answer is the same.
 */
export async function firstCallPlan(
  workspace: Pick<WorkspaceRow, 'name' | 'agent'>,
  lead: CallLead,
  now: Date,
  livemode: boolean,
): Promise<Pick<PlaceCallRequest, 'voicemail' | 'earliestAt'>> {
  const voicemail = voicemailFor(workspace, lead.name, null, now, livemode);
  const earliestAt = await firstContactAfter(workspace.agent, lead, now);
  return earliestAt ? { voicemail, earliestAt } : { voicemail };
}

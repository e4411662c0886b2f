import { renderMetadata } from '../leads/metadata-render.ts';
import type { QualificationQuestion } from '../workspaces/agent-config.ts';
import type { VapiSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import type { PlaceCallRequest, VoiceProvider } from './voice-provider.ts';

// The one request that calls a lead, for the first call (LeadService at POST) and every call
// again (the voice attempter): the same variables, metadata, server and tools.

/** Who places a call: the workspace's Vapi for a live lead, the sandbox's simulated one otherwise. */
export interface Dial {
  provider: VoiceProvider;
  settings: VapiSettings | undefined;
  /** Our server URL, its credentials and tools (voice-channel.ts's CallOptions). */
  callOptions?: (
    workspace: WorkspaceRow,
    voice: VapiSettings,
  ) => Pick<PlaceCallRequest, 'server' | 'serverMessages' | 'tools'>;
}

/** What the call says about the lead. */
export interface CallLead {
  leadId: string;
  name: string;
  phoneE164: string;
  email: string | null;
  goal: string | null;
  metadata: Record<string, unknown> | null;
  formResponses: Record<string, string> | null;
}

export function callRequest(
  dial: Dial & { settings: VapiSettings },
  workspace: WorkspaceRow,
  lead: CallLead,
  extra: Pick<PlaceCallRequest, 'voicemail' | 'earliestAt'> = {},
): PlaceCallRequest {
  const vapi = dial.settings;
  return {
    apiKey: vapi.apiKey,
    assistantId: vapi.assistantId,
    phoneNumberId: vapi.phoneNumberId,
    customer: { number: lead.phoneE164, name: lead.name },
    variableValues: callVariables(lead, workspace.agent?.questions),
    metadata: { leadId: lead.leadId, workspaceId: workspace.id },
    ...dial.callOptions?.(workspace, vapi),
    ...(extra.voicemail ? { voicemail: extra.voicemail } : {}),
    ...(extra.earliestAt ? { earliestAt: extra.earliestAt } : {}),
  };
}

/** The lead's first name, as the assistant and the voicemail message greet them. */
export function firstNameOf(name: string): string {
  return name.trim().split(/\s+/)[0] ?? name;
}

/**
 * The assistant's variables (`{{leadName}}` and so on) for a call. `formResponses` is one
 * `label: answer` line per answer, in the form's order, with the workspace's question labels
 * (an id the form no longer has is shown as the id, after the others).
 */
export function callVariables(
  lead: Omit<CallLead, 'phoneE164'>,
  questions: readonly QualificationQuestion[] = [],
): Record<string, string> {
  return {
    leadId: lead.leadId,
    leadName: lead.name,
    leadFirstName: firstNameOf(lead.name),
    leadEmail: lead.email ?? '',
    leadGoal: lead.goal ?? '',
    leadMetadata: renderMetadata(lead.metadata ?? undefined),
    formResponses: formResponseLines(lead.formResponses ?? {}, questions),
  };
}

function formResponseLines(responses: Record<string, string>, questions: readonly QualificationQuestion[]): string {
  const known = questions
    .filter((q) => Object.hasOwn(responses, q.id))
    .map((q) => [q.label, responses[q.id]!] as const);
  const ids = new Set(questions.map((q) => q.id));
  const unknown = Object.entries(responses).filter(([id]) => !ids.has(id));
  // One line per answer: line breaks inside an answer would read as another answer.
  return [...known, ...unknown].map(([label, answer]) => `${label}: ${answer.replace(/\s+/g, ' ').trim()}`).join('\n');
}

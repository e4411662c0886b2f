import { flat, METADATA_KEY_MAX_CHARS, METADATA_VALUE_MAX_CHARS, renderMetadata } from '../leads/metadata-render.ts';
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
    customer: { number: lead.phoneE164, name: oneLine(lead.name) },
    variableValues: callVariables(lead, workspace.agent?.questions),
    metadata: { leadId: lead.leadId, workspaceId: workspace.id },
    ...dial.callOptions?.(workspace, vapi),
    ...(extra.voicemail ? { voicemail: extra.voicemail } : {}),
    ...(extra.earliestAt ? { earliestAt: extra.earliestAt } : {}),
  };
}

/** The lead's first name, as the assistant and the voicemail message greet them: one word, never a line break. */
export function firstNameOf(name: string): string {
  const line = oneLine(name);
  return line.split(' ')[0] ?? line;
}

/**
 * The assistant's variables (`{{leadName}}` and so on) for a call. Vapi puts them into the
 * assistant's prompt as they are, so every value the lead or a form controls is one line of at
 * most 1,000 characters (metadata-render.ts's `flat`: line breaks and line separators become
 * spaces, a cut value ends with `…`): a value cannot start a line (a `## ` heading, say) of its own.
 * `formResponses` is one line per answer, in the form's order, each starting with text of ours:
 * `label: answer` with the workspace's question labels, then the answers to ids the form does not
 * have (deleted since, or no form at all), as `Question id "<id>": answer` (the id JSON-quoted, at
 * most 100 characters).
 */
export function callVariables(
  lead: Omit<CallLead, 'phoneE164'>,
  questions: readonly QualificationQuestion[] = [],
): Record<string, string> {
  return {
    leadId: lead.leadId,
    leadName: oneLine(lead.name),
    leadFirstName: firstNameOf(lead.name),
    leadEmail: oneLine(lead.email ?? ''),
    leadGoal: oneLine(lead.goal ?? ''),
    leadMetadata: renderMetadata(lead.metadata ?? undefined),
    formResponses: formResponseLines(lead.formResponses ?? {}, questions),
  };
}

function oneLine(text: string): string {
  return flat(text, METADATA_VALUE_MAX_CHARS);
}

function formResponseLines(responses: Record<string, string>, questions: readonly QualificationQuestion[]): string {
  const known = questions
    .filter((q) => Object.hasOwn(responses, q.id))
    .map((q) => `${oneLine(q.label)}: ${oneLine(responses[q.id]!)}`);
  const ids = new Set(questions.map((q) => q.id));
  // The id is the lead's (any key the submission sent): quoted after a label of ours, never a line's start.
  const unknown = Object.entries(responses)
    .filter(([id]) => !ids.has(id))
    .map(([id, answer]) => `Question id ${JSON.stringify(flat(id, METADATA_KEY_MAX_CHARS))}: ${oneLine(answer)}`);
  return [...known, ...unknown].join('\n');
}

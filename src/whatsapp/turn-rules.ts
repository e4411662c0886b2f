import { TERMINAL_STATUSES } from '../leads/lead-state.ts';
import { isE164 } from '../leads/phone.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import { agentConfigOf } from '../workspaces/agent-config.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';
import { firstContactOnSent, timedFrom } from '../contact-plan/whatsapp-ladder.ts';
import type { TurnSubject } from './conversation-queries.ts';
import { isHandOverTurn } from './hand-over.ts';
import { firstName, templateText } from './outbound-text.ts';
import type { AcceptedSend } from './delivery-status.ts';
import type { AgentTurn, FirstContact, OutboundMessage } from './turn-queries.ts';

// What a turn may do with a lead, decided from the lead's subject alone (no I/O): shared by the
// turn of one lead and the first contacts taken in batches (src/whatsapp/turn-engine.ts).

/**
 * The outcome of a live lead escalated because its workspace has no `whatsapp` section. Such a
 * lead waits for an operator to add the settings and retry the dead-lettered job, which then
 * sends the first message after all (docs/WHATSAPP.md).
 */
export const NOT_CONFIGURED = 'whatsapp_not_configured';

/** The lead is with a person only because its workspace had no `whatsapp` section (and nobody took it over since). */
export function waitingForSettings(s: TurnSubject): boolean {
  const t = s.lead.lastTransition;
  return s.lead.status === 'needs_human' && t?.actor === 'system' && t.outcome === NOT_CONFIGURED;
}

/**
 * Why nothing may be sent to this lead now, or null. A lead that became terminal during `turn`
 * through the agent's own tools (booked, unqualified, escalated) still gets the turn's closing
 * message; one an operator or the system moved does not.
 */
export function blockedReason(s: TurnSubject, turn: AgentTurn | null): string | null {
  if (s.workspace.deletedAt) return 'workspace_deleted';
  if (s.workspace.channel !== 'whatsapp') return 'not_a_whatsapp_workspace';
  // The turn that handed the lead to a person sends its holding message, kill switch or not.
  const handingOver = turn !== null && isHandOverTurn(s, turn);
  if (!s.agentEnabled && turn?.kind !== 'operator' && !handingOver) return 'agent_off';
  if (s.lead.optedOutAt) return 'opted_out';
  // Not a number a provider accepts (docs/API.md, "Phone numbers"): a person sorts the lead out.
  if (!isE164(s.lead.phoneNormalized)) return 'phone_not_e164';
  // An operator's reply goes to a lead that is with a person: that is its point.
  if (turn?.kind === 'operator' || handingOver) return null;
  if (!TERMINAL_STATUSES.has(s.lead.status)) return null;
  const t = s.lead.lastTransition;
  // Waiting only for the workspace's settings: the operator's retry of the job goes ahead.
  if (waitingForSettings(s)) return null;
  const ownDoing = turn !== null && t !== null && t.actor === 'agent' && t.at >= turn.createdAt;
  return ownDoing ? null : `lead_${s.lead.status}`;
}

/** The lead's first contact: the workspace's template with the lead's first name. */
export function firstContact(
  s: TurnSubject,
  whatsapp: NonNullable<WorkspaceSettings['whatsapp']>,
  now: Date,
): FirstContact {
  const variables = [firstName(s.lead.name)];
  const id = whatsapp.provider === 'twilio' ? whatsapp.templateContentSid : whatsapp.templateName;
  const body = templateText({ id, ...(whatsapp.templateBody ? { body: whatsapp.templateBody } : {}) }, variables);
  const plan = contactPlanOf(agentConfigOf(s.workspace)).whatsapp;
  return {
    leadId: s.lead.id,
    provider: whatsapp.provider,
    body,
    variables,
    planOnSent: timedFrom(firstContactOnSent(plan, s.lead.livemode), now),
  };
}

/** What recording an accepted send writes: who started the conversation, and the timeline's data. */
export function acceptedSend(
  s: TurnSubject,
  turn: AgentTurn,
  message: OutboundMessage,
  provider: 'twilio' | 'meta',
  providerMessageId: string,
): AcceptedSend {
  const data = {
    messageId: message.id,
    turnId: turn.id,
    kind: message.content.kind,
    actor: turn.kind === 'operator' ? 'operator' : 'agent',
  };
  // The first message the provider accepts starts the conversation; for a lead that waited for
  // its workspace's settings, the operator's `jobs retry` is what resumed it.
  const resumed = waitingForSettings(s);
  return {
    provider,
    providerMessageId,
    messageId: message.id,
    turnId: turn.id,
    leadId: s.lead.id,
    actor: resumed ? 'operator' : 'system',
    data: resumed ? { ...data, resumedAfter: NOT_CONFIGURED } : data,
  };
}

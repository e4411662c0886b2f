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
/** The provider refused the workspace's settings (credentials, sender, template) for a send. */
export const PROVIDER_REFUSED_SETTINGS = 'provider_refused_settings';
/** The provider kept failing (429, 5xx, network) until the job's last attempt. */
export const SEND_FAILED = 'send_failed';
/** The turn kept failing with an error (a bug, the database) until the job's last attempt (turn-worker.ts). */
export const TURN_FAILED = 'turn_failed';

/**
 * Hand-overs whose dead-lettered job an operator retries once the cause is fixed
 * (hand-over.ts, handOverUntilRetried): the retried turn goes on where it stopped.
 */
const WAITING_FOR_RETRY: ReadonlySet<string> = new Set([
  NOT_CONFIGURED,
  PROVIDER_REFUSED_SETTINGS,
  SEND_FAILED,
  TURN_FAILED,
]);

/**
 * The lead is with a person only because its turn could not go on (no `whatsapp` section, the
 * provider refused the settings or kept failing, the turn kept failing) and nobody took it over
 * since: the outcome of that hand-over, else null.
 */
export function waitingForRetry(s: TurnSubject): string | null {
  const t = s.lead.lastTransition;
  const waiting =
    s.lead.status === 'needs_human' && !s.lead.owned && t?.actor === 'system' && WAITING_FOR_RETRY.has(t.outcome ?? '');
  return waiting ? t!.outcome! : null;
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
  // Waiting only for the cause to be fixed: the operator's retry of the job goes ahead.
  if (waitingForRetry(s)) return null;
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
  // the cause of its hand-over to be fixed, the operator's `jobs retry` is what resumed it. An
  // operator's own reply leaves the lead with the operator.
  const resumed = turn.kind === 'operator' ? null : waitingForRetry(s);
  return {
    provider,
    providerMessageId,
    messageId: message.id,
    turnId: turn.id,
    leadId: s.lead.id,
    actor: resumed ? 'operator' : 'system',
    data: resumed ? { ...data, resumedAfter: resumed } : data,
  };
}

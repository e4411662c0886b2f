import { callbackScheduledInCall } from '../agent/tools/schedule-callback.ts';
import * as plans from '../contact-plan/contact-plan-queries.ts';
import { exhaustPlan, stopReason } from '../contact-plan/contact-plan-service.ts';
import { nextVoiceStepFor, voicemailMessageFor } from '../contact-plan/voice-ladder.ts';
import type { PoolClient } from '../db/pool.ts';
import { transitionLead } from '../leads/lead-state.ts';
import { agentFromColumn } from '../workspaces/agent-config.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';
import { classifyCallEnd } from './call-outcome.ts';
import { isLatestSession } from './call-session-queries.ts';

// What a call's end means for the lead's contact plan (docs/VOICE.md, "Calling again"), in the
// transaction that records the end, once per call: the attempt is counted, then the plan ends
// (answered, invalid number), or the next call is scheduled, or the plan has run out.

export interface EndedCall {
  leadId: string;
  providerCallId: string;
  endedReason: string | null;
  /** The call reached in-progress (someone or something picked up). */
  wasInProgress: boolean;
  now: Date;
}

/**
 * Vapi's messages can come in any order: a call counted as not picked up (its end, without a start
 * time, came before the message saying it was in progress) was answered after all. The lead was
 * reached, and the call again scheduled for it is cancelled, unless a newer call was placed since.
 */
export async function planAfterLatePickUp(tx: PoolClient, c: EndedCall): Promise<void> {
  if (classifyCallEnd(c.endedReason, false) === 'answered' || classifyCallEnd(c.endedReason, true) !== 'answered')
    return;
  const plan = await plans.readPlan(tx, c.leadId, { forUpdate: true });
  if (!plan || plan.endedAt !== null || plan.next?.kind !== 'call') return;
  if (!(await isLatestSession(tx, c.leadId, c.providerCallId))) return;
  await plans.recordReached(tx, c.leadId, 'voice', plan.attempts);
  await plans.endPlan(tx, c.leadId, 'answered');
  await handOverUnfinishedCall(tx, c);
}

export async function planAfterCallEnd(tx: PoolClient, c: EndedCall): Promise<void> {
  const outcome = classifyCallEnd(c.endedReason, c.wasInProgress);
  const before = await plans.readPlan(tx, c.leadId, { forUpdate: true });
  const attempt = await plans.recordAttempt(tx, c.leadId, {
    channel: 'voice',
    kind: (before?.attempts ?? 0) === 0 ? 'first_contact' : 'call',
    outcome,
    data: { providerCallId: c.providerCallId, endedReason: c.endedReason },
  });
  if (outcome === 'answered') {
    await plans.recordReached(tx, c.leadId, 'voice', attempt);
    // A callback the lead asked for during this call (scheduleCallback) is the plan's next step: it stands.
    if (callbackScheduledInCall(before, c.providerCallId)) return;
    await plans.endPlan(tx, c.leadId, 'answered');
    await handOverUnfinishedCall(tx, c);
    return;
  }
  // A call Vapi could not place (call.start.error-*) or that broke off on a fault (pipeline,
  // transport, carrier errors): the lead goes to a person (call-events.ts), nothing is retried.
  if (outcome === 'failed') return;
  const lead = await plans.readAttemptContext(tx, c.leadId);
  if (!lead) return;
  if (outcome === 'invalid_number') {
    // Calling again cannot help: a person checks the number.
    await plans.endPlan(tx, c.leadId, 'invalid_number');
    await handCallLeadOver(tx, c.leadId, {
      reason: 'invalid_number',
      detail: `the number cannot be called (${c.endedReason ?? 'unknown'})`,
      attempts: attempt,
    });
    return;
  }
  const settings = contactPlanOf(agentFromColumn(lead.agent));
  if (outcome === 'voicemail' && voicemailWasLeft(settings, before, lead.livemode, c.now)) {
    await tx.query('UPDATE contact_plans SET voicemail_left_at = $2, updated_at = now() WHERE lead_id = $1', [
      c.leadId,
      c.now,
    ]);
  }
  // Booked, unqualified or with a person during the call, or stopped meanwhile (kill switch,
  // do-not-contact): the triggers ended the plan; nothing is scheduled after it.
  if (stopReason(lead) || (lead.status !== 'new' && lead.status !== 'in_conversation')) return;
  const plan = await plans.readPlan(tx, c.leadId);
  // Ended (a reply, an opt-out) or already holding a step an operator set: left as it is. The step
  // that placed this very call may still be marked in flight (the attempter records the call after
  // Vapi answers, or was stopped before it could): it was made, so this call's end decides the next.
  if (!plan || (before !== null && before.endedAt !== null)) return;
  if (plan.next !== null && !(await placedByStepInFlight(tx, plan, c.providerCallId))) return;
  const history = { attempts: plan.attempts, callTimes: await callTimes(tx, c.leadId), lastOutcome: outcome };
  const next = await nextVoiceStepFor(lead, history, c.now);
  if (next.kind === 'exhausted') await exhaustPlan(tx, plan, next.detail);
  else await plans.scheduleStep(tx, c.leadId, { kind: 'call', at: next.at, reason: next.reason });
}

/**
 * A call the lead picked up that ended with the lead neither booked, nor unqualified, nor with a
 * person (a hang-up mid-qualification, silence, the maximum duration) and no callback asked for:
 * nothing would happen next, so a person follows up. Not while one of the call's tools still runs
 * in the background (its late result decides: vapi-tool-calls.ts), nor for a number on the
 * do-not-contact list.
 */
async function handOverUnfinishedCall(tx: PoolClient, c: EndedCall): Promise<void> {
  const lead = await plans.readAttemptContext(tx, c.leadId);
  if (!lead || (lead.status !== 'new' && lead.status !== 'in_conversation') || lead.suppressed) return;
  const running = await tx.query(
    'SELECT 1 FROM voice_tool_calls WHERE lead_id = $1 AND provider_call_id = $2 AND finished_at IS NULL',
    [c.leadId, c.providerCallId],
  );
  if (running.rowCount) return;
  await handCallLeadOver(tx, c.leadId, {
    reason: 'call_ended_without_outcome',
    detail: `the call ended (${c.endedReason ?? 'unknown'}) before the lead was booked or qualified`,
    providerCallId: c.providerCallId,
  });
}

/** A voice lead to a person: `needs_human`, with a `conversation.escalated` entry saying why (`reason`, `detail`). */
export function handCallLeadOver(
  tx: PoolClient,
  leadId: string,
  data: { reason: string; detail: string } & Record<string, unknown>,
): ReturnType<typeof transitionLead> {
  return transitionLead(tx, {
    leadId,
    to: 'needs_human',
    actor: 'system',
    event: { type: 'conversation.escalated', data },
  });
}

/** A retry after a provider refused the call (the voice attempter), in the caller's transaction. */
export async function planAfterRefusedCall(tx: PoolClient, leadId: string, now: Date): Promise<void> {
  const lead = await plans.readAttemptContext(tx, leadId);
  const plan = await plans.readPlan(tx, leadId, { forUpdate: true });
  if (!lead || !plan || plan.endedAt || plan.next || stopReason(lead)) return;
  const history = { attempts: plan.attempts, callTimes: await callTimes(tx, leadId), lastOutcome: 'failed' as const };
  const next = await nextVoiceStepFor(lead, history, now);
  if (next.kind === 'exhausted') await exhaustPlan(tx, plan, next.detail);
  else await plans.scheduleStep(tx, leadId, { kind: 'call', at: next.at, reason: next.reason });
}

/** Whether the call was placed by the plan's step in flight: its session was recorded since the step was marked. */
async function placedByStepInFlight(tx: PoolClient, plan: plans.PlanRow, providerCallId: string): Promise<boolean> {
  if (plan.inFlightSince === null) return false;
  const { rows } = await tx.query(
    'SELECT 1 FROM call_sessions WHERE lead_id = $1 AND provider_call_id = $2 AND created_at >= $3',
    [plan.leadId, providerCallId, plan.inFlightSince],
  );
  return rows.length > 0;
}

/** When the lead's calls were made: their end (Vapi's clock), or their creation while unknown. */
async function callTimes(tx: PoolClient, leadId: string): Promise<Date[]> {
  const { rows } = await tx.query<{ at: Date }>(
    'SELECT coalesce(ended_at, created_at) AS at FROM call_sessions WHERE lead_id = $1',
    [leadId],
  );
  return rows.map((r) => r.at);
}

/**
 * Whether the call that reached a machine carried a message: decided by the rule that chose it at
 * dispatch (voicemailMessageFor), against the same last-left time, which only a call's end moves.
 */
function voicemailWasLeft(
  settings: ReturnType<typeof contactPlanOf>,
  plan: plans.PlanRow | null,
  livemode: boolean,
  now: Date,
): boolean {
  const vars = { leadFirstName: '', agentName: '', businessName: '' };
  return (
    voicemailMessageFor({
      voice: settings.voice,
      voicemailLeftAt: plan?.voicemailLeftAt ?? null,
      now,
      livemode,
      vars,
    }) !== null
  );
}

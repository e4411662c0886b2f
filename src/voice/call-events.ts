import { recordLeadCreated } from '../leads/lead-queries.ts';
import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';
import type { PoolClient } from '../db/pool.ts';
import { insertWebhookReceipt } from '../integration-log/webhook-receipt-queries.ts';
import { planAfterCallEnd, planAfterLatePickUp } from './call-end-plan.ts';
import { mergeReport, mergeStatusUpdate, type SessionState } from './call-session-merge.ts';
import { classifyCallEnd } from './call-outcome.ts';
import * as q from './call-session-queries.ts';
import type { CallRef, VapiMessage } from './vapi/vapi-message.ts';

// Applies a status-update or an end-of-call-report, in the caller's transaction: the session and
// lead are locked, the delivery's receipt is inserted (a repeat stops there), then the merged
// session, the lead's transition and its timeline entries are written together.

export const VAPI_PROVIDER = 'vapi';

export type CallEventOutcome =
  | { kind: 'applied'; leadId: string }
  | { kind: 'duplicate'; leadId: string | null }
  | { kind: 'unknown-call' };

type CallEvent = Extract<VapiMessage, { type: 'status-update' | 'end-of-call-report' }>;

export async function applyCallEvent(
  tx: PoolClient,
  workspaceId: string,
  event: CallEvent & { call: { callId: string } },
  now: Date,
): Promise<CallEventOutcome> {
  const callId = event.call.callId;
  const session = await findOrReconcileSession(tx, workspaceId, event.call, callId);
  const dedupeKey =
    event.type === 'status-update' ? `status-update:${callId}:${event.status}` : `end-of-call-report:${callId}`;
  const fresh = await insertWebhookReceipt(tx, {
    provider: VAPI_PROVIDER,
    workspaceId,
    dedupeKey,
    leadId: session?.leadId ?? null,
    type: event.type,
  });
  if (!fresh) return { kind: 'duplicate', leadId: session?.leadId ?? null };
  if (!session) return { kind: 'unknown-call' };

  const next =
    event.type === 'status-update' ? mergeStatusUpdate(session, event) : mergeReport(session, event.report, now);
  await q.updateSession(tx, session.id, next);
  await leadEffects(tx, session, next, now);
  return { kind: 'applied', leadId: session.leadId };
}

/** The call's session, locked; created for the crash window's lead (below); null for an unknown call. */
export async function findOrReconcileSession(
  tx: PoolClient,
  workspaceId: string,
  ref: CallRef,
  callId: string,
): Promise<q.CallSession | null> {
  return (await q.lockSession(tx, workspaceId, callId)) ?? (await reconcile(tx, workspaceId, ref, callId));
}

/**
 * The crash window of voice dispatch (docs/ARCHITECTURE.md): Vapi accepted the call but its
 * session was never recorded, so the lead is still `new`. The message names the lead in the
 * metadata we sent; if that lead is in this workspace and has no call session at all, this call
 * becomes its session and the lead is in conversation. Anything else stays an unknown call.
 */
async function reconcile(
  tx: PoolClient,
  workspaceId: string,
  ref: CallRef,
  callId: string,
): Promise<q.CallSession | null> {
  if (!ref.leadId || ref.workspaceId !== workspaceId) return null;
  // Not inserted: not such a lead, or the call was recorded meanwhile (by dispatch committing,
  // or a concurrent message), which the lookup then finds.
  if (!(await q.insertReconciledSession(tx, workspaceId, ref.leadId, callId)))
    return q.lockSession(tx, workspaceId, callId);
  // The reserved lead is kept: its `lead.created` entry and webhook, unless it has them (a retry's call).
  await recordLeadCreated(tx, ref.leadId);
  const data = { providerCallId: callId };
  const moved = await transitionLead(tx, {
    leadId: ref.leadId,
    to: 'in_conversation',
    actor: 'system',
    event: { type: 'call.reconciled', data },
  });
  // An operator may have taken the lead over meanwhile: the call is still recorded, the status kept.
  if (!moved.ok && moved.reason === 'refused')
    await recordLeadEvent(tx, ref.leadId, 'call.reconciled', { ...data, status: moved.status, actor: 'system' });
  return q.lockSession(tx, workspaceId, callId);
}

/** Picked up: in progress (or forwarded), or a start time is known (a call never answered has none). */
function answered(s: SessionState): boolean {
  return s.status === 'in-progress' || s.status === 'forwarding' || s.startedAt !== null;
}

/**
 * The call's outcome is known: it ended with a reason, or its report came (a status update may
 * say `ended` before the reason is known, and the report then carries it).
 */
function outcomeKnown(s: SessionState): boolean {
  return s.status === 'ended' && (s.endedReason !== null || s.reportReceivedAt !== null);
}

async function leadEffects(tx: PoolClient, before: q.CallSession, next: SessionState, now: Date): Promise<void> {
  const leadId = before.leadId;
  const providerCallId = before.providerCallId;
  // The first message that shows the call was answered: usually the in-progress status update,
  // but the report may come first (then the in-progress update changes nothing), so a start
  // time known for the first time counts as well; the funnel's "conversation" reads this entry.
  if (!answered(before) && answered(next)) {
    await recordLeadEvent(tx, leadId, 'call.started', { providerCallId, actor: 'system' });
    if (outcomeKnown(before)) {
      const late = { leadId, providerCallId, endedReason: next.endedReason, wasInProgress: true, now };
      await planAfterLatePickUp(tx, late);
    }
  }
  const endedNow = before.status !== 'ended' && next.status === 'ended';
  // The contact plan learns each call's outcome once (call-end-plan.ts): counted, then retried or ended.
  const decided = outcomeKnown(next) && !outcomeKnown(before);
  const ended = { leadId, providerCallId, endedReason: next.endedReason, wasInProgress: answered(next), now };
  // Vapi could not place the call (a start error after its 201), or the call broke off on a fault
  // (a pipeline, transport or carrier error): no retry ladder applies, so a person follows up.
  const failedNow = decided && classifyCallEnd(next.endedReason, answered(next)) === 'failed';
  if (failedNow) {
    await planAfterCallEnd(tx, ended);
    const data = { providerCallId, endedReason: next.endedReason };
    const moved = await transitionLead(tx, {
      leadId,
      to: 'needs_human',
      actor: 'system',
      event: { type: 'call.failed', data },
    });
    if (moved.ok) return;
    if (!endedNow) return;
  }
  if (!endedNow) {
    if (decided) await planAfterCallEnd(tx, ended);
    return;
  }
  const { rows } = await tx.query('SELECT status FROM leads WHERE id = $1', [leadId]);
  const status = rows[0]?.status as string | undefined;
  const withoutOutcome = status === 'new' || status === 'in_conversation';
  // The timeline says why a call ended; a call without an outcome leaves the lead in conversation.
  await recordLeadEvent(tx, leadId, 'call.ended', {
    providerCallId,
    endedReason: next.endedReason,
    durationSeconds: next.durationSeconds,
    leadStatus: status ?? null,
    ...(withoutOutcome ? { withoutOutcome: true } : {}),
    actor: 'system',
  });
  if (decided && !failedNow) await planAfterCallEnd(tx, ended);
}

import * as plans from '../contact-plan/contact-plan-queries.ts';
import type { Attempt, ChannelAttempter } from '../contact-plan/contact-plan-service.ts';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { workspaceFromRow, type WorkspaceRow } from '../workspaces/workspace-queries.ts';
import { planAfterRefusedCall } from './call-end-plan.ts';
import { type CallLead, callRequest, type Dial } from './call-request.ts';
import { callSessionSince, recordRetriedCall } from './call-session-queries.ts';
import { voicemailFor } from './first-call.ts';
import type { PlaceCallResult } from './voice-provider.ts';

// The contact plan's calls again (docs/VOICE.md, "Calling again"): the same request as the first
// call (call-request.ts), through the live or the sandbox Vapi by the lead's mode. The call's end
// decides the next step (call-end-plan.ts); a call Vapi refuses decides it here.

export interface VoiceAttempterDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  /** The provider for a lead of this mode in this workspace (with the integration log). */
  dial(livemode: boolean, workspace: WorkspaceRow): Promise<Dial>;
}

export class VoiceAttempter implements ChannelAttempter {
  readonly #d: VoiceAttempterDeps;

  constructor(deps: VoiceAttempterDeps) {
    this.#d = deps;
  }

  /** A call placed since `since`: its session, recorded by our commit or by Vapi's first message. */
  attemptMadeSince(db: Queryable, leadId: string, since: Date): Promise<boolean> {
    return callSessionSince(db, leadId, since);
  }

  async attempt(a: Attempt): Promise<void> {
    const leadId = a.lead.leadId;
    // Interrupted after the call was placed: Vapi's messages or our commit recorded its session.
    // Only this step is completed: the call's end may have scheduled the next one already.
    if (a.resumed && a.plan.inFlightSince && (await callSessionSince(this.#d.pool, leadId, a.plan.inFlightSince))) {
      await plans.completeStep(this.#d.pool, leadId, a.step);
      return;
    }
    const workspace = await workspaceOf(this.#d.pool, a.lead.workspaceId);
    const lead = await callLeadOf(this.#d.pool, leadId);
    if (!workspace || !lead) {
      await plans.completeStep(this.#d.pool, leadId, a.step);
      return;
    }
    const dial = await this.#d.dial(a.lead.livemode, workspace);
    const now = this.#d.clock();
    const attempt = a.plan.attempts + 1;
    let result: PlaceCallResult;
    if (!dial.settings) {
      result = { ok: false, message: 'Voice provider is not configured for this workspace.' };
    } else {
      const voicemail = voicemailFor(workspace, lead.name, a.plan.voicemailLeftAt, now, a.lead.livemode);
      result = await dial.provider.placeCall(
        callRequest({ ...dial, settings: dial.settings }, workspace, lead, { voicemail }),
      );
    }
    await withTransaction(this.#d.pool, async (tx) => {
      if (result.ok) {
        await recordRetriedCall(tx, {
          leadId,
          providerCallId: result.providerCallId,
          callStatus: result.status,
          attempt,
        });
        await plans.completeStep(tx, leadId, a.step);
        return;
      }
      // Refused (or not configured): counted as a failed attempt, and the ladder goes on.
      await plans.recordAttempt(tx, leadId, {
        channel: 'voice',
        kind: 'call',
        outcome: 'failed',
        data: { error: result.message.slice(0, 300), ...(result.httpStatus ? { httpStatus: result.httpStatus } : {}) },
      });
      if (await plans.completeStep(tx, leadId, a.step)) await planAfterRefusedCall(tx, leadId, now);
    });
    if (!result.ok) this.#d.log.info({ leadId, httpStatus: result.httpStatus }, 'voice provider refused a call again');
  }
}

async function workspaceOf(db: Queryable, id: string): Promise<WorkspaceRow | null> {
  const { rows } = await db.query('SELECT * FROM workspaces WHERE id = $1 AND deleted_at IS NULL', [id]);
  return rows[0] ? workspaceFromRow(rows[0]) : null;
}

async function callLeadOf(db: Queryable, leadId: string): Promise<CallLead | null> {
  const { rows } = await db.query(
    'SELECT id, name, phone_normalized, email, goal, metadata, form_responses FROM leads WHERE id = $1',
    [leadId],
  );
  const r = rows[0];
  if (!r) return null;
  return {
    leadId: r.id,
    name: r.name,
    phoneE164: r.phone_normalized,
    email: r.email,
    goal: r.goal,
    metadata: r.metadata,
    formResponses: r.form_responses,
  };
}

import { readAttemptContext } from '../contact-plan/contact-plan-queries.ts';
import { stopReason } from '../contact-plan/contact-plan-service.ts';
import type { Pool } from '../db/pool.ts';
import { recordLeadEvent } from '../leads/lead-state.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { workspaceFromRow } from '../workspaces/workspace-queries.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import * as q from './call-session-queries.ts';
import { applyEndFromRecord, handOverUnknownEnd, underLeadLock } from './call-sweep-ends.ts';
import type { CallControl, CallControlResult, ProviderCall } from './voice-provider.ts';

// The call sweep (docs/VOICE.md, "Calls that never end"): every minute, in every worker, it asks
// Vapi about the live calls whose end has not arrived. A call Vapi still holds for later whose
// lead may no longer be called (do-not-contact, agent off, no longer new or in conversation, or
// erased) is cancelled before it rings. A call whose end is long overdue (both its last status
// update and its report were lost: Vapi sends each once) is ended from Vapi's own record of it,
// or, when Vapi cannot tell, its lead goes to a person. Several workers at once only repeat
// each other's lookups: every change is made once, under the lead's lock.

/**
 * A call's end is overdue this long after it was placed (or after the time Vapi held it for):
 * Vapi ends a call at its maximum duration (10 minutes unless the assistant sets more) and reports
 * within seconds, so an hour without the end means its messages were lost.
 */
export const END_OVERDUE_MS = 60 * 60_000;
/** Past this, a call Vapi does not know or cannot be asked about goes to a person: a long outage or a bad key. */
export const END_UNKNOWN_MS = 6 * 60 * 60_000;
/** A held call still to cancel is given up on after a week: longer than any calling window stays shut. */
const CANCEL_GIVE_UP_MS = 7 * 24 * 60 * 60_000;
export const CALL_SWEEP_MS = 60_000;
/** Calls looked at per pass; the rest wait for the next. */
const BATCH = 100;

const STOPPED_BECAUSE: Record<string, string> = {
  do_not_contact: 'the number is on the do-not-contact list',
  agent_off: "the workspace's agent is switched off",
  booked: 'the lead is booked',
  unqualified: 'the lead is unqualified',
  needs_human: 'the lead is with a person',
};

export interface CallSweepDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  /** Vapi's live API (sandbox calls are simulated and always end: not swept). */
  calls: CallControl;
  workspaces: Pick<WorkspaceService, 'settingsOf'>;
}

type Lookup = CallControlResult<ProviderCall> & { apiKey?: string };

export class CallSweep {
  readonly #d: CallSweepDeps;

  constructor(deps: CallSweepDeps) {
    this.#d = deps;
  }

  /** One pass; returns how many calls it cancelled, ended or gave up on. Never throws. */
  async sweep(): Promise<number> {
    try {
      const now = this.#d.clock();
      let changed = 0;
      for (const held of await q.listCallsToCancel(this.#d.pool, BATCH))
        changed += Number(await this.#isolated(null, () => this.#erased(held, now)));
      const overdueBefore = new Date(now.getTime() - END_OVERDUE_MS);
      const givenUpAfter = new Date(now.getTime() - CANCEL_GIVE_UP_MS);
      for (const call of await q.listOpenCalls(this.#d.pool, { overdueBefore, givenUpAfter, limit: BATCH }))
        changed += Number(await this.#isolated(call.id, () => this.#check(call, now)));
      return changed;
    } catch (err) {
      this.#d.log.warn({ err }, 'call sweep failed; the next sweep tries again');
      return 0;
    }
  }

  /** One call's failure (a database error, a record we cannot read) never holds up the calls after it. */
  async #isolated(callSessionId: string | null, work: () => Promise<boolean>): Promise<boolean> {
    try {
      return await work();
    } catch (err) {
      this.#d.log.warn({ err, callSessionId }, 'call sweep failed on one call; the next sweep tries again');
      return false;
    }
  }

  async #check(c: q.OpenCall, now: Date): Promise<boolean> {
    const lead = await readAttemptContext(this.#d.pool, c.leadId);
    if (!lead) return false;
    const stop = c.status === 'scheduled' ? stopReason(lead) : null;
    const late = now.getTime() - c.since.getTime();
    // A held call given up on (its lead went to a person) is still cancelled once Vapi answers.
    const overdue = !c.endUnknown && late > END_OVERDUE_MS;
    if (!stop && !overdue) return false;
    const found = await this.#lookup(c.workspaceId, c.providerCallId);
    if (!found.ok) {
      this.#warn(c.id, found, 'looking up a call at Vapi failed; the next sweep tries again');
      return overdue && late > END_UNKNOWN_MS && handOverUnknownEnd(this.#d.pool, this.#d.log, c, now, found.notFound);
    }
    const call = found.value;
    if (call.status === 'ended') return applyEndFromRecord(this.#d.pool, this.#d.log, c, call, now);
    if (call.status === 'scheduled') {
      if (stop) return this.#cancel(c, found.apiKey!, stop, now);
      if (call.earliestAt) await q.recordScheduledAt(this.#d.pool, c.id, call.earliestAt);
      return false;
    }
    if (stop) await this.#leftRunning(c, call.status, stop);
    return false;
  }

  /** Cancels the held call, then records its end (`scheduled-call-deleted`, Vapi's reason) and why. */
  async #cancel(c: q.OpenCall, apiKey: string, stop: string, now: Date): Promise<boolean> {
    const deleted = await this.#d.calls.deleteCall(apiKey, c.providerCallId);
    if (!deleted.ok) {
      this.#warn(c.id, deleted, 'cancelling a held call at Vapi failed; the next sweep tries again');
      return false;
    }
    const detail = `The call Vapi held for later was cancelled before it rang: ${STOPPED_BECAUSE[stop] ?? stop}.`;
    return underLeadLock(this.#d.pool, c.leadId, async (tx) => {
      if (!(await q.endCancelledCall(tx, c.id, now))) return false;
      const data = { providerCallId: c.providerCallId, endedReason: 'scheduled-call-deleted', cancelled: stop, detail };
      await recordLeadEvent(tx, c.leadId, 'call.ended', { ...data, actor: 'system' });
      return true;
    });
  }

  /** Vapi was already placing the held call: it is left to run (its end decides as usual), and the timeline says so. */
  async #leftRunning(c: q.OpenCall, status: string, stop: string): Promise<void> {
    const noted = await underLeadLock(this.#d.pool, c.leadId, async (tx) => {
      if (!(await q.markDialling(tx, c.id))) return false;
      const detail = `Vapi was already placing the call it held (${status}) when ${STOPPED_BECAUSE[stop] ?? stop}.`;
      const data = { providerCallId: c.providerCallId, providerStatus: status, reason: stop, detail };
      await recordLeadEvent(tx, c.leadId, 'call.not_cancelled', { ...data, actor: 'system' });
      return true;
    });
    if (noted)
      this.#d.log.info({ callSessionId: c.id, reason: stop }, 'a held call was already being placed: left to run');
  }

  async #erased(held: { providerCallId: string; workspaceId: string; createdAt: Date }, now: Date): Promise<boolean> {
    const found = await this.#lookup(held.workspaceId, held.providerCallId);
    let cancelled = false;
    if (found.ok && found.value.status === 'scheduled') {
      const deleted = await this.#d.calls.deleteCall(found.apiKey!, held.providerCallId);
      if (!deleted.ok) return this.#keepTrying(held, deleted, now);
      cancelled = true;
    } else if (!found.ok && !found.notFound) {
      return this.#keepTrying(held, found, now);
    }
    // Cancelled, already placed or unknown to Vapi: nothing more to do.
    await q.forgetCallToCancel(this.#d.pool, held.providerCallId);
    return cancelled;
  }

  async #keepTrying(held: { providerCallId: string; createdAt: Date }, failed: Lookup, now: Date): Promise<false> {
    this.#warn(null, failed, "cancelling an erased lead's held call at Vapi failed; the next sweep tries again");
    if (now.getTime() - held.createdAt.getTime() > CANCEL_GIVE_UP_MS) {
      await q.forgetCallToCancel(this.#d.pool, held.providerCallId);
      this.#d.log.warn({ workspaceHeldCall: true }, "gave up cancelling an erased lead's held call after a week");
    }
    return false;
  }

  async #lookup(workspaceId: string, providerCallId: string): Promise<Lookup> {
    const { rows } = await this.#d.pool.query('SELECT * FROM workspaces WHERE id = $1', [workspaceId]);
    const apiKey = rows[0] ? this.#d.workspaces.settingsOf(workspaceFromRow(rows[0])).voice?.apiKey : undefined;
    if (!apiKey) return { ok: false, notFound: false, message: 'Voice provider is not configured for this workspace.' };
    return { ...(await this.#d.calls.getCall(apiKey, providerCallId)), apiKey };
  }

  /** Vapi's answer is never logged as text: it may repeat the customer's number or name. */
  #warn(callSessionId: string | null, failed: Lookup | CallControlResult<null>, msg: string): void {
    if (failed.ok) return;
    this.#d.log.warn({ callSessionId, notFound: failed.notFound, error: failed.message }, msg);
  }
}

/** Runs a pass every minute (the timer does not keep the process alive) until stop(), which waits for one running. */
export function startCallSweep(sweep: CallSweep, intervalMs = CALL_SWEEP_MS): { stop(): Promise<void> } {
  let running: Promise<number> | null = null;
  const timer = setInterval(() => {
    running ??= sweep.sweep().finally(() => (running = null));
  }, intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      await running;
    },
  };
}

import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import { handCallLeadOver } from './call-end-plan.ts';
import type { Logger } from '../shared/logger.ts';
import { applyCallEvent } from './call-events.ts';
import * as q from './call-session-queries.ts';
import { parseVapiMessage } from './vapi/vapi-message.ts';
import type { ProviderCall } from './voice-provider.ts';

// What the call sweep (call-sweep.ts) writes for a call whose end never arrived: Vapi's record of
// its end, or the hand-over when Vapi cannot tell.

/** Runs `work` in a transaction holding the lead's lock. */
export function underLeadLock(
  pool: Pool,
  leadId: string,
  work: (tx: PoolClient) => Promise<boolean>,
): Promise<boolean> {
  return withTransaction(pool, async (tx) => {
    // Lead first, then its session: the order of every path that changes a call (call-session-queries.ts).
    await tx.query('SELECT 1 FROM leads WHERE id = $1 FOR UPDATE', [leadId]);
    return work(tx);
  });
}

/**
 * Vapi's record of an ended call (`GET /call/{id}`) carries what its end-of-call report does
 * (reason, times, artifact, analysis): applied as that report, under the report's own dedupe key,
 * so the real report, should it come after all, is a duplicate.
 */
export async function applyEndFromRecord(
  pool: Pool,
  log: Logger,
  c: q.OpenCall,
  call: ProviderCall,
  now: Date,
): Promise<boolean> {
  const body = { message: { ...call.raw, type: 'end-of-call-report', call: call.raw } };
  const { message } = parseVapiMessage(Buffer.from(JSON.stringify(body)));
  if (message.type !== 'end-of-call-report' || message.call.callId !== c.providerCallId) return false;
  const event = { ...message, call: { ...message.call, callId: c.providerCallId } };
  const outcome = await withTransaction(pool, (tx) => applyCallEvent(tx, c.workspaceId, event, now));
  if (outcome.kind !== 'applied') return false;
  log.info({ callSessionId: c.id }, "a call's lost end was applied from Vapi's record of it");
  return true;
}

/** Once per call (the session is marked): the lead, if the agent still had it, goes to a person. */
export async function handOverUnknownEnd(
  pool: Pool,
  log: Logger,
  c: q.OpenCall,
  now: Date,
  notFound: boolean,
): Promise<boolean> {
  const handed = await underLeadLock(pool, c.leadId, async (tx) => {
    if (!(await q.markEndUnknown(tx, c.id, now))) return false;
    // A lead already booked, unqualified or with a person keeps its status: only the agent's is handed over.
    const { rows } = await tx.query('SELECT status FROM leads WHERE id = $1', [c.leadId]);
    if (rows[0]?.status !== 'new' && rows[0]?.status !== 'in_conversation') return false;
    const why = notFound ? 'Vapi does not know the call' : 'Vapi could not be asked for hours';
    const moved = await handCallLeadOver(tx, c.leadId, {
      reason: 'call_end_unknown',
      detail: `The call's end never arrived and ${why}: a person checks how it went.`,
      providerCallId: c.providerCallId,
    });
    return moved.ok;
  });
  if (handed) log.warn({ callSessionId: c.id, outcome: 'call_end_unknown' }, 'call end unknown: lead handed over');
  return handed;
}

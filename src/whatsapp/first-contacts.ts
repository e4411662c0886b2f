import { sendRecorder } from './delivery-status.ts';
import { loadTurnSubjects, type TurnSubject } from './conversation-queries.ts';
import { tryLockLeads } from '../leads/lead-lock.ts';
import { CONTINUE, type Step, type TurnContext, type TurnJobResult } from './turn-context.ts';
import { isOutgoing, type Outgoing, type SendRefusal, type TurnSender } from './turn-send.ts';
import { acceptedSend, blockedReason, firstContact } from './turn-rules.ts';
import * as q from './turn-queries.ts';

const firstContactResult = (step: Step): TurnJobResult =>
  step.kind === 'continue' ? { kind: 'done', outcome: 'first_contact_sent' } : step;

/**
 * The first contacts of several leads at once, for a batch of fetched jobs (docs/WHATSAPP.md,
 * "First contacts in batches"): one connection takes the leads' locks, one statement reads their
 * subjects and one stores their turns and templates; the sends run side by side, each recorded
 * as soon as its provider accepts it. It takes only leads whose job is a plain first contact (lock
 * free, no turn yet, nothing from the lead, nothing blocking, WhatsApp configured); the caller runs
 * the others one by one once this has released its locks.
 */
export async function runFirstContacts(
  c: TurnContext,
  sender: TurnSender,
  leadIds: string[],
  signal?: AbortSignal,
): Promise<Map<string, TurnJobResult>> {
  const results = new Map<string, TurnJobResult>();
  const lock = await tryLockLeads(c.d.pool, leadIds);
  const db = lock.db;
  const stop = signal ? AbortSignal.any([signal, lock.lost]) : lock.lost;
  try {
    const due: { s: TurnSubject; contact: q.FirstContact }[] = [];
    for (const s of lock.leadIds.length > 0 ? await loadTurnSubjects(db, lock.leadIds) : []) {
      if (s.openTurn || s.anyTurn || s.unanswered || blockedReason(s, null)) continue;
      const whatsapp = (await c.mode(s))?.settings.whatsapp;
      if (whatsapp) due.push({ s, contact: firstContact(s, whatsapp, c.d.clock()) });
    }
    if (due.length === 0 || stop.aborted) return results;
    const created = await q.createFirstContactTurns(
      db,
      due.map((d) => d.contact),
    );
    const outgoing: { s: TurnSubject; turn: q.AgentTurn; message: q.OutboundMessage; o: Outgoing }[] = [];
    for (const [i, { turn, message }] of created.entries()) {
      const s = due[i]!.s;
      const ready = await sender.readyToSend(db, s, turn, message);
      if (isOutgoing(ready)) outgoing.push({ s, turn, message, o: ready });
      else results.set(s.lead.id, firstContactResult(ready));
    }
    // Last moment to stop, as in TurnSender.send: the stored turns are sent by the retries.
    if (stop.aborted) {
      for (const x of outgoing) results.set(x.s.lead.id, { kind: 'retry', reason: 'stopped before the send' });
      return results;
    }
    /** A batch's lead settled by `work`; an error (a lost connection, say) retries that lead's job. */
    const settled = async (s: TurnSubject, work: () => Promise<Step>): Promise<void> => {
      try {
        results.set(s.lead.id, firstContactResult(await work()));
      } catch (err) {
        c.d.log.error({ err, leadId: s.lead.id }, 'recording a first contact failed');
        results.set(s.lead.id, { kind: 'retry', reason: (err as Error).message ?? String(err) });
      }
    };
    // Each accepted send recorded as soon as its provider call returns (with those that return
    // while a recording runs): a worker killed mid-batch sends again only the sends in flight.
    const record = sendRecorder(db);
    const refused: { x: (typeof outgoing)[number]; answer: SendRefusal }[] = [];
    const sends = await Promise.allSettled(
      outgoing.map(async (x) => {
        const { answer, journaled } = await sender.deliver(x.s, x.o);
        if (!answer.ok) return void (await journaled, refused.push({ x, answer }));
        const send = acceptedSend(x.s, x.turn, x.message, x.o.settings.whatsapp!.provider, answer.providerMessageId);
        await settled(x.s, async () => (sender.sentNow(x.s, x.turn, await record(send)), CONTINUE));
        await journaled;
      }),
    );
    // A lead whose send threw is left out of the results: its job runs on its own.
    for (const [i, r] of sends.entries()) {
      if (r.status === 'rejected')
        c.d.log.error({ err: r.reason, leadId: outgoing[i]!.s.lead.id }, 'a first contact of a batch failed');
    }
    // A refused send is settled for its lead alone, after the recordings (nothing else then runs
    // on this connection): it may escalate the lead in a transaction on it.
    for (const { x, answer } of refused)
      await settled(x.s, () => sender.sendFailed(db, x.s, x.turn, x.o.provider.name, answer));
    return results;
  } finally {
    await lock.release();
  }
}

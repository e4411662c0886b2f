import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { InboundEvent } from './messaging-provider.ts';
import type { Logger } from '../shared/logger.ts';
import { REPAIRED_TEXT_EVENT, repairedTextData } from '../shared/storable-text.ts';
import * as c from './conversation-queries.ts';
import type { DeliveryStatuses, StatusOutcome } from './delivery-status.ts';
import * as m from './message-queries.ts';
import { inboundIntent } from './opt-out.ts';
import { recordOptOut } from '../leads/lead-opt-out.ts';
import { handOverUntilRetried } from './hand-over.ts';

// What the lead sends us, once a webhook is authenticated and parsed: stored, and the lead's next
// turn enqueued in the same transaction (through the outbox, which the relay moves to pg-boss).
// Provider-neutral: whatsapp-webhook-service.ts handles Twilio's and Meta's differences.

export type MessageEvent = Extract<InboundEvent, { type: 'message' }>;
export type StatusEvent = Extract<InboundEvent, { type: 'status' }>;

/** On the timeline (and in the dashboard's alert) when a booked lead writes "Cancel". */
export const CANCEL_REASON = 'The lead asked to cancel the booking.';

/** The timeline's outcome when a lead the agent no longer answers writes (docs/WHATSAPP.md, "Inbound"). */
export const WROTE_AFTER_CLOSE = 'lead_wrote_after_close';

const wroteAfterClose = (status: string) =>
  `The lead wrote after the conversation was closed (${status}); the agent does not answer. A person reads it.`;
const WROTE_AFTER_OPT_OUT =
  'The lead wrote after opting out; nothing is sent to it, not even a reply from the dashboard. A person reads it.';

async function handOver(tx: PoolClient, lead: c.InboundLead, data: Record<string, unknown>): Promise<void> {
  const event = { type: 'conversation.escalated', data };
  const moved = await transitionLead(tx, { leadId: lead.id, to: 'needs_human', actor: 'system', event });
  if (!moved.ok) await recordLeadEvent(tx, lead.id, event.type, { ...data, status: lead.status, actor: 'system' });
}

export type InboundOutcome =
  | { kind: 'stored'; leadId: string; turnQueued: boolean; forPerson?: true }
  | { kind: 'opted_out'; leadId: string; forPerson?: true }
  | { kind: 'duplicate' }
  | { kind: 'unknown_sender' };

export type { StatusOutcome };

export interface InboundDeps {
  pool: Pool;
  log: Logger;
  /** The delivery statuses' batched statement (one per process, src/composition.ts). */
  statuses: DeliveryStatuses;
  /** Called after a commit that queued a turn (the relay moves it into pg-boss at once). */
  wake: () => void;
}

export class InboundService {
  readonly #d: InboundDeps;

  constructor(deps: InboundDeps) {
    this.#d = deps;
  }

  /** `livemode` false: a message to the sandbox, for the workspace's sandbox lead with that phone. */
  async receiveMessage(
    workspaceId: string,
    provider: m.Provider,
    e: MessageEvent,
    log: Logger = this.#d.log,
    livemode = true,
  ): Promise<InboundOutcome> {
    const outcome = await withTransaction(this.#d.pool, (tx) => this.#store(tx, workspaceId, livemode, provider, e));
    if (outcome.kind === 'stored' && outcome.turnQueued) this.#d.wake();
    if ('forPerson' in outcome)
      log.info(
        { workspaceId, leadId: outcome.leadId, outcome: WROTE_AFTER_CLOSE },
        'whatsapp message left for a person',
      );
    // The sender's number stays out of the log; the lead id says who it was when known.
    log.info(
      { workspaceId, provider, outcome: outcome.kind, ...('leadId' in outcome ? { leadId: outcome.leadId } : {}) },
      'whatsapp message received',
    );
    return outcome;
  }

  async #store(
    tx: PoolClient,
    workspaceId: string,
    livemode: boolean,
    provider: m.Provider,
    e: MessageEvent,
  ): Promise<InboundOutcome> {
    const lead = await c.lockLeadByPhone(tx, workspaceId, livemode, e.from);
    if (!lead) return { kind: 'unknown_sender' };
    const messageId = await m.insertInbound(tx, {
      leadId: lead.id,
      provider,
      providerMessageId: e.providerMessageId,
      text: e.text,
      receivedAt: e.receivedAt,
    });
    if (messageId === null) return { kind: 'duplicate' };
    await c.touchLastInbound(tx, lead.id, e.receivedAt);
    await recordLeadEvent(tx, lead.id, 'message.received', { messageId, actor: 'lead' });
    if (e.textRepaired)
      await recordLeadEvent(
        tx,
        lead.id,
        REPAIRED_TEXT_EVENT,
        repairedTextData(provider, 'whatsapp message', { messageId }),
      );
    // Nothing is ever sent to a lead that opted out, nor to a booked or unqualified one by the agent;
    // what they write still needs a person's eyes. The status stays: those outcomes are an
    // operator's to change (a lead still `new` or `in_conversation` goes to a person).
    const leftForPerson = async (reason: string) =>
      handOverUntilRetried(tx, lead.id, { outcome: WROTE_AFTER_CLOSE, reason, messageId });
    if (lead.optedOutAt) {
      await leftForPerson(WROTE_AFTER_OPT_OUT);
      return { kind: 'opted_out', leadId: lead.id, forPerson: true };
    }
    const intent = inboundIntent(e.text, lead);
    if (intent === 'opt_out') {
      // Already booked or with a person: the status stays, the opt-out is on record and nothing more is sent.
      await recordOptOut(tx, { leadId: lead.id, actor: 'system', data: { messageId, via: 'keyword' } });
      return { kind: 'opted_out', leadId: lead.id };
    }
    if (intent === 'cancel_booking') {
      // "Cancel" from a lead with a booking means the booking, not the channel. The agent has no
      // tool to cancel (and a booked lead gets no more turns), so a person takes it from here.
      await handOver(tx, lead, { reason: CANCEL_REASON, outcome: 'booking_cancel_requested', messageId });
      return { kind: 'stored', leadId: lead.id, turnQueued: false };
    }
    // A lead with a person waits for the operator (it is in the waiting view already).
    if (lead.status === 'needs_human') return { kind: 'stored', leadId: lead.id, turnQueued: false };
    // Booked and unqualified leads get no more turns.
    if (lead.status !== 'new' && lead.status !== 'in_conversation') {
      await leftForPerson(wroteAfterClose(lead.status));
      return { kind: 'stored', leadId: lead.id, turnQueued: false, forPerson: true };
    }
    const turnQueued = await c.requestTurn(tx, lead.id, workspaceId);
    return { kind: 'stored', leadId: lead.id, turnQueued };
  }

  /**
   * A delivery status, received for `workspaceId` in `livemode`: it applies to a message of theirs
   * only. `outboundKey` is our idempotency key when the callback carries it (Twilio's
   * StatusCallback URL does): it finds a message whose acceptance we never recorded because the
   * process died between the provider's answer and our commit.
   */
  async receiveStatus(
    workspaceId: string,
    provider: m.Provider,
    e: StatusEvent,
    outboundKey: string | null,
    log: Logger = this.#d.log,
    livemode = true,
  ): Promise<StatusOutcome> {
    const outcome = await this.#d.statuses.apply({
      workspaceId,
      livemode,
      provider,
      providerMessageId: e.providerMessageId,
      key: outboundKey,
      status: e.status,
      errorCode: e.errorCode,
      errorMessage: e.errorMessage,
      repaired: e.textRepaired
        ? { type: REPAIRED_TEXT_EVENT, data: repairedTextData(provider, 'delivery status') }
        : null,
    });
    const fields = { workspaceId, provider, status: e.status, outcome: outcome.kind };
    // Nothing of the status itself (ids, key, error text): it may be someone's probe of other workspaces.
    if (outcome.kind === 'unknown') log.warn(fields, 'whatsapp status for no message of this workspace ignored');
    else
      log.info(
        { ...fields, ...(outcome.kind === 'applied' ? { leadId: outcome.leadId } : {}) },
        'whatsapp status received',
      );
    return outcome;
  }
}

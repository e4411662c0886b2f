import { recordLeadEvent, transitionLead } from '../agent/lead-state.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import type { InboundEvent } from '../messaging/messaging-provider.ts';
import type { Logger } from '../shared/logger.ts';
import * as c from './conversation-queries.ts';
import * as m from './message-queries.ts';
import { isOptOut } from './opt-out.ts';

// What the lead sends us, once a webhook is authenticated and parsed: stored, and the lead's next
// turn enqueued in the same transaction (through the outbox, which the relay moves to pg-boss).
// Provider-neutral: whatsapp-webhook-service.ts handles Twilio's and Meta's differences.

export type MessageEvent = Extract<InboundEvent, { type: 'message' }>;
export type StatusEvent = Extract<InboundEvent, { type: 'status' }>;

export type InboundOutcome =
  | { kind: 'stored'; leadId: string; turnQueued: boolean }
  | { kind: 'opted_out'; leadId: string }
  | { kind: 'duplicate' }
  | { kind: 'unknown_sender' };

export type StatusOutcome = { kind: 'applied'; leadId: string } | { kind: 'ignored'; reason: 'unknown message' | 'stale status' };

/** Delivery errors that mean the 24-hour window was closed (Twilio, Meta). */
const WINDOW_ERROR_CODES = new Set(['63016', '131047']);

// Later statuses never move a message back (callbacks arrive out of order and repeat).
const RANK: Record<string, number> = { pending: 0, accepted: 1, queued: 1, sent: 2, delivered: 3, read: 4, failed: 5, undelivered: 5, cancelled: 6 };

export interface InboundDeps {
  pool: Pool;
  log: Logger;
  /** Called after a commit that queued a turn (the relay moves it into pg-boss at once). */
  wake: () => void;
}

export class InboundService {
  readonly #d: InboundDeps;

  constructor(deps: InboundDeps) {
    this.#d = deps;
  }

  async receiveMessage(workspaceId: string, provider: m.Provider, e: MessageEvent, log: Logger = this.#d.log): Promise<InboundOutcome> {
    const outcome = await withTransaction(this.#d.pool, (tx) => this.#store(tx, workspaceId, provider, e));
    if (outcome.kind === 'stored' && outcome.turnQueued) this.#d.wake();
    // The sender's number stays out of the log; the lead id says who it was when known.
    log.info({ workspaceId, provider, outcome: outcome.kind, ...('leadId' in outcome ? { leadId: outcome.leadId } : {}) }, 'whatsapp message received');
    return outcome;
  }

  async #store(tx: PoolClient, workspaceId: string, provider: m.Provider, e: MessageEvent): Promise<InboundOutcome> {
    const lead = await c.lockLeadByPhone(tx, workspaceId, e.from);
    if (!lead) return { kind: 'unknown_sender' };
    const messageId = await m.insertInbound(tx, { leadId: lead.id, provider, providerMessageId: e.providerMessageId, text: e.text, receivedAt: e.receivedAt });
    if (messageId === null) return { kind: 'duplicate' };
    await c.touchLastInbound(tx, lead.id, e.receivedAt);
    await recordLeadEvent(tx, lead.id, 'message.received', { messageId, actor: 'lead' });
    if (lead.optedOutAt) return { kind: 'opted_out', leadId: lead.id };
    if (isOptOut(e.text)) {
      await c.markOptedOut(tx, lead.id);
      const notes = 'Opted out on WhatsApp: the lead asked us to stop messaging them.';
      const moved = await transitionLead(tx, { leadId: lead.id, to: 'unqualified', actor: 'system', event: { type: 'lead.opted_out', data: { messageId } }, set: { qualificationNotes: notes } });
      // Already booked or with a person: the status stays, the opt-out is on record and nothing more is sent.
      if (!moved.ok) await recordLeadEvent(tx, lead.id, 'lead.opted_out', { messageId, status: lead.status, actor: 'system' });
      return { kind: 'opted_out', leadId: lead.id };
    }
    // A lead with a person waits for the operator; booked and unqualified leads get no more turns.
    if (lead.status !== 'new' && lead.status !== 'in_conversation') return { kind: 'stored', leadId: lead.id, turnQueued: false };
    const turnQueued = await c.requestTurn(tx, lead.id, workspaceId);
    return { kind: 'stored', leadId: lead.id, turnQueued };
  }

  /**
   * A delivery status. `outboundKey` is our idempotency key when the callback carries it (Twilio's
   * StatusCallback URL does): it finds a message whose acceptance we never recorded because the
   * process died between the provider's answer and our commit.
   */
  async receiveStatus(workspaceId: string, provider: m.Provider, e: StatusEvent, outboundKey: string | null, log: Logger = this.#d.log): Promise<StatusOutcome> {
    const outcome = await withTransaction(this.#d.pool, (tx) => this.#status(tx, provider, e, outboundKey));
    log.info({ workspaceId, provider, status: e.status, outcome: outcome.kind, ...(outcome.kind === 'applied' ? { leadId: outcome.leadId } : { reason: outcome.reason }) }, 'whatsapp status received');
    return outcome;
  }

  async #status(tx: PoolClient, provider: m.Provider, e: StatusEvent, outboundKey: string | null): Promise<StatusOutcome> {
    const msg = await m.lockOutbound(tx, provider, e.providerMessageId, outboundKey);
    if (!msg) return { kind: 'ignored', reason: 'unknown message' };
    if (msg.providerMessageId !== null && msg.providerMessageId !== e.providerMessageId) {
      // The same key, another provider message: the crash window sent it twice. Recorded once per copy.
      await recordLeadEvent(tx, msg.leadId, 'message.duplicate_send', { messageId: msg.id, status: e.status, actor: 'system' });
      return { kind: 'applied', leadId: msg.leadId };
    }
    if ((RANK[e.status] ?? 0) <= (RANK[msg.status] ?? 0)) return { kind: 'ignored', reason: 'stale status' };
    await m.updateOutboundStatus(tx, { id: msg.id, status: e.status, providerMessageId: e.providerMessageId, errorCode: e.errorCode ?? null, errorMessage: e.errorMessage ?? null });
    if (e.status === 'failed' || e.status === 'undelivered') await this.#deliveryFailed(tx, msg, e);
    return { kind: 'applied', leadId: msg.leadId };
  }

  // The lead never got our message: a person has to pick the conversation up.
  async #deliveryFailed(tx: PoolClient, msg: m.OutboundForStatus, e: StatusEvent): Promise<void> {
    const windowClosed = e.errorCode !== undefined && WINDOW_ERROR_CODES.has(e.errorCode);
    const data = {
      reason: windowClosed ? 'The 24-hour WhatsApp window was closed; the message was not delivered.' : 'A WhatsApp message could not be delivered.',
      outcome: windowClosed ? 'window_closed' : 'undelivered',
      messageId: msg.id,
      errorCode: e.errorCode ?? null,
    };
    // Only a conversation still in the agent's hands is escalated (a booked lead stays booked).
    const active = msg.leadStatus === 'new' || msg.leadStatus === 'in_conversation';
    const latest = active && (await m.isLatestOutbound(tx, msg.leadId, msg.id));
    const moved = latest ? await transitionLead(tx, { leadId: msg.leadId, to: 'needs_human', actor: 'system', event: { type: 'conversation.escalated', data } }) : null;
    if (!moved?.ok) await recordLeadEvent(tx, msg.leadId, 'message.failed', { ...data, actor: 'system' });
  }
}

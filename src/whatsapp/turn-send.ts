import { observeSpeedToLead } from '../metrics/metrics.ts';
import type { PoolClient } from '../db/pool.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { MessagingProvider, SendMessageRequest, SendMessageResult } from './messaging-provider.ts';
import { recordAcceptedSend } from './delivery-status.ts';
import type { TurnSubject } from './conversation-queries.ts';
import { CONTINUE, NO_SANDBOX, NO_WHATSAPP, type Step, type TurnContext } from './turn-context.ts';
import { acceptedSend, blockedReason, PROVIDER_REFUSED_SETTINGS, SEND_FAILED } from './turn-rules.ts';
import * as q from './turn-queries.ts';
import { isPlanTurn, skippedBecause } from './follow-up-turns.ts';
import { settleSuppressedSend } from './suppressed-send.ts';
import { handOverUntilRetried } from './hand-over.ts';
import { inTransaction } from '../leads/lead-lock.ts';
import { scrubText } from '../shared/logger.ts';

// The send path of a turn (docs/WHATSAPP.md): checks that the stored message may still go out,
// calls the provider, and records the accepted send or settles the refusal. Used by the turn of
// one lead and by the first contacts taken in batches (first-contacts.ts).

/** A message about to go out: the provider's client, the settings it runs on and the request. */
export interface Outgoing {
  provider: MessagingProvider;
  settings: WorkspaceSettings;
  request: SendMessageRequest;
}
export const isOutgoing = (x: Outgoing | Step): x is Outgoing => 'request' in x;
export type SendRefusal = Extract<SendMessageResult, { ok: false }>;

export class TurnSender {
  readonly #c: TurnContext;

  constructor(ctx: TurnContext) {
    this.#c = ctx;
  }

  /** `stored`: the turn's message when the caller has just written it. `lastAttempt`: the job has no retry left. */
  async send(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    signal?: AbortSignal,
    stored?: q.OutboundMessage,
    lastAttempt = false,
  ): Promise<Step> {
    const message = stored ?? (await q.findOutbound(db, turn.id));
    if (!message) return this.#c.end(db, turn, 'failed', 'message_missing');
    const ready = await this.readyToSend(db, s, turn, message);
    if (!isOutgoing(ready)) return ready;
    // Last moment to stop: past it the message is out and must be recorded.
    if (signal?.aborted) return { kind: 'retry', reason: 'stopped before the send' };
    const { answer, journaled } = await this.deliver(s, ready);
    const step = answer.ok
      ? this.#accepted(db, s, turn, message, answer.providerMessageId)
      : this.sendFailed(db, s, turn, ready.provider.name, answer, lastAttempt);
    return (await Promise.all([step, journaled]))[0];
  }

  /** What the send needs, or the step that replaces it (already sent, blocked, window closed, no settings). */
  async readyToSend(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    message: q.OutboundMessage,
  ): Promise<Outgoing | Step> {
    // A delivery callback reached us after a crash that lost the provider's answer: already sent.
    if (message.status !== 'pending' && message.providerMessageId)
      return this.#accepted(db, s, turn, message, message.providerMessageId);
    const blocked = blockedReason(s, turn);
    if (blocked) return this.#c.end(db, turn, 'cancelled', blocked);
    // A follow-up or nudge to a lead who has just written: the answer is due, not the reminder.
    // CONTINUE: the same job goes on to answer them (their own job may not have been queued).
    if (isPlanTurn(turn) && s.unanswered) return (await this.#c.end(db, turn, 'cancelled', 'lead_replied'), CONTINUE);
    if (turn.kind === 'reply' && this.#c.windowClosed(s)) {
      return this.#c.escalate(
        db,
        s,
        turn,
        'window_closed',
        'The 24-hour WhatsApp window closed before the answer could be sent.',
      );
    }
    const mode = await this.#c.mode(s);
    if (!mode) return { kind: 'dead', reason: NO_SANDBOX };
    const { settings } = mode;
    const provider = mode.providers.messaging(s.workspace, settings);
    if (!provider) return NO_WHATSAPP;
    return {
      provider,
      settings,
      request: { to: s.lead.phoneNormalized, content: message.content, idempotencyKey: message.idempotencyKey },
    };
  }

  // The provider's call; touches no lead row, so several run at once. The caller records the send
  // before it awaits the journal entry (the writer never rejects): a worker killed now resends less.
  async deliver(s: TurnSubject, o: Outgoing): Promise<{ answer: SendMessageResult; journaled: Promise<void> }> {
    const started = Date.now();
    const answer = await o.provider.send(o.request);
    const ms = Date.now() - started;
    const journaled = this.#c.journal.send({
      workspaceId: s.workspace.id,
      leadId: s.lead.id,
      provider: o.provider.name,
      request: o.request,
      result: answer,
      ms,
      secrets: this.#c.secrets(o.settings),
    });
    return { answer, journaled };
  }

  async #accepted(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    message: q.OutboundMessage,
    providerMessageId: string,
  ): Promise<Step> {
    const provider = (await this.#c.mode(s))?.settings.whatsapp?.provider ?? 'twilio';
    this.sentNow(s, turn, await recordAcceptedSend(db, acceptedSend(s, turn, message, provider, providerMessageId)));
    return CONTINUE;
  }

  /** `from`: the status the recording moved the lead from (`new`: this was its first contact). */
  sentNow(s: TurnSubject, turn: q.AgentTurn, from: string | null): void {
    if (from === 'new')
      observeSpeedToLead('whatsapp', s.lead.livemode, (Date.now() - s.lead.createdAt.getTime()) / 1000);
    this.#c.d.log.info({ leadId: s.lead.id, turnId: turn.id, kind: turn.kind }, 'whatsapp message sent');
  }

  async sendFailed(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    provider: string,
    r: SendRefusal,
    lastAttempt = false,
  ): Promise<Step> {
    this.#c.warn(s, {
      provider,
      kind: r.kind,
      message: r.message,
      ...(r.httpStatus ? { httpStatus: r.httpStatus } : {}),
      ...(r.code !== undefined ? { code: r.code } : {}),
    });
    // The do-not-contact gate's refusal: the lead is closed, the message row says why.
    if (r.code === 'do_not_contact') return settleSuppressedSend(db, s, turn);
    // A plan's follow-up the provider will not deliver now (a per-user limit, the closed window):
    // counted as skipped and the plan goes on to its next step (migrations/046), not retried.
    const skipped = isPlanTurn(turn) ? skippedBecause(r) : null;
    if (skipped) return this.#c.end(db, turn, 'failed', `skipped:${skipped}`);
    const status = r.httpStatus ? ` (HTTP ${r.httpStatus})` : '';
    const refusal = `${provider}${status}: ${scrubText(r.message).slice(0, 300)}`;
    switch (r.kind) {
      case 'transient':
        // Retried with back-off; on the job's last attempt the lead goes to a person and the job
        // to the dead-letter queue, the turn still ready: retrying it later sends the message.
        if (!lastAttempt) return { kind: 'retry', reason: r.message };
        return this.#untilRetried(
          db,
          s,
          turn,
          SEND_FAILED,
          `The provider kept failing to send the message (the last answer: ${refusal}). Once it works again, ` +
            "`leadintake jobs retry` with this job's id sends the message.",
        );
      case 'configuration':
        // Nothing changes until an operator fixes the settings: the lead goes to a person now, and
        // the turn stays ready, so retrying the dead job afterwards sends it.
        return this.#untilRetried(
          db,
          s,
          turn,
          PROVIDER_REFUSED_SETTINGS,
          `The provider refused the workspace's settings (credentials, sender or template): ${refusal}. ` +
            `Fix them with \`leadintake workspace update ${s.workspace.slug} --config FILE\` ` +
            '(`leadintake workspace verify` checks them), ' +
            "then `leadintake jobs retry` with this job's id sends the message.",
        );
      case 'window_closed':
        return this.#c.escalate(
          db,
          s,
          turn,
          'window_closed',
          'The 24-hour WhatsApp window is closed; the provider refused a free-form message.',
        );
      case 'recipient':
        return this.#c.escalate(
          db,
          s,
          turn,
          'recipient_unreachable',
          'The lead cannot be reached on WhatsApp at this number.',
        );
    }
  }

  /** The lead to a person, the turn left ready and the job dead-lettered for `leadintake jobs retry` (hand-over.ts). */
  async #untilRetried(db: PoolClient, s: TurnSubject, turn: q.AgentTurn, outcome: string, reason: string) {
    await inTransaction(db, (tx) => handOverUntilRetried(tx, s.lead.id, { outcome, reason, turnId: turn.id }));
    this.#c.d.log.warn({ leadId: s.lead.id, turnId: turn.id, outcome }, 'whatsapp turn escalated to a person');
    return { kind: 'dead' as const, reason };
  }
}

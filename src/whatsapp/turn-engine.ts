import { observeSpeedToLead } from '../metrics/metrics.ts';
import { agentConfigOf } from '../workspaces/agent-config.ts';
import { findAgentLead } from '../agent/agent-lead-queries.ts';
import { recordLeadEvent, TERMINAL_STATUSES, transitionLead } from '../leads/lead-state.ts';
import { buildAgentPrompt } from '../agent/prompt.ts';
import type { Pool, PoolClient } from '../db/pool.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { MessagingProvider, SendMessageRequest, SendMessageResult } from './messaging-provider.ts';
import type { Clock } from '../shared/clock.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { historyMessages } from './chat-history.ts';
import { ConversationLog, settingsSecrets } from './whatsapp-log.ts';
import type { IntegrationLogWriter } from '../integration-log/integration-log-writer.ts';
import { recordAcceptedSend, sendRecorder } from './delivery-status.ts';
import {
  loadTurnSubject,
  loadTurnSubjects,
  lockLeadRow,
  requestTurn,
  type TurnSubject,
} from './conversation-queries.ts';
import type { ConversationProviders } from './turn-providers.ts';
import { gated, type ModelGate } from '../agent/model-gate.ts';
import { AGENT_OFF, handOver, holdingMessageOf, planForFailure, type RetryResult } from './hand-over.ts';
import { inTransaction, lockLead, tryLockLeads } from '../leads/lead-lock.ts';
import { conversationHistory } from './message-queries.ts';
import { checkReply } from './reply-guard.ts';
import { generateReply } from './reply-generator.ts';
import { agentTurnsSinceOperator, AGENT_TURN_LIMIT, escalateAtTurnLimit } from './turn-cap.ts';
import * as q from './turn-queries.ts';
import { acceptedSend, blockedReason, firstContact, NOT_CONFIGURED } from './turn-rules.ts';

// One agent turn for one lead, run by the `agent-turn` job (docs/WHATSAPP.md). State-driven and
// checkpointed: whatever job runs for a lead first finishes the lead's unfinished turn (generate →
// store the message under its deterministic key → send → mark sent), then starts the next one if
// the lead wrote something nobody answered. A retry therefore resumes after the last finished
// step, and a job with nothing left to do ends at once.

/** What the job does next: complete, retry with back-off, or go to the dead-letter queue. */
export type TurnJobResult = { kind: 'done'; outcome: string } | RetryResult | { kind: 'dead'; reason: string };
type Step = { kind: 'continue' } | TurnJobResult;

/** The 24-hour customer-service window: free-form text only within it (Meta 131047, Twilio 63016). */
export const WINDOW_MS = 24 * 60 * 60 * 1000;
// A first contact, an answer and a spare: more work than that is left to a fresh job.
const MAX_STEPS = 8;

export interface TurnEngineDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  workspaces: WorkspaceService;
  providers: ConversationProviders;
  /** Where the conversation's provider traffic is written (one writer per process, src/composition.ts). */
  integrationLog: IntegrationLogWriter;
  /** OPENAI_API_KEY, masked in the integration log like the workspace's own keys. */
  globalLlmKey?: string;
  /** The simulated providers of sandbox leads; without it a sandbox lead's turn is dead-lettered, never run live. */
  sandbox?: Sandbox;
  /** MAX_AGENT_TURNS_PER_LEAD (src/whatsapp/turn-cap.ts); unset: no bound. */
  maxAgentTurns?: number;
  /**
   * Model calls limited per workspace (src/agent/model-gate.ts), and LLM_RETRY_AFTER_MAX_SECONDS in ms (hand-over.ts).
   */
  modelGate?: ModelGate;
  maxModelWaitMs?: number;
}

/** The settings and provider clients one lead's turn uses: the workspace's, or the sandbox's. */
type Mode = { settings: WorkspaceSettings; providers: ConversationProviders };

const CONTINUE: Step = { kind: 'continue' };
const firstContactResult = (step: Step): TurnJobResult =>
  step.kind === 'continue' ? { kind: 'done', outcome: 'first_contact_sent' } : step;

const stopped = (lost: AbortSignal): TurnJobResult => ({
  kind: 'retry',
  reason: lost.aborted ? 'database connection lost' : 'stopped while running',
});
const NO_SANDBOX = 'A sandbox lead reached a worker without a sandbox; it is never run with live providers.';
const done = (outcome: string): Step => ({ kind: 'done', outcome });

/** A message about to go out: the provider's client, the settings it runs on and the request. */
interface Outgoing {
  provider: MessagingProvider;
  settings: WorkspaceSettings;
  request: SendMessageRequest;
}
const isOutgoing = (x: Outgoing | Step): x is Outgoing => 'request' in x;

export class TurnEngine {
  readonly #d: TurnEngineDeps;
  readonly #journal: ConversationLog;

  constructor(deps: TurnEngineDeps) {
    this.#d = deps;
    this.#journal = new ConversationLog(deps.integrationLog);
  }

  /** The lead's pending work; waits while another turn of the lead runs. `lastAttempt`: a failing model hands over. */
  async run(leadId: string, signal?: AbortSignal, opts: { lastAttempt?: boolean } = {}): Promise<TurnJobResult> {
    // From the lock on, a new message must enqueue a job of its own: this one may already be past it.
    const lock = await lockLead(this.#d.pool, leadId, { startTurn: true });
    const db = lock.db;
    // The job's own signal (shutdown, expiry) or the loss of the lock's connection stops the turn.
    const stop = signal ? AbortSignal.any([signal, lock.lost]) : lock.lost;
    try {
      for (let i = 0; i < MAX_STEPS; i++) {
        if (stop.aborted) return stopped(lock.lost);
        const step = await this.#step(db, leadId, stop, opts.lastAttempt === true);
        if (step.kind !== 'continue') return step;
      }
      const subject = await loadTurnSubject(db, leadId);
      if (subject) await requestTurn(db, leadId, subject.workspace.id);
      return { kind: 'done', outcome: 'continued_in_next_job' };
    } finally {
      await lock.release();
    }
  }

  /**
   * The first contacts of several leads at once, for a batch of fetched jobs (docs/WHATSAPP.md,
   * "First contacts in batches"): one connection takes the leads' locks, one statement reads their
   * subjects and one stores their turns and templates; the sends run side by side, each recorded
   * as soon as its provider accepts it. It takes only leads whose job is a plain first contact (lock
   * free, no turn yet, nothing from the lead, nothing blocking, WhatsApp configured); the caller runs
   * the others one by one once this has released its locks.
   */
  async runFirstContacts(leadIds: string[], signal?: AbortSignal): Promise<Map<string, TurnJobResult>> {
    const results = new Map<string, TurnJobResult>();
    const lock = await tryLockLeads(this.#d.pool, leadIds);
    const db = lock.db;
    const stop = signal ? AbortSignal.any([signal, lock.lost]) : lock.lost;
    try {
      const due: { s: TurnSubject; contact: q.FirstContact }[] = [];
      for (const s of lock.leadIds.length > 0 ? await loadTurnSubjects(db, lock.leadIds) : []) {
        if (s.openTurn || s.anyTurn || s.unanswered || blockedReason(s, null)) continue;
        const whatsapp = (await this.#mode(s))?.settings.whatsapp;
        if (whatsapp) due.push({ s, contact: firstContact(s, whatsapp) });
      }
      if (due.length === 0 || stop.aborted) return results;
      const created = await q.createFirstContactTurns(
        db,
        due.map((d) => d.contact),
      );
      const outgoing: { s: TurnSubject; turn: q.AgentTurn; message: q.OutboundMessage; o: Outgoing }[] = [];
      for (const [i, { turn, message }] of created.entries()) {
        const s = due[i]!.s;
        const ready = await this.#readyToSend(db, s, turn, message);
        if (isOutgoing(ready)) outgoing.push({ s, turn, message, o: ready });
        else results.set(s.lead.id, firstContactResult(ready));
      }
      // Last moment to stop, as in #send: the stored turns are sent by the retries.
      if (stop.aborted) {
        for (const x of outgoing) results.set(x.s.lead.id, { kind: 'retry', reason: 'stopped before the send' });
        return results;
      }
      // Each accepted send recorded as soon as its provider call returns (with those that return
      // while a recording runs): a worker killed mid-batch sends again only the sends in flight.
      const record = sendRecorder(db);
      const refused: { x: (typeof outgoing)[number]; answer: Extract<SendMessageResult, { ok: false }> }[] = [];
      const sends = await Promise.allSettled(
        outgoing.map(async (x) => {
          const { answer, journaled } = await this.#deliver(x.s, x.o);
          if (!answer.ok) return void (await journaled, refused.push({ x, answer }));
          const send = acceptedSend(x.s, x.turn, x.message, x.o.settings.whatsapp!.provider, answer.providerMessageId);
          await this.#settled(results, x.s, async () => (this.#sentNow(x.s, x.turn, await record(send)), CONTINUE));
          await journaled;
        }),
      );
      // A lead whose send threw is left out of the results: its job runs on its own.
      for (const [i, r] of sends.entries()) {
        if (r.status === 'rejected')
          this.#d.log.error({ err: r.reason, leadId: outgoing[i]!.s.lead.id }, 'a first contact of a batch failed');
      }
      // A refused send is settled for its lead alone, after the recordings (nothing else then runs
      // on this connection): it may escalate the lead in a transaction on it.
      for (const { x, answer } of refused)
        await this.#settled(results, x.s, () => this.#sendFailed(db, x.s, x.turn, x.o.provider.name, answer));
      return results;
    } finally {
      await lock.release();
    }
  }

  /** A batch's lead settled by `work`; an error (a lost connection, say) retries that lead's job. */
  async #settled(results: Map<string, TurnJobResult>, s: TurnSubject, work: () => Promise<Step>): Promise<void> {
    try {
      results.set(s.lead.id, firstContactResult(await work()));
    } catch (err) {
      this.#d.log.error({ err, leadId: s.lead.id }, 'recording a first contact failed');
      results.set(s.lead.id, { kind: 'retry', reason: (err as Error).message ?? String(err) });
    }
  }

  async #step(db: PoolClient, leadId: string, signal: AbortSignal | undefined, lastAttempt: boolean): Promise<Step> {
    const subject = await loadTurnSubject(db, leadId);
    if (!subject) return done('lead_not_found');
    if (subject.openTurn) {
      const open = await q.findOpenTurn(db, leadId);
      if (open?.state === 'generating') return this.#generate(db, subject, open, signal, lastAttempt);
      if (open?.state === 'ready') return this.#send(db, subject, open, signal);
      return CONTINUE; // finished meanwhile (cannot happen under the lead lock; harmless)
    }
    const blocked = blockedReason(subject, null);
    // Switched off while the lead waits for an answer: the lead goes to a person (hand-over.ts).
    const off =
      blocked === 'agent_off' && subject.anyTurn && subject.unanswered && !TERMINAL_STATUSES.has(subject.lead.status);
    const turn = off
      ? await inTransaction(db, async (tx) => (await lockLeadRow(tx, leadId)) && (await q.startReplyTurn(tx, leadId)))
      : null;
    if (turn) return this.#escalate(db, subject, turn, 'agent_off', AGENT_OFF);
    if (blocked) return done(blocked);
    if (subject.anyTurn && !subject.unanswered) return done('nothing_to_answer');
    const mode = await this.#mode(subject);
    if (!mode) return { kind: 'dead', reason: NO_SANDBOX };
    const whatsapp = mode.settings.whatsapp;
    if (!whatsapp) return this.#notConfigured(db, subject);
    if (!subject.anyTurn) {
      const { turn, message } = await q.createFirstContactTurn(db, firstContact(subject, whatsapp));
      // Straight to the send: nothing about the lead changed since it was read.
      const sent = await this.#send(db, subject, turn, signal, message);
      // Sent, and nothing more to do: the job ends without reading the lead again, one round trip
      // less per first contact (docs/decisions/0004-record-sends-by-set.md). A message that arrives after
      // the lock was taken requests a job of its own (taking the lock cleared the lead's turn
      // request). One that was already waiting may have no job left (its job ended while the
      // agent was off): this job goes on to answer it, as before.
      return sent.kind === 'continue' && !subject.unanswered ? done('first_contact_sent') : sent;
    }
    const max = this.#d.maxAgentTurns;
    if (max !== undefined && (await agentTurnsSinceOperator(db, leadId)) >= max) {
      await inTransaction(db, async (tx) => {
        if (await lockLeadRow(tx, leadId)) await escalateAtTurnLimit(tx, subject, max);
      });
      return done(AGENT_TURN_LIMIT);
    }
    // The lead's row before its messages (docs/WHATSAPP.md, "Lock order"): an inbound webhook
    // locks the lead first too, and may wait on a message this claims (a provider's retry).
    const started = await inTransaction(
      db,
      async (tx) => (await lockLeadRow(tx, leadId)) && (await q.startReplyTurn(tx, leadId)),
    );
    return started ? CONTINUE : done('nothing_to_answer');
  }

  #windowClosed(s: TurnSubject): boolean {
    const last = s.lead.lastInboundAt;
    return last === null || this.#d.clock().getTime() - last.getTime() >= WINDOW_MS;
  }

  async #generate(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    signal: AbortSignal | undefined,
    lastAttempt: boolean,
  ): Promise<Step> {
    const blocked = blockedReason(s, turn);
    if (blocked === 'agent_off' && !TERMINAL_STATUSES.has(s.lead.status))
      return this.#escalate(db, s, turn, 'agent_off', AGENT_OFF);
    if (blocked) return this.#end(db, turn, 'cancelled', blocked);
    if (this.#windowClosed(s))
      return this.#escalate(
        db,
        s,
        turn,
        'window_closed',
        'The 24-hour WhatsApp window closed before the agent could answer.',
      );
    const mode = await this.#mode(s);
    if (!mode) return { kind: 'dead', reason: NO_SANDBOX };
    const { settings } = mode;
    const provider = settings.whatsapp?.provider;
    if (!provider)
      return { kind: 'dead', reason: 'WhatsApp is not configured for this workspace (no whatsapp section).' };
    const chat = gated(this.#d.modelGate, `${s.workspace.id}:${s.lead.livemode}`, mode.providers.chat(settings));
    const history = historyMessages(await conversationHistory(db, s.lead.id, turn.id), turn.id);
    const agent = agentConfigOf(s.workspace);
    const result = await generateReply({
      db,
      turnId: turn.id,
      transcript: turn.transcript,
      chat,
      history,
      signal,
      tools: this.#toolContext(s, mode),
      onModelCall: (request, result, ms) =>
        this.#journal.modelCall({
          workspaceId: s.workspace.id,
          leadId: s.lead.id,
          turnId: turn.id,
          request,
          result,
          ms,
          secrets: this.#secrets(settings),
        }),
      systemPrompt: async () => {
        const lead = await findAgentLead(db, s.workspace.id, s.lead.id);
        if (!lead) throw new Error('lead disappeared during its turn');
        return buildAgentPrompt({ agent, lead, channel: 'whatsapp', now: this.#d.clock() });
      },
    });
    switch (result.kind) {
      case 'text': {
        // The outbound guard: stored as one or more messages, put back to the model, or refused.
        const d = await checkReply(db, {
          leadId: s.lead.id,
          turn,
          provider,
          agent,
          text: result.text,
          finishReason: result.finishReason,
        });
        return d.kind === 'hand_over' ? this.#escalate(db, s, turn, d.outcome, d.reason) : CONTINUE;
      }
      case 'silent':
        await q.finishTurn(db, { turnId: turn.id, from: ['generating'], to: 'silent', modelCalls: 1 });
        return CONTINUE;
      case 'too_many_rounds':
        return this.#escalate(
          db,
          s,
          turn,
          'too_many_tool_rounds',
          'The agent did not reach an answer within its tool rounds.',
        );
      case 'model_failed': {
        const f = result.failure;
        this.#warn(s, {
          provider: 'llm',
          kind: f.kind,
          message: f.message,
          ...(f.httpStatus ? { httpStatus: f.httpStatus } : {}),
        });
        const plan = planForFailure(f, lastAttempt, this.#d.maxModelWaitMs ?? 600_000);
        return plan.kind === 'retry' ? plan : this.#escalate(db, s, turn, plan.outcome, plan.reason);
      }
    }
  }

  /** `stored`: the turn's message when the caller has just written it. */
  async #send(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    signal?: AbortSignal,
    stored?: q.OutboundMessage,
  ): Promise<Step> {
    const message = stored ?? (await q.findOutbound(db, turn.id));
    if (!message) return this.#end(db, turn, 'failed', 'message_missing');
    const ready = await this.#readyToSend(db, s, turn, message);
    if (!isOutgoing(ready)) return ready;
    // Last moment to stop: past it the message is out and must be recorded.
    if (signal?.aborted) return { kind: 'retry', reason: 'stopped before the send' };
    const { answer, journaled } = await this.#deliver(s, ready);
    const step = answer.ok
      ? this.#accepted(db, s, turn, message, answer.providerMessageId)
      : this.#sendFailed(db, s, turn, ready.provider.name, answer);
    return (await Promise.all([step, journaled]))[0];
  }

  /** What the send needs, or the step that replaces it (already sent, blocked, window closed, no settings). */
  async #readyToSend(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    message: q.OutboundMessage,
  ): Promise<Outgoing | Step> {
    // A delivery callback reached us after a crash that lost the provider's answer: already sent.
    if (message.status !== 'pending' && message.providerMessageId)
      return this.#accepted(db, s, turn, message, message.providerMessageId);
    const blocked = blockedReason(s, turn);
    if (blocked) return this.#end(db, turn, 'cancelled', blocked);
    if (turn.kind === 'reply' && this.#windowClosed(s)) {
      return this.#escalate(
        db,
        s,
        turn,
        'window_closed',
        'The 24-hour WhatsApp window closed before the answer could be sent.',
      );
    }
    const mode = await this.#mode(s);
    if (!mode) return { kind: 'dead', reason: NO_SANDBOX };
    const { settings } = mode;
    const provider = mode.providers.messaging(s.workspace, settings);
    if (!provider)
      return { kind: 'dead', reason: 'WhatsApp is not configured for this workspace (no whatsapp section).' };
    return {
      provider,
      settings,
      request: { to: s.lead.phoneNormalized, content: message.content, idempotencyKey: message.idempotencyKey },
    };
  }

  // The provider's call; touches no lead row, so several run at once. The caller records the send
  // before it awaits the journal entry (the writer never rejects): a worker killed now resends less.
  async #deliver(s: TurnSubject, o: Outgoing): Promise<{ answer: SendMessageResult; journaled: Promise<void> }> {
    const started = Date.now();
    const answer = await o.provider.send(o.request);
    const ms = Date.now() - started;
    const journaled = this.#journal.send({
      workspaceId: s.workspace.id,
      leadId: s.lead.id,
      provider: o.provider.name,
      request: o.request,
      result: answer,
      ms,
      secrets: this.#secrets(o.settings),
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
    const provider = (await this.#mode(s))?.settings.whatsapp?.provider ?? 'twilio';
    this.#sentNow(s, turn, await recordAcceptedSend(db, acceptedSend(s, turn, message, provider, providerMessageId)));
    return CONTINUE;
  }

  /** `from`: the status the recording moved the lead from (`new`: this was its first contact). */
  #sentNow(s: TurnSubject, turn: q.AgentTurn, from: string | null): void {
    if (from === 'new') observeSpeedToLead('whatsapp', (Date.now() - s.lead.createdAt.getTime()) / 1000);
    this.#d.log.info({ leadId: s.lead.id, turnId: turn.id, kind: turn.kind }, 'whatsapp message sent');
  }

  async #sendFailed(
    db: PoolClient,
    s: TurnSubject,
    turn: q.AgentTurn,
    provider: string,
    r: Extract<SendMessageResult, { ok: false }>,
  ): Promise<Step> {
    this.#warn(s, {
      provider,
      kind: r.kind,
      message: r.message,
      ...(r.httpStatus ? { httpStatus: r.httpStatus } : {}),
      ...(r.code !== undefined ? { code: r.code } : {}),
    });
    switch (r.kind) {
      case 'transient':
        return { kind: 'retry', reason: r.message };
      case 'configuration':
        // Nothing changes until an operator fixes the settings; the turn stays ready, so retrying
        // the dead job afterwards sends it.
        return { kind: 'dead', reason: `${provider} refused the workspace's settings: ${r.message}` };
      case 'window_closed':
        return this.#escalate(
          db,
          s,
          turn,
          'window_closed',
          'The 24-hour WhatsApp window is closed; the provider refused a free-form message.',
        );
      case 'recipient':
        return this.#escalate(
          db,
          s,
          turn,
          'recipient_unreachable',
          'The lead cannot be reached on WhatsApp at this number.',
        );
    }
  }

  /**
   * A live lead of a workspace without a `whatsapp` section: handed to a person with the reason on
   * its timeline (not left `new` for ever), and the job dead-lettered so that `leadintake jobs
   * retry` sends the first message once the settings are added.
   */
  async #notConfigured(db: PoolClient, s: TurnSubject): Promise<Step> {
    const reason = `WhatsApp is not configured for workspace ${s.workspace.slug} (no whatsapp section): add it with \`leadintake workspace update ${s.workspace.slug} --config FILE\`, then \`leadintake jobs retry\` with this job's id sends the first message.`;
    if (s.lead.status !== 'needs_human') {
      await inTransaction(db, async (tx) => {
        const data = { reason, outcome: NOT_CONFIGURED };
        const moved = await transitionLead(tx, {
          leadId: s.lead.id,
          to: 'needs_human',
          actor: 'system',
          event: { type: 'conversation.escalated', data },
        });
        if (!moved.ok)
          await recordLeadEvent(tx, s.lead.id, 'conversation.escalated', {
            ...data,
            status: s.lead.status,
            actor: 'system',
          });
      });
    }
    return { kind: 'dead', reason };
  }

  /**
   * Hands the lead to a person, saying why, in one transaction (hand-over.ts). A turn that has no
   * message yet gets the holding message instead while the window is open: the next step sends it.
   */
  async #escalate(db: PoolClient, s: TurnSubject, turn: q.AgentTurn, outcome: string, reason: string): Promise<Step> {
    const provider =
      turn.state === 'generating' && !this.#windowClosed(s)
        ? (await this.#mode(s))?.settings.whatsapp?.provider
        : undefined;
    const holding = provider ? { provider, text: holdingMessageOf(agentConfigOf(s.workspace)) } : null;
    const stored = await inTransaction(db, (tx) => handOver(tx, { s, turn, outcome, reason, holding }));
    this.#d.log.warn(
      { leadId: s.lead.id, turnId: turn.id, outcome, holdingMessage: stored },
      'whatsapp turn escalated to a person',
    );
    return stored ? CONTINUE : done(outcome);
  }

  async #end(db: PoolClient, turn: q.AgentTurn, to: 'cancelled' | 'failed', outcome: string): Promise<Step> {
    await q.finishTurn(db, { turnId: turn.id, from: ['generating', 'ready'], to, outcome });
    return done(outcome);
  }

  // The integration log has the provider's whole answer; the process log a scrubbed line.
  #warn(
    s: TurnSubject,
    e: { provider: string; kind: string; message: string; httpStatus?: number; code?: string | number },
  ): void {
    this.#d.log.warn(
      {
        leadId: s.lead.id,
        workspaceId: s.workspace.id,
        provider: e.provider,
        kind: e.kind,
        httpStatus: e.httpStatus,
        code: e.code,
        detail: scrubText(e.message),
      },
      'whatsapp turn provider failure',
    );
  }

  #secrets(settings: WorkspaceSettings): string[] {
    return settingsSecrets(settings, this.#d.globalLlmKey);
  }

  #toolContext(s: TurnSubject, mode: Mode) {
    return {
      pool: this.#d.pool,
      leadId: s.lead.id,
      workspace: s.workspace,
      settings: mode.settings,
      scheduling: mode.providers.scheduling,
      clock: this.#d.clock,
      log: this.#d.log,
    };
  }

  /** A live lead runs on the workspace's settings; a sandbox lead on the sandbox's (null: no sandbox here). */
  async #mode(s: TurnSubject): Promise<Mode | null> {
    if (s.lead.livemode) return { settings: this.#d.workspaces.settingsOf(s.workspace), providers: this.#d.providers };
    if (!this.#d.sandbox) return null;
    const sb = await this.#d.sandbox.providers();
    return { settings: sb.settings, providers: sb.conversation };
  }
}

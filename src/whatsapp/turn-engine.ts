import { agentConfigOf } from '../workspaces/agent-config.ts';
import { findAgentLead } from '../agent/agent-lead-queries.ts';
import { TERMINAL_STATUSES } from '../leads/lead-state.ts';
import { buildAgentPrompt } from '../agent/prompt.ts';
import { withTransaction, type PoolClient } from '../db/pool.ts';
import { historyMessages } from './chat-history.ts';
import { loadTurnSubject, requestTurn, type TurnSubject } from './conversation-queries.ts';
import { gated } from '../agent/model-gate.ts';
import { AGENT_OFF, handOverUntilRetried, planForFailure } from './hand-over.ts';
import { scrubText } from '../shared/logger.ts';
import { inTransaction, lockLead, lockLeadRow } from '../leads/lead-lock.ts';
import { conversationHistory } from './message-queries.ts';
import { checkReply } from './reply-guard.ts';
import { generateReply } from './reply-generator.ts';
import { agentTurnsSinceOperator, AGENT_TURN_LIMIT, escalateAtTurnLimit } from './turn-cap.ts';
import * as q from './turn-queries.ts';
import { blockedReason, firstContact, NOT_CONFIGURED, TURN_FAILED } from './turn-rules.ts';
import {
  CONTINUE,
  done,
  type Mode,
  NO_SANDBOX,
  NO_WHATSAPP,
  type Step,
  TurnContext,
  type TurnEngineDeps,
  type TurnJobResult,
} from './turn-context.ts';
import { TurnSender } from './turn-send.ts';
import { runFirstContacts } from './first-contacts.ts';
import type { DeadTurn } from '../jobs/dead-letters.ts';
import { handOverDeadTurns } from './dead-turns.ts';
import { NUDGE_INSTRUCTION } from './follow-up-turns.ts';
import { replyOnSent, timedFrom } from '../contact-plan/whatsapp-ladder.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';

// One agent turn for one lead, run by the `agent-turn` job (docs/WHATSAPP.md). State-driven and
// checkpointed: whatever job runs for a lead first finishes the lead's unfinished turn (generate →
// store the message under its deterministic key → send → mark sent), then starts the next one if
// the lead wrote something nobody answered. A retry therefore resumes after the last finished
// step, and a job with nothing left to do ends at once. The send path is in turn-send.ts, the
// first contacts taken in batches in first-contacts.ts, what they share in turn-context.ts.

// A first contact, an answer and a spare: more work than that is left to a fresh job.
const MAX_STEPS = 8;

const stopped = (lost: AbortSignal): TurnJobResult => ({
  kind: 'retry',
  reason: lost.aborted ? 'database connection lost' : 'stopped while running',
});

export class TurnEngine {
  readonly #d: TurnEngineDeps;
  readonly #c: TurnContext;
  readonly #sender: TurnSender;

  constructor(deps: TurnEngineDeps) {
    this.#d = deps;
    this.#c = new TurnContext(deps);
    this.#sender = new TurnSender(this.#c);
  }

  /**
   * The lead's pending work; waits while another turn of the lead runs. `lastAttempt`: a failing
   * model or send hands the lead over instead of failing again.
   */
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
   * The job's last attempt failed with an error thrown out of run(): the lead goes to a person
   * (handOverUntilRetried) and the job is dead-lettered, for `leadintake jobs retry` once the
   * cause is fixed. Throws when the hand-over itself fails (the caller logs it).
   */
  async handOverFailedTurn(leadId: string, error: string): Promise<void> {
    const reason =
      `The agent's turn kept failing; the last time: ${scrubText(error).slice(0, 300)}. ` +
      "Once the cause is fixed, `leadintake jobs retry` with this job's id resumes the turn.";
    await withTransaction(this.#d.pool, (tx) => handOverUntilRetried(tx, leadId, { outcome: TURN_FAILED, reason }));
    this.#d.log.warn({ leadId, outcome: TURN_FAILED }, 'whatsapp turn escalated to a person');
  }

  /** Dead-lettered turns whose lead still waits: each such lead goes to a person (dead-turns.ts). */
  handOverDeadTurns(dead: DeadTurn[]): Promise<DeadTurn[]> {
    return handOverDeadTurns(this.#d.pool, dead);
  }

  /** The first contacts of several leads at once, for a batch of fetched jobs (first-contacts.ts). */
  runFirstContacts(leadIds: string[], signal?: AbortSignal): Promise<Map<string, TurnJobResult>> {
    return runFirstContacts(this.#c, this.#sender, leadIds, signal);
  }

  async #step(db: PoolClient, leadId: string, signal: AbortSignal | undefined, lastAttempt: boolean): Promise<Step> {
    const subject = await loadTurnSubject(db, leadId);
    if (!subject) return done('lead_not_found');
    if (subject.openTurn) {
      const open = await q.findOpenTurn(db, leadId);
      if (open?.state === 'generating') return this.#generate(db, subject, open, signal, lastAttempt);
      if (open?.state === 'ready') return this.#sender.send(db, subject, open, signal, undefined, lastAttempt);
      return CONTINUE; // finished meanwhile (cannot happen under the lead lock; harmless)
    }
    const blocked = blockedReason(subject, null);
    // Switched off while the lead waits for an answer: the lead goes to a person (hand-over.ts),
    // also one that wrote before its first contact went out (nothing will ever answer it otherwise).
    const off = blocked === 'agent_off' && subject.unanswered && !TERMINAL_STATUSES.has(subject.lead.status);
    const turn = off
      ? await inTransaction(db, async (tx) => (await lockLeadRow(tx, leadId)) && (await q.startReplyTurn(tx, leadId)))
      : null;
    if (turn) return this.#c.escalate(db, subject, turn, 'agent_off', AGENT_OFF);
    if (blocked) return done(blocked);
    if (subject.anyTurn && !subject.unanswered) return done('nothing_to_answer');
    const mode = await this.#c.mode(subject);
    if (!mode) return { kind: 'dead', reason: NO_SANDBOX };
    const whatsapp = mode.settings.whatsapp;
    if (!whatsapp) return this.#notConfigured(db, subject);
    if (!subject.anyTurn) {
      const { turn, message } = await q.createFirstContactTurn(db, firstContact(subject, whatsapp, this.#d.clock()));
      // Straight to the send: nothing about the lead changed since it was read.
      const sent = await this.#sender.send(db, subject, turn, signal, message, lastAttempt);
      // Sent, and nothing more to do: the job ends without reading the lead again, one round trip
      // less per first contact (docs/decisions/0004-record-sends-by-set.md). A message that arrives after
      // the lock was taken requests a job of its own (taking the lock cleared the lead's turn
      // request). One that was already waiting may have no job of its own (its request was this
      // job's): this job goes on to answer it, as before.
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
    // Its send schedules the nudge should the lead fall silent (docs/FOLLOW-UP.md).
    const nudge = replyOnSent(contactPlanOf(agentConfigOf(subject.workspace)).whatsapp, subject.lead.livemode);
    const onSent = nudge && timedFrom(nudge, this.#d.clock());
    const started = await inTransaction(
      db,
      async (tx) => (await lockLeadRow(tx, leadId)) && (await q.startReplyTurn(tx, leadId, onSent)),
    );
    return started ? CONTINUE : done('nothing_to_answer');
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
      return this.#c.escalate(db, s, turn, 'agent_off', AGENT_OFF);
    if (blocked) return this.#c.end(db, turn, 'cancelled', blocked);
    // A nudge that can no longer go out free-form: skipped, the plan moves on (migrations/046).
    if (turn.kind === 'nudge' && s.unanswered)
      return (await this.#c.end(db, turn, 'cancelled', 'lead_replied'), CONTINUE);
    if (turn.kind === 'nudge' && this.#c.windowClosed(s))
      return this.#c.end(db, turn, 'failed', 'skipped:window_closed');
    if (this.#c.windowClosed(s))
      return this.#c.escalate(
        db,
        s,
        turn,
        'window_closed',
        'The 24-hour WhatsApp window closed before the agent could answer.',
      );
    const mode = await this.#c.mode(s);
    if (!mode) return { kind: 'dead', reason: NO_SANDBOX };
    const { settings } = mode;
    const provider = settings.whatsapp?.provider;
    if (!provider) return NO_WHATSAPP;
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
        this.#c.journal.modelCall({
          workspaceId: s.workspace.id,
          leadId: s.lead.id,
          turnId: turn.id,
          request,
          result,
          ms,
          secrets: this.#c.secrets(settings),
        }),
      systemPrompt: async () => {
        const lead = await findAgentLead(db, s.workspace.id, s.lead.id);
        if (!lead) throw new Error('lead disappeared during its turn');
        const prompt = buildAgentPrompt({ agent, lead, channel: 'whatsapp', now: this.#d.clock() });
        return turn.kind === 'nudge' ? `${prompt}\n\n${NUDGE_INSTRUCTION}` : prompt;
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
        return d.kind === 'hand_over' ? this.#c.escalate(db, s, turn, d.outcome, d.reason) : CONTINUE;
      }
      case 'silent':
        await q.finishTurn(db, { turnId: turn.id, from: ['generating'], to: 'silent', modelCalls: 1 });
        return CONTINUE;
      case 'empty':
        // Not a failure to retry: the model answered, with nothing (docs/WHATSAPP.md, "When something fails").
        return this.#c.escalate(
          db,
          s,
          turn,
          'model_answer_unusable',
          'The chat model answered with neither text nor a tool call.',
        );
      case 'too_many_rounds':
        return this.#c.escalate(
          db,
          s,
          turn,
          'too_many_tool_rounds',
          'The agent did not reach an answer within its tool rounds.',
        );
      case 'model_failed': {
        const f = result.failure;
        this.#c.warn(s, {
          provider: 'llm',
          kind: f.kind,
          message: f.message,
          ...(f.httpStatus ? { httpStatus: f.httpStatus } : {}),
        });
        const plan = planForFailure(f, lastAttempt, this.#d.maxModelWaitMs ?? 600_000);
        return plan.kind === 'retry' ? plan : this.#c.escalate(db, s, turn, plan.outcome, plan.reason);
      }
    }
  }

  /**
   * A live lead of a workspace without a `whatsapp` section: handed to a person with the reason on
   * its timeline (not left `new` for ever), and the job dead-lettered so that `leadintake jobs
   * retry` sends the first message once the settings are added.
   */
  async #notConfigured(db: PoolClient, s: TurnSubject): Promise<Step> {
    const reason =
      `WhatsApp is not configured for workspace ${s.workspace.slug} (no whatsapp section): ` +
      `add it with \`leadintake workspace update ${s.workspace.slug} --config FILE\`, ` +
      "then `leadintake jobs retry` with this job's id sends the first message.";
    if (s.lead.status !== 'needs_human')
      await inTransaction(db, (tx) => handOverUntilRetried(tx, s.lead.id, { outcome: NOT_CONFIGURED, reason }));
    return { kind: 'dead', reason };
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
}

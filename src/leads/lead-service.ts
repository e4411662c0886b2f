import type { RateLimitDecision, RateLimiter } from '../auth/rate-limiter.ts';
import { countLeadCreated, countLeadTransition, observeSpeedToLead } from '../metrics/metrics.ts';
import { DO_NOT_CONTACT, closeSuppressedLead } from '../contact-plan/suppression.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import type { OutboxRelay } from '../jobs/outbox-relay.ts';
import { AppError } from '../shared/errors.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
import type { Clock } from '../shared/clock.ts';
import { callSessionExists } from '../voice/call-session-queries.ts';
import { callRequest, type Dial } from '../voice/call-request.ts';
import type { CallOptions, SandboxDial } from '../voice/voice-channel.ts';
import { firstCallPlan } from '../voice/first-call.ts';
import type { VoiceProvider } from '../voice/voice-provider.ts';
import { firstContactAfter } from '../contact-plan/first-contact-window.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import type { VapiSettings, WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { LeadBatches } from './lead-batch-statement.ts';
import { parseLeadBody, type LeadSubmission } from './lead-submission.ts';
import * as q from './lead-queries.ts';

export type SubmitResult =
  | { channel: 'whatsapp'; leadId: string }
  | { channel: 'voice'; leadId: string; providerCallId: string }
  /** A number on the do-not-contact list: stored, closed, not called. */
  | { channel: 'voice'; leadId: string; providerCallId: null };

/** The API key a request came with (as the authenticator found it), and who hears its count. */
export interface Caller {
  apiKeyId: string;
  hourlyLimit: number;
  workspace: WorkspaceRow;
  /** The key's mode: false reads and submits sandbox leads (every provider simulated, docs/SANDBOX.md). */
  livemode: boolean;
  /** Told the key's count as soon as it is known, so every answer after it carries the RateLimit headers. */
  onCounted(decision: RateLimitDecision): void;
}

export interface SubmissionContext extends Caller {
  settings: () => WorkspaceSettings;
  clientIp: string | null;
  userAgent: string | null;
  /** A lead from the hosted form, the embed, a publishable key or a connected source (docs/INTAKE.md). */
  intake?: q.LeadIntake;
  /**
   * Not counted against the key's quota: the hosted form and the embed, which the form's own
   * hourly limits (per address, and its `hourlyLimit`) admitted already. Their key is shared with
   * the connected sources, whose limit it stays.
   */
  uncounted?: true;
}

export interface LeadServiceDeps {
  pool: Pool;
  /** Counts every request against its key's hourly quota (src/auth/rate-limiter.ts). */
  rateLimiter: RateLimiter;
  /** The public API's lead inserts and reads, batched across requests and workspaces. */
  batches: LeadBatches;
  log: Logger;
  voice: VoiceProvider;
  relay: OutboxRelay;
  /** Our server URL, its credentials and tools for a call (src/voice/voice-channel.ts). */
  callOptions?: (workspace: WorkspaceRow, voice: VapiSettings) => CallOptions;
  /** Sandbox leads are called through this instead: the simulated Vapi, never the workspace's (docs/SANDBOX.md). */
  sandboxDial?: () => Promise<SandboxDial>;
  /** When "now" is for the first call's calling window (tests move it); the system clock otherwise. */
  clock?: Clock;
}

/** Lead intake: knows the channels' rules, nothing of HTTP. */
export class LeadService {
  readonly #d: LeadServiceDeps;

  constructor(deps: LeadServiceDeps) {
    this.#d = deps;
  }

  /**
   * Counts the request against its key's quota (`rate_limited` when it is over; not when
   * `uncounted`), then validates `body` (the POST's text), then stores the lead. The quota is
   * checked first: a bad body over the quota is a 429, and a bad body within it counts
   * (docs/API.md, "Rate limit").
   */
  async submit(body: unknown, ctx: SubmissionContext): Promise<SubmitResult> {
    if (!ctx.uncounted) await this.count(ctx);
    const s = parseLeadBody(body, ctx.workspace.agent?.defaultCountry);
    const result =
      ctx.workspace.channel === 'voice' ? await this.#submitVoice(s, ctx) : await this.#submitWhatsapp(s, ctx);
    countLeadCreated(result.channel, ctx.livemode);
    this.#reportUnknownQuestions(s, ctx.workspace, result.leadId);
    return result;
  }

  // A form keeps sending the question ids its builder gave it; a question deleted since must not
  // cost a lead, so unknown ids are stored as sent and only reported. Only the ids are logged
  // (masked like free text, in case a form puts something personal in a key), never answers.
  #reportUnknownQuestions(s: LeadSubmission, workspace: WorkspaceRow, leadId: string): void {
    const questions = workspace.agent?.questions;
    // Without an agent config there is no form to compare with.
    if (!questions || !s.formResponses) return;
    const known = new Set(questions.map((q) => q.id));
    const unknown = Object.keys(s.formResponses).filter((id) => !known.has(id));
    if (unknown.length === 0) return;
    this.#d.log.warn(
      {
        leadId,
        workspaceId: workspace.id,
        unknownQuestionIds: unknown.slice(0, 20).map((id) => scrubText(id.slice(0, 64))),
      },
      'formResponses has unknown question ids; kept as sent',
    );
  }

  /**
   * Counts one request of the caller's key (every authenticated request counts, whatever its
   * outcome) and tells the caller; throws `rate_limited` when it is over the key's hourly limit.
   */
  async count(caller: Caller): Promise<void> {
    const decision = await this.#d.rateLimiter.admit(caller.apiKeyId, caller.hourlyLimit);
    caller.onCounted(decision);
    if (!decision.allowed) throw new AppError('rate_limited', { retryAfterSeconds: decision.resetSeconds });
  }

  /** Tells the caller its key's quota without counting the request (one refused before it counts). */
  async standing(caller: Caller): Promise<void> {
    caller.onCounted(await this.#d.rateLimiter.peek(caller.apiKeyId, caller.hourlyLimit));
  }

  /**
   * GET /api/public/leads/:id: counts the request, then reads the lead in the caller's workspace
   * and mode (with its latest call in a voice workspace); `lead_not_found` for an id no lead of
   * theirs has, whatever its form.
   */
  async read(id: string, caller: Caller): Promise<q.LeadWithCall> {
    await this.count(caller);
    const found = UUID.test(id)
      ? await this.#d.batches.read({
          leadId: id,
          workspaceId: caller.workspace.id,
          livemode: caller.livemode,
          withCall: caller.workspace.channel === 'voice',
        })
      : null;
    if (!found) throw new AppError('lead_not_found');
    return found;
  }

  async #submitWhatsapp(s: LeadSubmission, ctx: SubmissionContext): Promise<SubmitResult> {
    const lead = newLead(s, ctx);
    lead.firstTurnAfter = await firstContactAfter(
      ctx.workspace.agent,
      { phoneE164: lead.phoneNormalized, metadata: lead.metadata },
      this.#now(),
    );
    const result = await this.#d.batches.insert(lead);
    if (result.kind !== 'inserted') throw await this.#duplicate(lead, result.leadId);
    // The lead and its outbox row are committed: wake the relay to hand the turn to pg-boss.
    this.#d.relay.wake();
    return { channel: 'whatsapp', leadId: result.leadId };
  }

  // The lead is reserved first (committed), so the unique index decides duplicates before
  // anyone is called; then the provider is called with no transaction or connection held;
  // then the outcome is recorded. A rejected call deletes the reservation. The reservation has
  // no `lead.created` entry: the transaction that keeps the lead writes it (and so its webhook),
  // so a lead answered 502 for was never announced (docs/OUTBOUND-WEBHOOKS.md).
  async #submitVoice(s: LeadSubmission, ctx: SubmissionContext): Promise<SubmitResult> {
    const dial = await this.#dial(ctx);
    const vapi = dial.settings;
    if (!vapi) {
      throw new AppError('voice_dispatch_failed', { message: 'Voice provider is not configured for this workspace.' });
    }
    const lead = newLead(s, ctx);
    const leadId = await q.insertLead(this.#d.pool, lead);
    if (!leadId) throw await this.#duplicate(lead);
    const reservedAt = performance.now();

    let result;
    try {
      const callLead = {
        leadId,
        name: s.name,
        phoneE164: lead.phoneNormalized,
        email: s.email ?? null,
        goal: s.goal ?? null,
        metadata: (s.metadata ?? null) as Record<string, unknown> | null,
        formResponses: s.formResponses ?? null,
      };
      const plan = await firstCallPlan(ctx.workspace, callLead, this.#now(), ctx.livemode);
      result = await dial.provider.placeCall(callRequest({ ...dial, settings: vapi }, ctx.workspace, callLead, plan));
    } catch (err) {
      await q.deleteLead(this.#d.pool, leadId);
      throw err;
    }
    if (!result.ok && result.code === DO_NOT_CONTACT) {
      // Accepted, never called (docs/API.md, "A number on the do-not-contact list"): the lead is
      // kept, closed with the reason, and the 201 carries no call id.
      // Its `lead.created` first (the webhook shows the lead still `new`), then the close.
      await withTransaction(this.#d.pool, async (tx) => {
        await q.recordLeadCreated(tx, leadId);
        await closeSuppressedLead(tx, leadId, 'voice');
      });
      this.#d.log.info({ leadId }, 'number on the do-not-contact list: no call placed');
      return { channel: 'voice', leadId, providerCallId: null };
    }
    if (!result.ok) {
      await q.deleteLead(this.#d.pool, leadId);
      this.#d.log.info({ leadId, httpStatus: result.httpStatus }, 'voice provider rejected the call; lead rolled back');
      throw new AppError('voice_dispatch_failed', { message: result.message });
    }
    observeSpeedToLead('voice', ctx.livemode, (performance.now() - reservedAt) / 1000);
    try {
      await q.recordDispatchedCall(this.#d.pool, {
        leadId,
        providerCallId: result.providerCallId,
        callStatus: result.status,
      });
      countLeadTransition('new', 'in_conversation');
    } catch (err) {
      // Vapi's first status update can arrive before this commit; its handler then recorded the
      // call already (docs/VOICE.md, "Crash window"), and the submission succeeded all the same.
      const recorded =
        (err as { code?: string }).code === '23505' &&
        (await callSessionExists(this.#d.pool, leadId, result.providerCallId).catch(() => false));
      if (recorded) return { channel: 'voice', leadId, providerCallId: result.providerCallId };
      // The documented crash window: the provider placed the call but we could not record it.
      this.#d.log.error({ err, leadId, providerCallId: result.providerCallId }, 'call placed but not recorded');
      throw err;
    }
    return { channel: 'voice', leadId, providerCallId: result.providerCallId };
  }

  #now(): Date {
    return this.#d.clock?.() ?? new Date();
  }

  /** Who places the call: the workspace's Vapi for a live lead, the sandbox's simulated one otherwise. */
  async #dial(ctx: SubmissionContext): Promise<Dial> {
    if (ctx.livemode)
      return {
        provider: this.#d.voice,
        settings: ctx.settings().voice,
        ...(this.#d.callOptions ? { callOptions: this.#d.callOptions } : {}),
      };
    // Never a fallback to the live provider: without a sandbox, a sandbox lead fails.
    if (!this.#d.sandboxDial) throw new Error('sandbox lead submitted to a service built without a sandbox');
    return this.#d.sandboxDial();
  }

  async #duplicate(lead: q.NewLead, knownId: string | null = null): Promise<AppError> {
    const existing =
      knownId ?? (await q.findLeadIdByPhone(this.#d.pool, lead.workspaceId, lead.livemode, lead.phoneNormalized));
    return new AppError('duplicate_phone', existing ? { leadId: existing } : {});
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function newLead(s: LeadSubmission, ctx: SubmissionContext): q.NewLead {
  return {
    workspaceId: ctx.workspace.id,
    name: s.name,
    phone: s.phone,
    phoneNormalized: s.phoneNormalized,
    email: s.email ?? null,
    goal: s.goal ?? null,
    consentIp: ctx.clientIp,
    consentUserAgent: ctx.userAgent,
    metadata: (s.metadata ?? {}) as Record<string, unknown>,
    formResponses: s.formResponses ?? {},
    createdEvent: {
      channel: ctx.workspace.channel,
      apiKeyId: ctx.apiKeyId,
      ...(ctx.livemode ? {} : { livemode: false }),
      ...(ctx.intake && ctx.intake.source !== 'api' ? { source: ctx.intake.source } : {}),
    },
    livemode: ctx.livemode,
    apiKeyId: ctx.apiKeyId,
    ...(ctx.intake ? { intake: ctx.intake } : {}),
  };
}

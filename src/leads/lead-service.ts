import { countLeadCreated, countLeadTransition, observeSpeedToLead } from '../metrics/metrics.ts';
import type { Pool } from '../db/pool.ts';
import type { OutboxRelay } from '../jobs/outbox-relay.ts';
import { AppError } from '../shared/errors.ts';
import { scrubText, type Logger } from '../shared/logger.ts';
import type { QualificationQuestion } from '../agent/agent-config.ts';
import { callSessionExists } from '../voice/call-session-queries.ts';
import type { CallOptions, SandboxDial } from '../voice/voice-channel.ts';
import type { VoiceProvider } from '../voice/voice-provider.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import type { VapiSettings, WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { LeadOp, LeadOpResult } from './lead-batch-statement.ts';
import { renderMetadata } from './metadata-render.ts';
import type { LeadSubmission } from './lead-submission.ts';
import * as q from './lead-queries.ts';

export type SubmitResult =
  | { channel: 'whatsapp'; leadId: string }
  | { channel: 'voice'; leadId: string; providerCallId: string };

export interface SubmissionContext {
  /**
   * Counts the request against its key's quota (throws `rate_limited` when it is over) and, in
   * the same statement, runs `op`: a WhatsApp lead is committed by it (lead-batch-statement.ts).
   */
  admit(op?: LeadOp): Promise<LeadOpResult | undefined>;
  workspace: WorkspaceRow;
  settings: () => WorkspaceSettings;
  apiKeyId: string;
  /** The key's mode: false submits a sandbox lead (every provider simulated, docs/SANDBOX.md). */
  livemode: boolean;
  clientIp: string | null;
  userAgent: string | null;
}

export interface LeadServiceDeps {
  pool: Pool;
  log: Logger;
  voice: VoiceProvider;
  relay: OutboxRelay;
  /** Our server URL, its credentials and tools for a call (src/voice/voice-channel.ts). */
  callOptions?: (workspace: WorkspaceRow, voice: VapiSettings) => CallOptions;
  /** Sandbox leads are called through this instead: the simulated Vapi, never the workspace's (docs/SANDBOX.md). */
  sandboxDial?: () => Promise<SandboxDial>;
}

/** Lead intake: knows the channels' rules, nothing of HTTP. */
export class LeadService {
  readonly #d: LeadServiceDeps;

  constructor(deps: LeadServiceDeps) {
    this.#d = deps;
  }

  async submit(s: LeadSubmission, ctx: SubmissionContext): Promise<SubmitResult> {
    const result = ctx.workspace.channel === 'voice' ? await this.#submitVoice(s, ctx) : await this.#submitWhatsapp(s, ctx);
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
      { leadId, workspaceId: workspace.id, unknownQuestionIds: unknown.slice(0, 20).map((id) => scrubText(id.slice(0, 64))) },
      'formResponses has unknown question ids; kept as sent',
    );
  }

  /**
   * What GET /api/public/leads/:id reads (in the statement that counts it) for a key of this
   * workspace and mode; null for an id that cannot exist.
   */
  readOp(id: string, workspace: WorkspaceRow, livemode: boolean): LeadOp & { kind: 'read' } | null {
    if (!UUID.test(id)) return null;
    return { kind: 'read', leadId: id, workspaceId: workspace.id, livemode, withCall: workspace.channel === 'voice' };
  }

  async #submitWhatsapp(s: LeadSubmission, ctx: SubmissionContext): Promise<SubmitResult> {
    const lead = newLead(s, ctx);
    const result = await ctx.admit({ kind: 'insert', lead });
    if (result?.kind !== 'inserted') throw await this.#duplicate(lead, result?.kind === 'duplicate' ? result.leadId : null);
    // The lead and its outbox row are committed: wake the relay to hand the turn to pg-boss.
    this.#d.relay.wake();
    return { channel: 'whatsapp', leadId: result.leadId };
  }

  // The lead is reserved first (committed), so the unique index decides duplicates before
  // anyone is called; then the provider is called with no transaction or connection held;
  // then the outcome is recorded. A rejected call deletes the reservation.
  async #submitVoice(s: LeadSubmission, ctx: SubmissionContext): Promise<SubmitResult> {
    await ctx.admit();
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
      result = await dial.provider.placeCall({
        apiKey: vapi.apiKey,
        assistantId: vapi.assistantId,
        phoneNumberId: vapi.phoneNumberId,
        customer: { number: lead.phoneNormalized, name: s.name },
        variableValues: callVariables(s, leadId, ctx.workspace.agent?.questions),
        metadata: { leadId, workspaceId: ctx.workspace.id },
        ...dial.callOptions?.(ctx.workspace, vapi),
      });
    } catch (err) {
      await q.deleteLead(this.#d.pool, leadId);
      throw err;
    }
    if (!result.ok) {
      await q.deleteLead(this.#d.pool, leadId);
      this.#d.log.info({ leadId, httpStatus: result.httpStatus }, 'voice provider rejected the call; lead rolled back');
      throw new AppError('voice_dispatch_failed', { message: result.message });
    }
    observeSpeedToLead('voice', (performance.now() - reservedAt) / 1000);
    try {
      await q.recordDispatchedCall(this.#d.pool, { leadId, providerCallId: result.providerCallId, callStatus: result.status });
      countLeadTransition('new', 'in_conversation');
    } catch (err) {
      // Vapi's first status update can arrive before this commit; its handler then recorded the
      // call already (docs/VOICE.md, "Crash window"), and the submission succeeded all the same.
      const recorded = (err as { code?: string }).code === '23505' && (await callSessionExists(this.#d.pool, leadId, result.providerCallId).catch(() => false));
      if (recorded) return { channel: 'voice', leadId, providerCallId: result.providerCallId };
      // The documented crash window: the provider placed the call but we could not record it.
      this.#d.log.error({ err, leadId, providerCallId: result.providerCallId }, 'call placed but not recorded');
      throw err;
    }
    return { channel: 'voice', leadId, providerCallId: result.providerCallId };
  }

  /** Who places the call: the workspace's Vapi for a live lead, the sandbox's simulated one otherwise. */
  async #dial(ctx: SubmissionContext): Promise<{ provider: VoiceProvider; settings: VapiSettings | undefined; callOptions?: LeadServiceDeps['callOptions'] }> {
    if (ctx.livemode) return { provider: this.#d.voice, settings: ctx.settings().voice, ...(this.#d.callOptions ? { callOptions: this.#d.callOptions } : {}) };
    // Never a fallback to the live provider: without a sandbox, a sandbox lead fails.
    if (!this.#d.sandboxDial) throw new Error('sandbox lead submitted to a service built without a sandbox');
    return this.#d.sandboxDial();
  }

  async #duplicate(lead: q.NewLead, knownId: string | null = null): Promise<AppError> {
    const existing = knownId ?? (await q.findLeadIdByPhone(this.#d.pool, lead.workspaceId, lead.livemode, lead.phoneNormalized));
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
    createdEvent: { channel: ctx.workspace.channel, apiKeyId: ctx.apiKeyId, ...(ctx.livemode ? {} : { livemode: false }) },
    livemode: ctx.livemode,
    apiKeyId: ctx.apiKeyId,
  };
}

/**
 * The assistant's variables (`{{leadName}}` and so on) for a new call. `formResponses` is one
 * `label: answer` line per answer, in the form's order, with the workspace's question labels
 * (an id the form no longer has is shown as the id, after the others).
 */
export function callVariables(s: LeadSubmission, leadId: string, questions: readonly QualificationQuestion[] = []): Record<string, string> {
  return {
    leadId,
    leadName: s.name,
    leadFirstName: s.name.trim().split(/\s+/)[0] ?? s.name,
    leadEmail: s.email ?? '',
    leadGoal: s.goal ?? '',
    leadMetadata: renderMetadata(s.metadata as Record<string, unknown> | undefined),
    formResponses: formResponseLines(s.formResponses ?? {}, questions),
  };
}

function formResponseLines(responses: Record<string, string>, questions: readonly QualificationQuestion[]): string {
  const known = questions.filter((q) => Object.hasOwn(responses, q.id)).map((q) => [q.label, responses[q.id]!] as const);
  const ids = new Set(questions.map((q) => q.id));
  const unknown = Object.entries(responses).filter(([id]) => !ids.has(id));
  // One line per answer: line breaks inside an answer would read as another answer.
  return [...known, ...unknown].map(([label, answer]) => `${label}: ${answer.replace(/\s+/g, ' ').trim()}`).join('\n');
}

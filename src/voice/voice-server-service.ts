import { z } from 'zod';
import type { ToolContext } from '../agent/tool-registry.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { recordIntegrationEventSafely } from '../integration-log/integration-log.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { SchedulingProvider } from '../scheduling/scheduling-provider.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import { recordLeadEvent } from '../leads/lead-state.ts';
import { REPAIRED_TEXT_EVENT, repairedTextData } from '../shared/storable-text.ts';
import type { Logger } from '../shared/logger.ts';
import type { VapiSettings } from '../workspaces/workspace-config.ts';
import { findLiveWorkspaceBySlug, type WorkspaceRow } from '../workspaces/workspace-queries.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { applyCallEvent, findOrReconcileSession, VAPI_PROVIDER, type CallEventOutcome } from './call-events.ts';
import { findSessionLead } from './call-session-queries.ts';
import { parseVapiMessage, type VapiMessage } from './vapi/vapi-message.ts';
import { authenticateVapi } from './vapi/vapi-server-auth.ts';
import { serverAuthOf, voiceSecrets } from './vapi/vapi-server-settings.ts';
import { answerToolCalls, MISSING_TOOL_CALL_ID, NOT_LINKED, type ToolResult } from './vapi/vapi-tool-calls.ts';

// Vapi's server messages for one workspace (docs/VOICE.md): authenticate, parse, apply, answer,
// and keep a copy in the integration log. No HTTP here; voice-server-routes.ts is the thin handler.

export type VapiEndpoint = 'events' | 'tools';

export interface VapiServerDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  workspaces: WorkspaceService;
  scheduling: SchedulingProvider;
  /** How long a tool-calls message may take before tools still running are answered "still working". */
  toolDeadlineMs: number;
  /**
   * Set for the sandbox twin (under /sandbox): the simulated Vapi's messages, authenticated with
   * the sandbox's credentials, tools booked in the simulated Cal.com (docs/SANDBOX.md).
   */
  sandbox?: Sandbox;
}

interface Handled {
  body: Record<string, unknown>;
  outcome: string;
  leadId: string | null;
}

const slugSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

export class VapiServerService {
  readonly #d: VapiServerDeps;
  readonly #running = new Set<Promise<unknown>>();

  constructor(deps: VapiServerDeps) {
    this.#d = deps;
  }

  /** Answers one message; throws AppError for unknown workspaces, bad credentials and bad bodies. */
  async receive(
    slug: string,
    endpoint: VapiEndpoint,
    raw: Buffer,
    headers: Record<string, string | string[] | undefined>,
    log: Logger = this.#d.log,
  ): Promise<Record<string, unknown>> {
    const { workspace, voice } = await this.#voiceWorkspace(slug);
    const auth = authenticateVapi(serverAuthOf(workspace.id, voice), raw, headers, this.#d.clock());
    // Nothing is parsed, stored or logged in the integration log for an unauthenticated request.
    if (!auth.ok) {
      log.warn({ workspaceId: workspace.id, reason: auth.reason }, 'vapi message rejected');
      throw new AppError('webhook_signature_invalid');
    }
    const started = performance.now();
    const record = (entry: {
      kind: string;
      httpStatus: number;
      outcome: string;
      leadId?: string | null;
      request: unknown;
      response: unknown;
      error?: string;
    }) =>
      recordIntegrationEventSafely(this.#d.pool, log, {
        provider: VAPI_PROVIDER,
        workspaceId: workspace.id,
        leadId: entry.leadId ?? null,
        direction: 'in',
        kind: entry.kind,
        httpStatus: entry.httpStatus,
        outcome: entry.outcome,
        // How long we took to answer Vapi.
        latencyMs: performance.now() - started,
        error: entry.error ?? null,
        payload: { endpoint, request: entry.request, response: entry.response },
        secrets: voiceSecrets(workspace.id, voice),
      });
    let parsed: ReturnType<typeof parseVapiMessage>;
    try {
      parsed = parseVapiMessage(raw);
    } catch (err) {
      // The integration log makes the text storable (redact.ts).
      await record({
        kind: 'invalid',
        httpStatus: 400,
        outcome: 'invalid',
        request: raw.toString('utf8').slice(0, 64 * 1024),
        response: null,
        error: `Not a Vapi server message: ${(err as Error).message}`.slice(0, 300),
      });
      throw err;
    }
    const { message, json, repaired } = parsed;
    const handled = await this.#handle(workspace, message, repaired, log);
    await record({
      kind: kindOf(message),
      httpStatus: 200,
      outcome: handled.outcome,
      leadId: handled.leadId,
      request: json,
      response: handled.body,
    });
    log.info(
      { workspaceId: workspace.id, type: kindOf(message), outcome: handled.outcome, leadId: handled.leadId },
      'vapi message',
    );
    return handled.body;
  }

  /** Resolves when tools still running after their answer (past the deadline) have finished. */
  async idle(): Promise<void> {
    while (this.#running.size > 0) await Promise.allSettled([...this.#running]);
  }

  async #voiceWorkspace(slug: string): Promise<{ workspace: WorkspaceRow; voice: VapiSettings }> {
    if (!slugSchema.safeParse(slug).success) throw new AppError('workspace_not_found');
    const workspace = await findLiveWorkspaceBySlug(this.#d.pool, slug);
    const voice = workspace ? (await this.#settingsOf(workspace)).voice : undefined;
    // Without voice settings there is no secret to check against: the endpoint does not exist.
    if (!workspace || voice?.provider !== 'vapi') throw new AppError('workspace_not_found');
    return { workspace, voice };
  }

  async #settingsOf(workspace: WorkspaceRow) {
    return this.#d.sandbox ? (await this.#d.sandbox.providers()).settings : this.#d.workspaces.settingsOf(workspace);
  }

  async #handle(workspace: WorkspaceRow, message: VapiMessage, repaired: boolean, log: Logger): Promise<Handled> {
    const callId = message.call.callId;
    if (message.type === 'tool-calls') {
      const handled = await this.#toolCalls(workspace, message, log);
      if (repaired && handled.leadId)
        await recordLeadEvent(
          this.#d.pool,
          handled.leadId,
          REPAIRED_TEXT_EVENT,
          repairedTextData(VAPI_PROVIDER, message.type, { callId }),
        );
      return handled;
    }
    if (message.type === 'other')
      return { body: { ok: true, ignored: 'unsupported message' }, outcome: 'ignored', leadId: null };
    if (!callId) return { body: { ok: true, ignored: 'no call id' }, outcome: 'ignored', leadId: null };
    const event = { ...message, call: { ...message.call, callId } };
    const outcome = await withTransaction(this.#d.pool, async (tx) => {
      const applied = await applyCallEvent(tx, workspace.id, event, this.#d.clock());
      // Noted with the change it belongs to: a duplicate delivery changes nothing and notes nothing.
      if (repaired && applied.kind === 'applied')
        await recordLeadEvent(
          tx,
          applied.leadId,
          REPAIRED_TEXT_EVENT,
          repairedTextData(VAPI_PROVIDER, message.type, { callId }),
        );
      return applied;
    });
    return answerFor(outcome);
  }

  async #toolCalls(
    workspace: WorkspaceRow,
    message: Extract<VapiMessage, { type: 'tool-calls' }>,
    log: Logger,
  ): Promise<Handled> {
    const callId = message.call.callId;
    const leadId = callId
      ? ((await findSessionLead(this.#d.pool, workspace.id, callId)) ??
        (await withTransaction(
          this.#d.pool,
          async (tx) => (await findOrReconcileSession(tx, workspace.id, message.call, callId))?.leadId ?? null,
        )))
      : null;
    if (!callId || !leadId) {
      const results: ToolResult[] = message.toolCalls.map((c) =>
        c.id === null
          ? { toolCallId: '', name: c.name, error: MISSING_TOOL_CALL_ID }
          : { toolCallId: c.id, name: c.name, result: NOT_LINKED },
      );
      return { body: withError(results), outcome: 'unknown-call', leadId: null };
    }
    const ctx: ToolContext = {
      pool: this.#d.pool,
      leadId,
      workspace,
      settings: await this.#settingsOf(workspace),
      scheduling: this.#d.sandbox ? (await this.#d.sandbox.providers()).scheduling : this.#d.scheduling,
      clock: this.#d.clock,
      log,
      call: { providerCallId: callId, leadSaid: message.leadSaid },
    };
    const results = await answerToolCalls(ctx, callId, message.toolCalls, {
      deadlineMs: this.#d.toolDeadlineMs,
      track: (run) => {
        this.#running.add(run);
        void run.finally(() => this.#running.delete(run));
      },
    });
    return { body: withError(results), outcome: 'applied', leadId };
  }
}

/**
 * Vapi's answer; a call answered with an error (no id, an id reused for another tool) also sets the
 * message's `error`, which Vapi shows for the whole message: the first such error.
 */
function withError(results: ToolResult[]): Record<string, unknown> {
  const failed = results.find((r) => 'error' in r);
  return failed && 'error' in failed ? { results, error: failed.error } : { results };
}

function kindOf(m: VapiMessage): string {
  return m.type === 'other' ? m.name.slice(0, 100) : m.type;
}

function answerFor(outcome: CallEventOutcome): Handled {
  switch (outcome.kind) {
    case 'applied':
      return { body: { ok: true }, outcome: 'applied', leadId: outcome.leadId };
    case 'duplicate':
      return { body: { ok: true, duplicate: true }, outcome: 'duplicate', leadId: outcome.leadId };
    case 'unknown-call':
      // Answered 200 so Vapi does not retry; the message is kept in the integration log.
      return { body: { ok: true, ignored: 'unknown call' }, outcome: 'unknown-call', leadId: null };
  }
}

import type { ChatRequest, ChatResult } from '../agent/chat-model.ts';
import type { IntegrationLogWriter } from '../integration-log/integration-log-writer.ts';
import type { SendMessageRequest, SendMessageResult } from './messaging-provider.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';

// The WhatsApp channel's entries in the integration log (src/integration-log/): every model call and
// every send, as we made them and as they ended, and every webhook event we acted on. Secrets are
// masked by the log itself (by key name, and the workspace's own credentials by value). A failed
// write never fails the turn: the provider exchange has already happened. Entries are written by
// the process's batched writer, not on the caller's connection: a turn's lock is not needed for them.

/** The workspace's credentials, masked wherever they appear in a logged payload. */
export function settingsSecrets(settings: WorkspaceSettings, globalLlmKey?: string): string[] {
  const w = settings.whatsapp;
  const out = [settings.llm?.apiKey, globalLlmKey, settings.scheduling?.apiKey];
  if (w?.provider === 'twilio') out.push(w.authToken);
  if (w?.provider === 'meta') out.push(w.accessToken, w.appSecret, w.verifyToken);
  return out.filter((s): s is string => typeof s === 'string' && s !== '');
}

export class ConversationLog {
  readonly #writer: IntegrationLogWriter;

  constructor(writer: IntegrationLogWriter) {
    this.#writer = writer;
  }

  async modelCall(e: {
    workspaceId: string;
    leadId: string;
    turnId: number;
    request: ChatRequest;
    result: ChatResult;
    ms: number;
    secrets: string[];
  }): Promise<void> {
    const r = e.result;
    await this.#writer.record({
      provider: 'llm',
      workspaceId: e.workspaceId,
      leadId: e.leadId,
      direction: 'out',
      kind: 'POST /chat/completions',
      httpStatus: r.ok ? 200 : (r.httpStatus ?? null),
      // insufficient_quota here is the "why" of a lead handed to a person without an answer.
      outcome: r.ok ? (r.message.tool_calls?.length ? 'tool_calls' : 'answered') : r.kind,
      latencyMs: e.ms,
      error: r.ok ? null : `${r.kind}: ${r.message}`,
      payload: {
        turnId: e.turnId,
        ms: e.ms,
        request: {
          model: e.request.model,
          messages: e.request.messages,
          tools: e.request.tools?.map((t) => t.function.name) ?? [],
        },
        response: r.ok ? r.message : { error: r.kind, message: r.message },
      },
      secrets: e.secrets,
    });
  }

  async send(e: {
    workspaceId: string;
    leadId: string;
    provider: string;
    request: SendMessageRequest;
    result: SendMessageResult;
    ms: number;
    secrets: string[];
  }): Promise<void> {
    const r = e.result;
    await this.#writer.record({
      provider: e.provider,
      workspaceId: e.workspaceId,
      leadId: e.leadId,
      direction: 'out',
      kind: e.provider === 'twilio' ? 'POST /Messages.json' : 'POST /messages',
      httpStatus: r.ok ? null : (r.httpStatus ?? null),
      outcome: r.ok ? 'accepted' : r.kind,
      latencyMs: e.ms,
      error: r.ok ? null : `${r.kind}${r.code === undefined ? '' : ` (${r.code})`}: ${r.message}`,
      payload: { ms: e.ms, request: e.request, response: r },
      secrets: e.secrets,
    });
  }

  /**
   * A webhook event we received and what came of it (`leadId` when it matched one); `ms`: how long we took to act on
   * it.
   */
  async webhook(e: {
    workspaceId: string;
    leadId: string | null;
    provider: string;
    kind: string;
    outcome: string;
    payload: unknown;
    secrets: string[];
    ms?: number;
  }): Promise<void> {
    await this.#writer.record({
      provider: e.provider,
      workspaceId: e.workspaceId,
      leadId: e.leadId,
      direction: 'in',
      kind: e.kind,
      httpStatus: 200,
      outcome: e.outcome,
      latencyMs: e.ms ?? null,
      payload: e.payload,
      secrets: e.secrets,
    });
  }
}

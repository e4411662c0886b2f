import type { ChatModel } from '../agent/chat-model.ts';
import { OpenAIChatClient, type OpenAIChatClientOptions } from '../agent/openai/openai-chat-client.ts';
import type { Config } from '../config/config.ts';
import { MetaWhatsAppClient } from './meta/meta-client.ts';
import type { MessagingProvider } from './messaging-provider.ts';
import { TwilioClient } from './twilio/twilio-client.ts';
import type { SchedulingProvider } from '../scheduling/scheduling-provider.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import { modelEndpoint } from '../workspaces/model-endpoint.ts';

// Which provider clients a turn talks to, from the process config and the workspace's settings.
// An interface so tests can hand in clients with instant back-off; production uses
// defaultConversationProviders.

export interface ChatModelChoice {
  model: ChatModel;
  /** The model name sent with each request. */
  name: string;
}

export interface ConversationProviders {
  /** Null when the workspace has no `whatsapp` section. */
  messaging(workspace: WorkspaceRow, settings: WorkspaceSettings): MessagingProvider | null;
  chat(settings: WorkspaceSettings): ChatModelChoice;
  scheduling: SchedulingProvider;
}

/** The public path Twilio posts a workspace's delivery statuses to (whatsapp-webhook-routes.ts). */
export function twilioStatusPath(slug: string): string {
  return `/api/whatsapp/twilio/${slug}/status`;
}

/** The longest Retry-After a turn's model client waits out itself (holding a worker slot). */
const TURN_MAX_WAIT_MS = 2_000;

export function defaultConversationProviders(
  config: Config,
  opts: { chat?: Partial<Pick<OpenAIChatClientOptions, 'sleep' | 'maxRetries'>>; scheduling: SchedulingProvider },
): ConversationProviders {
  return {
    scheduling: opts.scheduling,
    messaging(workspace, settings) {
      const w = settings.whatsapp;
      if (!w) return null;
      if (w.provider === 'twilio') {
        return new TwilioClient({
          baseUrl: config.TWILIO_BASE_URL,
          accountSid: w.accountSid,
          authToken: w.authToken,
          from: w.from,
          templateContentSid: w.templateContentSid,
          statusCallbackUrl: `${config.PUBLIC_BASE_URL}${twilioStatusPath(workspace.slug)}`,
          timeoutMs: config.WHATSAPP_TIMEOUT_MS,
        });
      }
      return new MetaWhatsAppClient({
        baseUrl: config.WHATSAPP_GRAPH_BASE_URL,
        accessToken: w.accessToken,
        phoneNumberId: w.phoneNumberId,
        templateName: w.templateName,
        templateLanguage: w.templateLanguage,
        timeoutMs: config.WHATSAPP_TIMEOUT_MS,
      });
    },
    chat(settings) {
      const chosen = modelEndpoint(settings.llm, config);
      // Settings saved before the key rule: the turn fails with the reason, nothing is sent.
      if (!chosen.ok) return { model: refusing(chosen.problem), name: settings.llm?.model ?? config.LLM_MODEL };
      const e = chosen.endpoint;
      const model = new OpenAIChatClient({
        baseUrl: e.baseUrl,
        apiKey: e.apiKey,
        timeoutMs: config.LLM_TIMEOUT_MS,
        // A longer Retry-After is the turn worker's to honour by rescheduling the job, not by waiting.
        maxWaitMs: TURN_MAX_WAIT_MS,
        ...(e.egress ? { egress: e.egress } : {}),
        ...opts.chat,
      });
      return { model, name: e.model };
    },
  };
}

/** A model that answers every request with the reason it may not be used (a fatal failure). */
function refusing(problem: string): ChatModel {
  const message = `The chat model was not called: ${problem}.`;
  return { complete: async () => ({ ok: false, kind: 'fatal', message }) };
}

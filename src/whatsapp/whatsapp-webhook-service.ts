import { z } from 'zod';
import type { Pool } from '../db/pool.ts';
import { answerMetaVerification, verifyMetaSignature, type MetaVerificationAnswer } from './meta/meta-signature.ts';
import { parseMetaWebhook } from './meta/meta-webhook-parse.ts';
import { twilioWebhookUrl, verifyTwilioSignature } from './twilio/twilio-signature.ts';
import { parseTwilioForm, parseTwilioInbound, parseTwilioStatus } from './twilio/twilio-webhook-parse.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { Clock } from '../shared/clock.ts';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { WhatsappSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { ConversationLog, settingsSecrets } from './whatsapp-log.ts';
import type { IntegrationLogWriter } from '../integration-log/integration-log-writer.ts';
import type { InboundService, MessageEvent, StatusEvent } from './inbound-service.ts';

// WhatsApp webhooks of one workspace (URL per workspace slug): authenticate with the workspace's
// own credentials before anything is parsed, then hand each event to the inbound service. A
// message must also be addressed to the workspace's own number: events for another number are
// logged and dropped, never routed to this workspace's leads. No HTTP here (routes are thin).

const slugSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

type Twilio = Extract<WhatsappSettings, { provider: 'twilio' }>;
type Meta = Extract<WhatsappSettings, { provider: 'meta' }>;
interface Found {
  workspaceId: string;
  /** The workspace's credentials, masked in the integration log. */
  secrets: string[];
}

export interface WhatsappWebhookDeps {
  pool: Pool;
  log: Logger;
  clock: Clock;
  workspaces: WorkspaceService;
  inbound: InboundService;
  integrationLog: IntegrationLogWriter;
  /** Twilio signs the public URL it called: PUBLIC_BASE_URL + path and query. */
  publicBaseUrl: string;
  /**
   * Set for the sandbox twin of the webhooks (under /sandbox): it authenticates with the sandbox's
   * simulated credentials and routes to sandbox leads only (docs/SANDBOX.md).
   */
  sandbox?: Sandbox;
}

export class WhatsappWebhookService {
  readonly #d: WhatsappWebhookDeps;
  readonly #journal: ConversationLog;

  constructor(deps: WhatsappWebhookDeps) {
    this.#d = deps;
    this.#journal = new ConversationLog(deps.integrationLog);
  }

  /** An inbound Twilio message (form body as received, `pathAndQuery` as the request URL). */
  async twilioInbound(
    slug: string,
    raw: Buffer,
    pathAndQuery: string,
    signature: string | undefined,
    log: Logger,
  ): Promise<void> {
    const found = await this.#twilio(slug, raw, pathAndQuery, signature, log);
    const event = parseTwilioInbound(parseTwilioForm(raw), this.#d.clock());
    await this.#message(found, 'twilio', found.settings.from, event, log);
  }

  /** A Twilio delivery status; `outboundKey` comes from our StatusCallback URL's query. */
  async twilioStatus(
    slug: string,
    raw: Buffer,
    pathAndQuery: string,
    signature: string | undefined,
    outboundKey: string | null,
    log: Logger,
  ): Promise<void> {
    const found = await this.#twilio(slug, raw, pathAndQuery, signature, log);
    const event = parseTwilioStatus(parseTwilioForm(raw), this.#d.clock());
    if (event) await this.#status(found, 'twilio', event, outboundKey, log);
  }

  /** Meta's subscription handshake (GET with hub.mode, hub.verify_token, hub.challenge). */
  async metaVerification(slug: string, query: Record<string, unknown>): Promise<MetaVerificationAnswer> {
    const { settings } = await this.#workspace(slug, 'meta');
    return answerMetaVerification(query, settings.verifyToken);
  }

  /** A Meta webhook POST: possibly several messages and statuses at once. */
  async metaEvents(slug: string, raw: Buffer, signature: string | undefined, log: Logger): Promise<void> {
    const found = await this.#workspace(slug, 'meta');
    if (!verifyMetaSignature(found.settings.appSecret, raw, signature)) {
      log.warn({ workspaceId: found.workspaceId }, 'meta webhook signature rejected');
      throw new AppError('webhook_signature_invalid');
    }
    // One after the other: a message and the status of our answer to it keep their order.
    for (const event of parseMetaWebhook(raw)) {
      if (event.type === 'message') await this.#message(found, 'meta', found.settings.phoneNumberId, event, log);
      else await this.#status(found, 'meta', event, null, log);
    }
  }

  async #twilio(slug: string, raw: Buffer, pathAndQuery: string, signature: string | undefined, log: Logger) {
    const found = await this.#workspace(slug, 'twilio');
    const url = twilioWebhookUrl(this.#d.publicBaseUrl, pathAndQuery);
    if (!verifyTwilioSignature(found.settings.authToken, url, parseTwilioForm(raw), signature)) {
      log.warn({ workspaceId: found.workspaceId }, 'twilio webhook signature rejected');
      throw new AppError('webhook_signature_invalid');
    }
    return found;
  }

  async #message(
    w: Found,
    provider: 'twilio' | 'meta',
    ownNumber: string,
    event: MessageEvent,
    log: Logger,
  ): Promise<void> {
    const started = performance.now();
    let outcome: string;
    let leadId: string | null = null;
    if (event.to !== ownNumber) {
      log.warn({ workspaceId: w.workspaceId, provider }, 'whatsapp message for another receiving number ignored');
      outcome = 'other-number';
    } else {
      const r = await this.#d.inbound.receiveMessage(w.workspaceId, provider, event, log, !this.#d.sandbox);
      outcome = r.kind.replace('_', '-');
      leadId = 'leadId' in r ? r.leadId : null;
    }
    await this.#journal.webhook({
      workspaceId: w.workspaceId,
      leadId,
      provider,
      kind: 'message',
      outcome,
      payload: event,
      secrets: w.secrets,
      ms: performance.now() - started,
    });
  }

  async #status(
    w: Found,
    provider: 'twilio' | 'meta',
    event: StatusEvent,
    outboundKey: string | null,
    log: Logger,
  ): Promise<void> {
    const started = performance.now();
    // Only a message of this workspace and mode: the signature says nothing about any other.
    const r = await this.#d.inbound.receiveStatus(w.workspaceId, provider, event, outboundKey, log, !this.#d.sandbox);
    const outcome = r.kind;
    await this.#journal.webhook({
      ms: performance.now() - started,
      workspaceId: w.workspaceId,
      leadId: r.kind === 'applied' ? r.leadId : null,
      provider,
      kind: `status ${event.status}`,
      outcome,
      payload: { ...event, outboundKey },
      secrets: w.secrets,
    });
  }

  async #workspace<P extends 'twilio' | 'meta'>(
    slug: string,
    provider: P,
  ): Promise<Found & { settings: P extends 'twilio' ? Twilio : Meta }> {
    if (!slugSchema.safeParse(slug).success) throw new AppError('workspace_not_found');
    const workspace = await this.#d.workspaces.findBySlug(slug);
    if (!workspace) throw new AppError('workspace_not_found');
    const all = this.#d.sandbox
      ? (await this.#d.sandbox.providers()).settings
      : this.#d.workspaces.settingsOf(workspace);
    const whatsapp = all.whatsapp;
    // Without this provider's credentials nothing can be authenticated: the endpoint does not exist.
    if (whatsapp?.provider !== provider) throw new AppError('workspace_not_found');
    return {
      workspaceId: workspace.id,
      secrets: settingsSecrets(all),
      settings: whatsapp as P extends 'twilio' ? Twilio : Meta,
    };
  }
}

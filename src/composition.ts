import type { PgBoss } from 'pg-boss';
import { ModelGate } from './agent/model-gate.ts';
import type { Config } from './config/config.ts';
import { ContactPlanService } from './contact-plan/contact-plan-service.ts';
import { WhatsappFollowUpAttempter } from './whatsapp/follow-up-attempter.ts';
import { gateConversation, gateSandbox, gateVoice } from './contact-plan/suppression-gate.ts';
import type { Pool } from './db/pool.ts';
import { IntegrationLogWriter } from './integration-log/integration-log-writer.ts';
import { OutboxRelay } from './jobs/outbox-relay.ts';
import { TurnstileClient } from './forms/turnstile-client.ts';
import { MetaLeadClient } from './intake/meta/meta-lead-client.ts';
import { intakeParts } from './intake/intake-parts.ts';
import { metaIntake } from './intake/meta/meta-intake.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import { LeadBatches } from './leads/lead-batch-statement.ts';
import { LeadService } from './leads/lead-service.ts';
import type { MetaSourceSecret } from './intake/meta/meta-source-settings.ts';
import { composeCore, installationKey, type Core } from './runtime.ts';
import { verifyClients } from './verify-clients.ts';
import { lazySandbox, type Sandbox } from './sandbox/sandbox.ts';
import { CalcomClient } from './scheduling/calcom/calcom-client.ts';
import type { SchedulingProvider } from './scheduling/scheduling-provider.ts';
import { CalcomWebhookService } from './scheduling/booking-webhook-service.ts';
import { VapiClient } from './voice/vapi/vapi-client.ts';
import { voiceChannel } from './voice/voice-channel.ts';
import type { CallControl, VoiceProvider } from './voice/voice-provider.ts';
import { WebhookDeliveryService } from './webhooks/webhook-delivery-service.ts';
import { DeliveryStatuses } from './whatsapp/delivery-status.ts';
import { InboundService } from './whatsapp/inbound-service.ts';
import { TurnEngine } from './whatsapp/turn-engine.ts';
import { defaultConversationProviders } from './whatsapp/turn-providers.ts';
import { WhatsappWebhookService } from './whatsapp/whatsapp-webhook-service.ts';

// The composition root: every provider client, the secrets, the integration-log writer, the
// outbox relay and the services are built here, once per process, and handed to whoever uses
// them. Services never construct their collaborators, so a test builds the same graph with its
// own database, clock or voice provider. `serve` and `worker` call this; the CLI commands need only
// its core (src/runtime.ts, composeCore), which loads none of the channels' modules.

/** A process that handles leads: the core, the provider clients, the relay and the channels' services. */
export type Composition = ReturnType<typeof compose>;

/** Tests replace the voice provider or the sandbox (instant pace); production takes the defaults. */
export interface ComposeOverrides {
  voice?: VoiceProvider;
  callControl?: CallControl;
  sandbox?: Sandbox;
}

export function compose(
  input: Pick<Core, 'config' | 'log' | 'clock' | 'pool'> & { boss: PgBoss },
  o: ComposeOverrides = {},
) {
  const { config, log, clock, pool, boss } = input;
  const key = installationKey(config);
  const core = composeCore(config, log, clock, pool, key);
  const relay = new OutboxRelay({ pool, boss, log, pollMs: config.OUTBOX_POLL_MS });
  const integrationLog = new IntegrationLogWriter(pool, log);
  // Every call and every message leaves through these providers, behind the do-not-contact gate.
  const vapi = new VapiClient({ baseUrl: config.VAPI_BASE_URL, timeoutMs: config.VAPI_TIMEOUT_MS });
  const voice: VoiceProvider = gateVoice(o.voice ?? vapi, pool);
  const scheduling: SchedulingProvider = new CalcomClient({ baseUrl: config.CALCOM_BASE_URL });
  const sandbox = gateSandbox(
    o.sandbox ?? lazySandbox({ config, log, secret: key }, () => import('./sandbox/sandbox-providers.ts')),
    pool,
  );
  const inbound = new InboundService({ pool, log, statuses: new DeliveryStatuses(pool), wake: () => relay.wake() });
  // The channels' attempters make a plan's calls and follow-ups (docs/FOLLOW-UP.md).
  const voiceParts = voiceChannel({
    config,
    pool,
    log,
    clock,
    voice,
    workspaces: core.workspaces,
    scheduling,
    sandbox,
  });
  const contactPlans = new ContactPlanService({
    pool,
    log,
    clock,
    attempters: {
      voice: voiceParts.attempter,
      whatsapp: new WhatsappFollowUpAttempter({ pool, log, clock, workspaces: core.workspaces, sandbox }),
    },
  });
  // The one LeadService: the public API, the hosted form, connected sources and Meta's retries.
  const rateLimiter = new RateLimiter(pool, clock);
  const leads = new LeadService({
    pool,
    rateLimiter,
    batches: new LeadBatches(pool),
    log,
    voice: voiceParts.provider,
    relay,
    callOptions: voiceParts.callOptions,
    sandboxDial: voiceParts.sandboxDial,
    clock,
  });
  /** Meta Lead Ads' Graph client of one source: each connected Page has its own token. */
  const metaLeadClient = (secret: MetaSourceSecret): MetaLeadClient =>
    new MetaLeadClient({
      baseUrl: config.WHATSAPP_GRAPH_BASE_URL,
      pageAccessToken: secret.pageAccessToken,
      appSecret: secret.appSecret,
    });
  // Connected sources (docs/INTAKE.md), and Meta's leadgen webhook read from the Graph API.
  const intake = intakeParts({ ...core, config, pool, integrationLog, clock, log }, leads);
  const meta = metaIntake({
    pool,
    secrets: core.secrets,
    clock,
    integrationLog,
    intake: intake.intake,
    leadClient: metaLeadClient,
  });
  const webhookDeps = {
    pool,
    log,
    clock,
    workspaces: core.workspaces,
    inbound,
    integrationLog,
    publicBaseUrl: config.PUBLIC_BASE_URL,
  };
  return {
    ...core,
    boss,
    /** Built, not started: `serve` and `worker` start it; tests drain it by hand. */
    relay,
    integrationLog,
    /** Vapi as the lead service dials it (voiceChannel adds the integration log). */
    voice,
    /** Vapi's calls looked up and cancelled by the call sweep (src/voice/call-sweep.ts): no call is placed. */
    callControl: o.callControl ?? vapi,
    /** The one Cal.com client of live leads: the voice tools and the WhatsApp turns share it. */
    scheduling,
    /** What the dashboard's Test connection asks. */
    verify: verifyClients(config),
    /** The messaging and chat-model clients of live WhatsApp turns, per workspace's settings. */
    conversation: gateConversation(defaultConversationProviders(config, { scheduling }), pool),
    /** Sandbox leads' simulated providers (src/sandbox/sandbox-providers.ts). */
    sandbox,
    inbound,
    whatsappWebhooks: {
      live: new WhatsappWebhookService(webhookDeps),
      sandbox: new WhatsappWebhookService({ ...webhookDeps, sandbox }),
    },
    /** Contact plans: each lead's next attempt to reach them, run by the contact-attempt jobs. */
    contactPlans,
    calcomWebhooks: new CalcomWebhookService({ pool, log, workspaces: core.workspaces }),
    voiceChannel: voiceParts,
    /** The hosted form's Turnstile check (TURNSTILE_VERIFY_URL). */
    turnstile: new TurnstileClient(config.TURNSTILE_VERIFY_URL),
    /** Meta Lead Ads' Graph client of one source: each connected Page has its own token. */
    metaLeadClient,
    /** The public API's hourly quota per key. */
    rateLimiter,
    leads,
    /** Connected sources: their services and routes (buildApp registers the routes). */
    intake,
    /** Meta Lead Ads: the leadgen webhook's routes, connecting a Page, the backfill, the retries. */
    metaIntake: meta,
  };
}

/**
 * The job handlers' services. `pool`: the turns' own (each turn holds a connection for its whole
 * run, src/worker.ts turnPool); the integration log stays on the process's pool.
 */
export function jobServices(
  c: Composition,
  pool: Pool,
): { engine: TurnEngine; webhookDelivery: WebhookDeliveryService } {
  const { config } = c;
  const engine = new TurnEngine({
    pool,
    log: c.log,
    clock: c.clock,
    workspaces: c.workspaces,
    providers: c.conversation,
    integrationLog: c.integrationLog,
    sandbox: c.sandbox,
    maxAgentTurns: config.MAX_AGENT_TURNS_PER_LEAD,
    modelGate: modelGate(config),
    maxModelWaitMs: config.LLM_RETRY_AFTER_MAX_SECONDS * 1000,
    ...(config.OPENAI_API_KEY ? { globalLlmKey: config.OPENAI_API_KEY } : {}),
  });
  const webhookDelivery = new WebhookDeliveryService({
    pool,
    boss: c.boss,
    log: c.log,
    clock: c.clock,
    secrets: c.secrets,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
    allowPrivateNetworks: config.EGRESS_ALLOW_PRIVATE_NETWORKS,
  });
  return { engine, webhookDelivery };
}

/**
 * The per-workspace limits of model calls (src/agent/model-gate.ts) from the config. Wall-clock
 * time, like the pg-boss schedule its refusals are rescheduled on.
 */
export function modelGate(config: Config): ModelGate {
  return new ModelGate({
    maxConcurrent: config.LLM_MAX_CONCURRENCY_PER_WORKSPACE ?? Math.max(1, Math.floor(config.WORKER_CONCURRENCY / 2)),
    failureThreshold: config.LLM_BREAKER_FAILURES,
    cooldownMs: config.LLM_BREAKER_COOLDOWN_SECONDS * 1000,
    now: Date.now,
  });
}

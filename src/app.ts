import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Authenticator } from './auth/authenticator.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import type { Config } from './config/config.ts';
import { fastifyTrustProxy } from './config/trust-proxy.ts';
import type { Pool } from './db/pool.ts';
import { docsRoutes } from './http/docs-routes.ts';
import { clientErrorHandler, errorHandler, isUnroutable, notFoundHandler } from './http/error-handler.ts';
import { healthRoutes } from './http/health-routes.ts';
import { installOverloadGuard, type PressureReport } from './http/overload-guard.ts';
import { openApiRoute } from './http/openapi.ts';
import { installSecurityHeaders, securityHeaders } from './http/security-headers.ts';
import { adminRoutes } from './admin/admin-routes.ts';
import { installAdminRateLimit } from './admin/admin-rate-limit.ts';
import { auditTrail } from './admin/audit-trail.ts';
import { LeadActions } from './admin/lead-actions.ts';
import { LiveEvents } from './admin/live-events.ts';
import { liveRoutes } from './admin/live-routes.ts';
import { OperatorReplies } from './admin/operator-reply.ts';
import { webRoutes } from './admin/web-routes.ts';
import { formAgentAdminRoutes } from './admin/form-agent-admin-routes.ts';
import { inboxSettingsRoutes } from './admin/inbox-settings.ts';
import { webhookAdminRoutes } from './admin/webhook-admin-routes.ts';
import { keyAdminRoutes } from './admin/key-admin-routes.ts';
import { providerAdminRoutes } from './admin/provider-admin-routes.ts';
import { teamAdminRoutes } from './admin/team-admin-routes.ts';
import { TeamService } from './operators/team-service.ts';
import { DeadLetterAdmin } from './admin/dead-letter-admin.ts';
import { leadHistoryRoutes } from './admin/lead-history-routes.ts';
import { logsAdminRoutes } from './admin/logs-admin-routes.ts';
import { analyticsAdminRoutes } from './admin/analytics-admin-routes.ts';
import { inboxCsvRoutes } from './admin/inbox-csv-routes.ts';
import { leadNotesRoutes } from './admin/lead-notes-routes.ts';
import { WebhookEndpointService } from './webhooks/webhook-endpoint-service.ts';
import { resolveEncryptionKey, SecretBox } from './workspaces/secret-box.ts';
import { OperatorService } from './operators/operator-service.ts';
import { scryptParams } from './operators/password.ts';
import type { OutboxRelay } from './jobs/outbox-relay.ts';
import { SANDBOX_ROUTE_PREFIX, type Sandbox } from './sandbox/sandbox.ts';
import { pruneSandboxLeads } from './sandbox/sandbox-retention.ts';

import { observeHttpRequest } from './metrics/metrics.ts';
import { leadBatchStatement, type LeadOp, type LeadOpResult } from './leads/lead-batch-statement.ts';
import { leadRoutes, unroutableLeadId } from './leads/lead-routes.ts';
import { LeadService } from './leads/lead-service.ts';
import { InboundService } from './whatsapp/inbound-service.ts';
import { WhatsappWebhookService } from './whatsapp/whatsapp-webhook-service.ts';
import { whatsappWebhookRoutes } from './whatsapp/whatsapp-webhook-routes.ts';
import { calcomWebhookRoutes } from './scheduling/booking-webhook-routes.ts';
import { CalcomWebhookService } from './scheduling/booking-webhook-service.ts';
import type { Clock } from './shared/clock.ts';
import { createAccessLogger, type Logger } from './shared/logger.ts';
import { maintainAnalyticsDays } from './admin/analytics-days.ts';
import { integrationLogPruning } from './integration-log/integration-log-pruner.ts';
import { pruneVoiceToolCalls } from './voice/call-session-queries.ts';
import { voiceChannel } from './voice/voice-channel.ts';
import type { VoiceProvider } from './voice/voice-provider.ts';
import type { WorkspaceService } from './workspaces/workspace-service.ts';

export interface AppDeps {
  config: Config;
  pool: Pool;
  log: Logger;
  clock: Clock;
  voice: VoiceProvider;
  relay: OutboxRelay;
  workspaces: WorkspaceService;
  /** Sandbox leads' simulated providers (src/sandbox/sandbox-providers.ts). */
  sandbox: Sandbox;
}

export interface App {
  http: FastifyInstance;
  rateLimiter: RateLimiter<LeadOp, LeadOpResult>;
  authenticator: Authenticator;
  /** Load shedding's view of the process (also in /healthz and /readyz). */
  pressure: () => PressureReport;
  /** The dashboard's operators, sessions and sign-in (the CLI uses the same service). */
  operators: OperatorService;
  /** The dashboard's LISTEN connection (live updates). */
  live: LiveEvents;
}

function noRouteSchemas(): never {
  throw new Error('Fastify route schemas are not used here: validate with zod in the handler.');
}

/** The HTTP application as a function of its dependencies; serve.ts and tests call it. */
export function buildApp(deps: AppDeps): App {
  const secureHeaders = securityHeaders(deps.config.PUBLIC_BASE_URL);
  const http = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Fastify's per-request lines would log URLs and errors verbatim; ours (onResponse) logs less.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => crypto.randomUUID(),
    requestTimeout: 30_000,
    trustProxy: fastifyTrustProxy(deps.config.TRUST_PROXY),
    // Inputs are checked by zod in the handlers, never by Fastify route schemas: without these
    // factories Fastify would load ajv and fast-json-stringify (about 0.5 MB of code) for nothing.
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
    // Every error in our one shape (docs/API.md, "Errors"): the HTTP parser's own (bad framing,
    // 431, 408), paths the router cannot decode, and requests during shutdown (overload-guard.ts).
    clientErrorHandler,
    frameworkErrors: (err, request, reply) => {
      secureHeaders(request, reply);
      if (isUnroutable(err) && request.method === 'GET' && request.url.startsWith('/api/public/leads/')) {
        void unroutedLead(request, reply).catch((e: Error) => errorHandler(e, request, reply));
        return;
      }
      errorHandler(err, request, reply);
    },
    return503OnClosing: false,
  });
  const authenticator = new Authenticator({
    pool: deps.pool,
    clock: deps.clock,
    log: deps.log,
    cacheTtlMs: deps.config.API_KEY_CACHE_TTL_MS,
  });
  // More than a rate limiter: the statement it runs per batch of a key's requests also reads the
  // GETs' leads and inserts the POSTs' WhatsApp leads (lead-batch-statement.ts), so a request is
  // counted and done in one round trip.
  // Any request may be admitted from a lease of the key's count (src/auth/rate-limiter.ts, leaseSize).
  const rateLimiter = new RateLimiter(deps.pool, deps.clock, leadBatchStatement, () => true);
  const unroutedLead = unroutableLeadId({ authenticator, rateLimiter });
  const voice = voiceChannel(deps);
  const leads = new LeadService({
    pool: deps.pool, log: deps.log, voice: voice.provider, relay: deps.relay, callOptions: voice.callOptions, sandboxDial: voice.sandboxDial,
  });

  http.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  installSecurityHeaders(http, secureHeaders);
  installAdminRateLimit(http, { perMinute: deps.config.ADMIN_RATE_LIMIT_PER_MINUTE, clock: deps.clock });
  // One line per request, with the route's template instead of its URL and without any body:
  // no personal data, so it skips the redaction pass (createAccessLogger).
  const access = createAccessLogger(deps.log);
  http.addHook('onResponse', async (request, reply) => {
    observeHttpRequest(request.method, request.routeOptions.url ?? 'unmatched', reply.statusCode, reply.elapsedTime / 1000);
    access.info(
      { reqId: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
  http.setErrorHandler(errorHandler);
  http.setNotFoundHandler(notFoundHandler);
  const pressure = installOverloadGuard(http, {
    maxInFlight: deps.config.MAX_REQUESTS_IN_FLIGHT,
    maxWaiting: deps.config.MAX_REQUESTS_WAITING,
    maxWaitMs: deps.config.MAX_REQUEST_WAIT_MS,
    maxEventLoopDelayMs: deps.config.MAX_EVENT_LOOP_DELAY_MS,
    eventLoopGraceMs: deps.config.EVENT_LOOP_GRACE_MS,
    retryAfterSeconds: deps.config.BUSY_RETRY_AFTER_SECONDS,
  });
  http.register(healthRoutes(deps.pool, pressure));
  http.register(openApiRoute(deps.config.PUBLIC_BASE_URL));
  http.register(docsRoutes());
  http.register(leadRoutes({ authenticator, rateLimiter, leads, workspaces: deps.workspaces }));
  http.register(voice.routes);
  // The providers' callbacks about sandbox leads come from the simulators, to the same routes under /sandbox.
  http.register(voice.sandboxRoutes, { prefix: SANDBOX_ROUTE_PREFIX });
  http.register(integrationLogPruning({
    pool: deps.pool,
    log: deps.log,
    policy: { maxAgeDays: deps.config.INTEGRATION_LOG_RETENTION_DAYS, maxPerWorkspace: deps.config.INTEGRATION_LOG_MAX_PER_WORKSPACE },
    alsoPrune: [
      pruneVoiceToolCalls,
      pruneSandboxLeads,
      // Rides the same ten-minute pass; it deletes no log rows, so it adds nothing to the count.
      async (pool) => (await maintainAnalyticsDays(pool, deps.log), 0),
    ],
  }));
  http.register(calcomWebhookRoutes({ webhooks: new CalcomWebhookService({ pool: deps.pool, log: deps.log, workspaces: deps.workspaces }), workspaces: deps.workspaces }));
  const inbound = new InboundService({ pool: deps.pool, log: deps.log, wake: () => deps.relay.wake() });
  const webhookDeps = { pool: deps.pool, log: deps.log, clock: deps.clock, workspaces: deps.workspaces, inbound, publicBaseUrl: deps.config.PUBLIC_BASE_URL };
  const whatsapp = new WhatsappWebhookService(webhookDeps);
  http.register(whatsappWebhookRoutes({ webhooks: whatsapp, workspaces: deps.workspaces }));
  const sandboxWhatsapp = new WhatsappWebhookService({ ...webhookDeps, sandbox: deps.sandbox });
  http.register(whatsappWebhookRoutes({ webhooks: sandboxWhatsapp, workspaces: deps.workspaces }), { prefix: SANDBOX_ROUTE_PREFIX });
  // The operators' dashboard: the admin API and its live updates (docs/DASHBOARD.md).
  const operators = operatorService(deps);
  const live = new LiveEvents(deps.pool, deps.log);
  http.addHook('onClose', () => live.close());
  const wake = () => deps.relay.wake();
  http.addHook('onSend', auditTrail(deps.pool, deps.log));
  http.register(adminRoutes({
    pool: deps.pool, clock: deps.clock, operators, workspaces: deps.workspaces,
    actions: new LeadActions({ pool: deps.pool, wake }),
    replies: new OperatorReplies({ pool: deps.pool, clock: deps.clock, workspaces: deps.workspaces, sandbox: deps.sandbox, wake }),
    secureCookies: deps.config.PUBLIC_BASE_URL.startsWith('https:'),
  }));
  // The Webhooks page: the same endpoint operations as `leadintake webhook …`.
  const secrets = new SecretBox(resolveEncryptionKey({ envKey: deps.config.LEADINTAKE_ENCRYPTION_KEY, databaseUrl: deps.config.DATABASE_URL, dataDir: deps.config.LEADINTAKE_DATA_DIR }));
  const egress = { allowPrivateNetworks: deps.config.EGRESS_ALLOW_PRIVATE_NETWORKS };
  http.register(webhookAdminRoutes({ operators, endpoints: new WebhookEndpointService(deps.pool, secrets, deps.clock, egress, deps.config.MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE) }));
  // Providers, API keys and Team: the same services as `leadintake workspace verify|update`, `key …` and `user …`.
  http.register(providerAdminRoutes({ config: deps.config, pool: deps.pool, log: deps.log, operators, workspaces: deps.workspaces, authenticator }));
  http.register(keyAdminRoutes({
    pool: deps.pool, operators, workspaces: deps.workspaces, authenticator, cacheTtlMs: deps.config.API_KEY_CACHE_TTL_MS,
    caps: { maxHourlyLimit: deps.config.MAX_KEY_HOURLY_LIMIT, maxKeys: deps.config.MAX_API_KEYS_PER_WORKSPACE },
  }));
  http.register(teamAdminRoutes({
    operators, team: new TeamService({ pool: deps.pool, clock: deps.clock, hashPassword: (p) => operators.hashPassword(p) }),
    publicBaseUrl: deps.config.PUBLIC_BASE_URL, secureCookies: deps.config.PUBLIC_BASE_URL.startsWith('https:'),
  }));
  // The Logs page: integration log, dead letters (through the relay's pg-boss handle), audit log.
  http.register(logsAdminRoutes({ pool: deps.pool, operators, deadLetters: new DeadLetterAdmin(deps.pool, () => deps.relay.boss) }));
  // The lead page's older messages and events, and its provider traffic, in pages.
  http.register(leadHistoryRoutes({ pool: deps.pool, operators }));
  // The Form and Agent pages: the workspace's questions, persona, template and kill switch.
  http.register(formAgentAdminRoutes({ pool: deps.pool, clock: deps.clock, operators, workspaces: deps.workspaces, publicBaseUrl: deps.config.PUBLIC_BASE_URL }));
  // The inbox's waiting thresholds (edited on the Agent page).
  http.register(inboxSettingsRoutes({ pool: deps.pool, operators, workspaces: deps.workspaces }));
  // The Analytics page: funnel, speed to lead and bookings from the lead timeline.
  http.register(analyticsAdminRoutes({ pool: deps.pool, clock: deps.clock, operators, workspaces: deps.workspaces }));
  http.register(inboxCsvRoutes({ pool: deps.pool, clock: deps.clock, operators, workspaces: deps.workspaces }));
  // The lead page's internal notes.
  http.register(leadNotesRoutes({ pool: deps.pool, operators }));
  http.register(liveRoutes({
    operators, live, heartbeatMs: deps.config.LIVE_HEARTBEAT_SECONDS * 1000, streamsPerSession: deps.config.LIVE_STREAMS_PER_SESSION,
  }));
  http.register(webRoutes());
  return { http, rateLimiter, authenticator, pressure, operators, live };
}

export function operatorService(deps: Pick<AppDeps, 'config' | 'pool' | 'clock'>): OperatorService {
  const c = deps.config;
  return new OperatorService({
    pool: deps.pool,
    clock: deps.clock,
    idleMs: c.SESSION_IDLE_MINUTES * 60_000,
    maxAgeMs: c.SESSION_MAX_HOURS * 3_600_000,
    throttle: { windowMs: c.SIGN_IN_WINDOW_MINUTES * 60_000, maxPerAccount: c.SIGN_IN_MAX_FAILURES, maxPerIp: c.SIGN_IN_MAX_FAILURES_PER_IP },
    password: scryptParams(c.PASSWORD_SCRYPT_LOG2_N),
  });
}

import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Authenticator } from './auth/authenticator.ts';
import type { RateLimiter } from './auth/rate-limiter.ts';
import { IntakeLimits } from './auth/intake-limits.ts';
import { PublishableOrigins } from './auth/public-key-policy.ts';
import { fastifyTrustProxy } from './config/trust-proxy.ts';
import { docsRoutes } from './http/docs-routes.ts';
import { clientErrorHandler, errorHandler, isUnroutable, notFoundHandler } from './http/error-handler.ts';
import { healthRoutes } from './http/health-routes.ts';
import { installOverloadGuard, type PressureReport } from './http/overload-guard.ts';
import { openApiRoute } from './http/openapi.ts';
import { API_PARTS } from './api-parts.ts';
import { installSecurityHeaders, securityHeaders } from './http/security-headers.ts';
import { adminRoutes } from './admin/leads/admin-routes.ts';
import { installAdminRateLimit } from './admin/admin-rate-limit.ts';
import { auditTrail } from './admin/audit-trail.ts';
import { LeadActions } from './admin/leads/lead-actions.ts';
import { LiveEvents } from './admin/leads/live-events.ts';
import { liveRoutes } from './admin/leads/live-routes.ts';
import { OperatorReplies } from './admin/leads/operator-reply.ts';
import { webRoutes } from './admin/web-routes.ts';
import { formAgentAdminRoutes } from './admin/settings/form-agent-admin-routes.ts';
import { inboxSettingsRoutes } from './admin/leads/inbox-settings.ts';
import { webhookAdminRoutes } from './admin/webhooks/webhook-admin-routes.ts';
import { keyAdminRoutes } from './admin/settings/key-admin-routes.ts';
import { providerAdminRoutes } from './admin/settings/provider-admin-routes.ts';
import { teamAdminRoutes } from './admin/team/team-admin-routes.ts';
import { TeamService } from './operators/team-service.ts';
import { DeadLetterAdmin } from './admin/logs/dead-letter-admin.ts';
import { leadHistoryRoutes } from './admin/leads/lead-history-routes.ts';
import { logsAdminRoutes } from './admin/logs/logs-admin-routes.ts';
import { analyticsAdminRoutes } from './admin/analytics/analytics-admin-routes.ts';
import { inboxCsvRoutes } from './admin/leads/inbox-csv-routes.ts';
import { leadNotesRoutes } from './admin/leads/lead-notes-routes.ts';
import { contactPlanRoutes } from './admin/leads/contact-plan-routes.ts';
import { doNotContactRoutes } from './admin/do-not-contact/do-not-contact-routes.ts';
import { intakeAdminRoutes } from './admin/intake/intake-admin-routes.ts';
import { intakeKeyAdminRoutes } from './admin/intake/intake-key-admin-routes.ts';
import { intakeSettingsAdminRoutes } from './admin/intake/intake-settings-admin-routes.ts';
import { intakeSourceAdminRoutes } from './admin/intake/intake-source-admin-routes.ts';
import { FormSettingsService } from './forms/form-settings-service.ts';
import { PublishableKeys } from './workspaces/api-key-publishable.ts';
import { PlanActions } from './contact-plan/plan-actions.ts';
import type { OperatorService } from './operators/operator-service.ts';
import { SANDBOX_ROUTE_PREFIX } from './sandbox/sandbox.ts';
import type { Composition } from './composition.ts';

import { observeHttpRequest } from './metrics/metrics.ts';
import { leadRoutes, unroutableLeadId } from './leads/lead-routes.ts';
import { embedRoutes } from './forms/embed-routes.ts';
import { ADDRESS_HOURLY_LIMIT as FORM_ADDRESS_HOURLY_LIMIT, FormAbuseGuard } from './forms/form-abuse.ts';
import { hostedForm } from './forms/hosted-form.ts';
import { whatsappWebhookRoutes } from './whatsapp/whatsapp-webhook-routes.ts';
import { calcomWebhookRoutes } from './scheduling/booking-webhook-routes.ts';
import type { metaIntake } from './intake/meta/meta-intake.ts';
import { createAccessLogger } from './shared/logger.ts';

/** The process's clients and services, built once by the composition root (src/composition.ts). */
export type AppDeps = Composition;

export interface App {
  http: FastifyInstance;
  rateLimiter: RateLimiter;
  authenticator: Authenticator;
  /** Load shedding's view of the process (also in /healthz and /readyz). */
  pressure: () => PressureReport;
  /** The dashboard's operators, sessions and sign-in (the CLI uses the same service). */
  operators: OperatorService;
  /** The dashboard's LISTEN connection (live updates). */
  live: LiveEvents;
  /** Meta Lead Ads: connecting a Page, the backfill (`leadintake source backfill`). */
  metaIntake: ReturnType<typeof metaIntake>;
}

function noRouteSchemas(): never {
  throw new Error('Fastify route schemas are not used here: validate with zod in the handler.');
}

/** The HTTP application as a function of its dependencies; serve.ts and tests call it. Builds no provider client. */
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
  const { rateLimiter, leads } = deps;
  const voice = deps.voiceChannel;
  const unroutedLead = unroutableLeadId({ authenticator, leads });
  // Browser intake's hourly limits (docs/INTAKE.md): the hosted form's and the publishable keys'
  // are counted apart (their own scope and limits), visitors' addresses hashed with one derived key.
  const addressKey = deps.secrets.derive('intake-address');
  const browserIntake = {
    origins: new PublishableOrigins({
      pool: deps.pool,
      clock: deps.clock,
      cacheTtlMs: deps.config.API_KEY_CACHE_TTL_MS,
    }),
    limits: new IntakeLimits({
      db: deps.pool,
      clock: deps.clock,
      addressKey,
      scope: 'publishable',
      limits: {
        perAddress: deps.config.PUBLISHABLE_ADDRESS_HOURLY_LIMIT,
        perWorkspace: deps.config.PUBLISHABLE_WORKSPACE_HOURLY_LIMIT,
      },
    }),
  };
  const formAbuse = {
    abuse: new FormAbuseGuard(deps.secrets.derive('hosted-form')),
    limits: new IntakeLimits({
      db: deps.pool,
      clock: deps.clock,
      addressKey,
      scope: 'form',
      // The workspace's limit is its form setting (hourlyLimit), given with each admit.
      limits: { perAddress: FORM_ADDRESS_HOURLY_LIMIT },
    }),
  };
  // The Form page's settings: read by the hosted form, edited on the dashboard.
  const formSettings = new FormSettingsService(deps.pool, deps.secrets);

  http.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  installSecurityHeaders(http, secureHeaders);
  installAdminRateLimit(http, { perMinute: deps.config.ADMIN_RATE_LIMIT_PER_MINUTE, clock: deps.clock });
  // One line per request, with the route's template instead of its URL and without any body:
  // no personal data, so it skips the redaction pass (createAccessLogger).
  const access = createAccessLogger(deps.log);
  http.addHook('onResponse', async (request, reply) => {
    observeHttpRequest(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    access.info(
      {
        reqId: request.id,
        method: request.method,
        route: request.routeOptions.url ?? 'unmatched',
        status: reply.statusCode,
        ms: Math.round(reply.elapsedTime),
      },
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
  http.register(openApiRoute(deps.config.PUBLIC_BASE_URL, API_PARTS));
  http.register(docsRoutes());
  http.register(leadRoutes({ authenticator, leads, workspaces: deps.workspaces, browser: browserIntake }));
  http.register(embedRoutes({ workspaces: deps.workspaces }));
  // The hosted form: the same LeadService, behind its own abuse checks (docs/INTAKE.md).
  http.register(hostedForm(deps, { leads, formSettings, ...formAbuse }));
  http.register(voice.routes);
  // The providers' callbacks about sandbox leads come from the simulators, to the same routes under /sandbox.
  http.register(voice.sandboxRoutes, { prefix: SANDBOX_ROUTE_PREFIX });
  http.register(calcomWebhookRoutes({ webhooks: deps.calcomWebhooks, workspaces: deps.workspaces }));
  // Connected sources: generic webhooks and Google lead forms (docs/INTAKE.md); `intake.sources` serves the Form page.
  const intake = deps.intake;
  http.register(intake.routes);
  // Meta Lead Ads' `leadgen` webhook, read from the Graph API and submitted through the same intake.
  const meta = deps.metaIntake;
  http.register(meta.routes);
  http.register(whatsappWebhookRoutes({ webhooks: deps.whatsappWebhooks.live, workspaces: deps.workspaces }));
  http.register(whatsappWebhookRoutes({ webhooks: deps.whatsappWebhooks.sandbox, workspaces: deps.workspaces }), {
    prefix: SANDBOX_ROUTE_PREFIX,
  });
  // The operators' dashboard: the admin API and its live updates (docs/DASHBOARD.md).
  const operators = deps.operators;
  const live = new LiveEvents(deps.pool, deps.log);
  http.addHook('onClose', () => live.close());
  const wake = () => deps.relay.wake();
  http.addHook('onSend', auditTrail(deps.pool, deps.log));
  http.register(
    adminRoutes({
      pool: deps.pool,
      clock: deps.clock,
      operators,
      workspaces: deps.workspaces,
      actions: new LeadActions({ pool: deps.pool, wake }),
      replies: new OperatorReplies({
        pool: deps.pool,
        clock: deps.clock,
        workspaces: deps.workspaces,
        sandbox: deps.sandbox,
        wake,
      }),
      secureCookies: deps.config.PUBLIC_BASE_URL.startsWith('https:'),
    }),
  );
  // The Webhooks page: the same endpoint operations as `leadintake webhook …`.
  http.register(webhookAdminRoutes({ operators, endpoints: deps.webhookEndpoints }));
  // Providers, API keys and Team: the same services as `leadintake workspace verify|update`, `key …` and `user …`.
  http.register(
    providerAdminRoutes({
      config: deps.config,
      pool: deps.pool,
      log: deps.log,
      operators,
      workspaces: deps.workspaces,
      authenticator,
      verify: deps.verify,
    }),
  );
  http.register(
    keyAdminRoutes({
      pool: deps.pool,
      operators,
      workspaces: deps.workspaces,
      authenticator,
      cacheTtlMs: deps.config.API_KEY_CACHE_TTL_MS,
      caps: { maxHourlyLimit: deps.config.MAX_KEY_HOURLY_LIMIT, maxKeys: deps.config.MAX_API_KEYS_PER_WORKSPACE },
    }),
  );
  http.register(
    teamAdminRoutes({
      operators,
      team: new TeamService({
        pool: deps.pool,
        clock: deps.clock,
        hashPassword: (p) => operators.hashPassword(p),
        // A new account's acceptance counts with the address's sign-ins (docs/SECURITY.md).
        throttle: {
          windowMs: deps.config.SIGN_IN_WINDOW_MINUTES * 60_000,
          maxPerIp: deps.config.SIGN_IN_MAX_FAILURES_PER_IP,
        },
      }),
      publicBaseUrl: deps.config.PUBLIC_BASE_URL,
      secureCookies: deps.config.PUBLIC_BASE_URL.startsWith('https:'),
    }),
  );
  // The Logs page: integration log, dead letters (through the relay's pg-boss handle), audit log.
  http.register(
    logsAdminRoutes({ pool: deps.pool, operators, deadLetters: new DeadLetterAdmin(deps.pool, () => deps.relay.boss) }),
  );
  // The lead page's older messages and events, and its provider traffic, in pages.
  http.register(leadHistoryRoutes({ pool: deps.pool, operators }));
  // The Form and Agent pages: the workspace's questions, persona, template and kill switch.
  http.register(
    formAgentAdminRoutes({
      pool: deps.pool,
      clock: deps.clock,
      operators,
      workspaces: deps.workspaces,
      publicBaseUrl: deps.config.PUBLIC_BASE_URL,
    }),
  );
  // The inbox's waiting thresholds (edited on the Agent page).
  http.register(inboxSettingsRoutes({ pool: deps.pool, operators, workspaces: deps.workspaces }));
  // The Form page's intake: the hosted form, the embed, its settings, publishable keys, sources.
  http.register(intakeAdminRoutes({ operators, publicBaseUrl: deps.config.PUBLIC_BASE_URL }));
  http.register(
    intakeKeyAdminRoutes({
      operators,
      keys: new PublishableKeys(deps.pool, deps.config.DEFAULT_HOURLY_LIMIT),
      authenticator,
      caps: { maxHourlyLimit: deps.config.MAX_KEY_HOURLY_LIMIT, maxKeys: deps.config.MAX_API_KEYS_PER_WORKSPACE },
    }),
  );
  http.register(
    intakeSettingsAdminRoutes({
      operators,
      workspaces: deps.workspaces,
      forms: formSettings,
    }),
  );
  http.register(
    intakeSourceAdminRoutes({
      operators,
      sources: intake.sources,
      meta: meta.sources,
      workspaces: deps.workspaces,
    }),
  );
  // The Analytics page: funnel, speed to lead and bookings from the lead timeline.
  http.register(analyticsAdminRoutes({ pool: deps.pool, clock: deps.clock, operators, workspaces: deps.workspaces }));
  http.register(inboxCsvRoutes({ pool: deps.pool, clock: deps.clock, operators, workspaces: deps.workspaces }));
  // The lead page's internal notes.
  http.register(leadNotesRoutes({ pool: deps.pool, operators }));
  http.register(doNotContactRoutes({ pool: deps.pool, operators }));
  // The lead page's Follow-ups buttons: Call now, Skip, Stop follow-ups.
  http.register(contactPlanRoutes({ operators, plans: new PlanActions({ pool: deps.pool, clock: deps.clock, wake }) }));
  http.register(
    liveRoutes({
      operators,
      live,
      heartbeatMs: deps.config.LIVE_HEARTBEAT_SECONDS * 1000,
      streamsPerSession: deps.config.LIVE_STREAMS_PER_SESSION,
    }),
  );
  http.register(webRoutes());
  return { http, rateLimiter, authenticator, pressure, operators, live, metaIntake: meta };
}

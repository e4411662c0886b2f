import crypto from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { Authenticator } from './auth/authenticator.ts';
import { RateLimiter } from './auth/rate-limiter.ts';
import type { Config } from './config/config.ts';
import type { Pool } from './db/pool.ts';
import { errorHandler, notFoundHandler } from './http/error-handler.ts';
import { healthRoutes } from './http/health-routes.ts';
import { openApiRoute } from './http/openapi.ts';
import type { OutboxRelay } from './jobs/outbox-relay.ts';
import { leadBatchStatement, type LeadOp, type LeadOpResult } from './leads/lead-batch-statement.ts';
import { leadRoutes } from './leads/lead-routes.ts';
import { LeadService } from './leads/lead-service.ts';
import { InboundService } from './conversation/inbound-service.ts';
import { WhatsappWebhookService } from './conversation/whatsapp-webhook-service.ts';
import { whatsappWebhookRoutes } from './conversation/whatsapp-webhook-routes.ts';
import { calcomWebhookRoutes } from './scheduling/calcom-webhook-routes.ts';
import { CalcomWebhookService } from './scheduling/calcom-webhook-service.ts';
import type { Clock } from './shared/clock.ts';
import { createAccessLogger, type Logger } from './shared/logger.ts';
import { integrationLogPruning } from './integrations/integration-log-pruner.ts';
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
}

export interface App {
  http: FastifyInstance;
  rateLimiter: RateLimiter<LeadOp, LeadOpResult>;
  authenticator: Authenticator;
}

function noRouteSchemas(): never {
  throw new Error('Fastify route schemas are not used here: validate with zod in the handler.');
}

/** The HTTP application as a function of its dependencies; serve.ts and tests call it. */
export function buildApp(deps: AppDeps): App {
  const http = Fastify({
    loggerInstance: deps.log as FastifyBaseLogger,
    // Fastify's per-request lines would log URLs and errors verbatim; ours (onResponse) logs less.
    logController: new LogController({ disableRequestLogging: true }),
    genReqId: () => crypto.randomUUID(),
    requestTimeout: 30_000,
    trustProxy: deps.config.TRUST_PROXY,
    // Inputs are checked by zod in the handlers, never by Fastify route schemas: without these
    // factories Fastify would load ajv and fast-json-stringify (about 0.5 MB of code) for nothing.
    schemaController: { compilersFactory: { buildValidator: noRouteSchemas, buildSerializer: noRouteSchemas } },
  });
  const authenticator = new Authenticator({
    pool: deps.pool,
    clock: deps.clock,
    log: deps.log,
    cacheTtlMs: deps.config.API_KEY_CACHE_TTL_MS,
  });
  const rateLimiter = new RateLimiter(deps.pool, deps.clock, leadBatchStatement);
  const voice = voiceChannel(deps);
  const leads = new LeadService({ pool: deps.pool, log: deps.log, voice: voice.provider, relay: deps.relay, callOptions: voice.callOptions });

  http.addHook('onRequest', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });
  // One line per request, with the route's template instead of its URL and without any body:
  // no personal data, so it skips the redaction pass (createAccessLogger).
  const access = createAccessLogger(deps.log);
  http.addHook('onResponse', async (request, reply) => {
    access.info(
      { reqId: request.id, method: request.method, route: request.routeOptions.url ?? 'unmatched', status: reply.statusCode, ms: Math.round(reply.elapsedTime) },
      'request',
    );
  });
  http.setErrorHandler(errorHandler);
  http.setNotFoundHandler(notFoundHandler);
  http.register(healthRoutes(deps.pool));
  http.register(openApiRoute(deps.config.PUBLIC_BASE_URL));
  http.register(leadRoutes({ authenticator, rateLimiter, leads, workspaces: deps.workspaces }));
  http.register(voice.routes);
  http.register(integrationLogPruning({
    pool: deps.pool,
    log: deps.log,
    policy: { maxAgeDays: deps.config.INTEGRATION_LOG_RETENTION_DAYS, maxPerWorkspace: deps.config.INTEGRATION_LOG_MAX_PER_WORKSPACE },
    alsoPrune: [pruneVoiceToolCalls],
  }));
  http.register(calcomWebhookRoutes({ webhooks: new CalcomWebhookService({ pool: deps.pool, log: deps.log, workspaces: deps.workspaces }) }));
  const inbound = new InboundService({ pool: deps.pool, log: deps.log, wake: () => deps.relay.wake() });
  const whatsapp = new WhatsappWebhookService({ ...deps, inbound, publicBaseUrl: deps.config.PUBLIC_BASE_URL });
  http.register(whatsappWebhookRoutes({ webhooks: whatsapp }));
  return { http, rateLimiter, authenticator };
}

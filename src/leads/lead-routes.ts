import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../auth/api-key-queries.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { rateLimitHeaders, type RateLimiter } from '../auth/rate-limiter.ts';
import { AppError } from '../shared/errors.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { LeadOp, LeadOpResult } from './lead-batch-statement.ts';
import type { LeadService } from './lead-service.ts';
import { parseLeadSubmission } from './lead-submission.ts';
import { leadResponse } from './lead-view.ts';
import type { LeadAccepted } from '../http/public-api-schemas.ts';

export const PUBLIC_BODY_LIMIT = 64 * 1024;

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null;
    /** Whether the request has been counted against its key's quota. */
    counted: boolean;
  }
}

export interface LeadRouteDeps {
  authenticator: Authenticator;
  rateLimiter: RateLimiter<LeadOp, LeadOpResult>;
  leads: LeadService;
  workspaces: WorkspaceService;
}

/** The public API (docs/API.md): thin handlers over LeadService. */
export function leadRoutes(deps: LeadRouteDeps) {
  return async function (scope: FastifyInstance): Promise<void> {
    // Bodies are read as text whatever the Content-Type says, so a client that forgets the
    // JSON header does not lose its lead; we parse and report bad JSON ourselves.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: PUBLIC_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.decorateRequest('apiKey', null);
    scope.decorateRequest('counted', false);
    // Authentication first: a request that fails it spends nothing. The handlers then count the
    // request in the same statement that does its work (one round trip, see RateLimiter).
    scope.addHook('onRequest', async (request: FastifyRequest) => {
      const auth = await deps.authenticator.authenticate(request.headers.authorization);
      if (!auth.ok) throw new AppError(auth.reason);
      request.apiKey = auth.key;
    });
    // Every authenticated request counts, also one that failed before its handler ran (a body
    // over the limit): it is counted here, and its RateLimit headers are set.
    scope.addHook('onError', async (request, reply) => {
      if (request.apiKey && !request.counted) await admit(request, reply).catch(() => {});
    });
    const admit = async (request: FastifyRequest, reply: FastifyReply, op?: LeadOp): Promise<LeadOpResult | undefined> => {
      const key = request.apiKey!;
      request.counted = true;
      const { decision, output } = await deps.rateLimiter.admit(key.id, key.hourlyLimit, op);
      void reply.headers(rateLimitHeaders(decision));
      if (!decision.allowed) throw new AppError('rate_limited', { retryAfterSeconds: decision.resetSeconds });
      return output;
    };

    scope.post('/api/public/leads', async (request, reply) => {
      const key = request.apiKey!;
      let submission;
      try {
        submission = parseLeadSubmission(parseJsonBody(request.body), key.workspace.agent?.defaultCountry);
      } catch (err) {
        await admit(request, reply); // a bad request counts, and over the limit it is a 429
        throw err;
      }
      const result = await deps.leads.submit(submission, {
        admit: (op) => admit(request, reply, op),
        workspace: key.workspace,
        settings: () => deps.workspaces.settingsOf(key.workspace),
        apiKeyId: key.id,
        livemode: key.livemode,
        clientIp: request.ip ?? null,
        userAgent: request.headers['user-agent']?.slice(0, 512) ?? null,
      });
      void reply.status(201);
      const accepted: LeadAccepted = result.channel === 'voice'
        ? { ok: true, leadId: result.leadId, status: 'in_progress', providerCallId: result.providerCallId, callQueued: true }
        : { ok: true, leadId: result.leadId, status: 'new', messageQueued: true };
      return accepted;
    });

    scope.get<{ Params: { id: string } }>('/api/public/leads/:id', async (request, reply) => {
      const key = request.apiKey!;
      const read = deps.leads.readOp(request.params.id, key.workspace, key.livemode);
      const result = await admit(request, reply, read ?? undefined);
      const found = result?.kind === 'read' ? result.lead : null;
      if (!found) throw new AppError('lead_not_found');
      return leadResponse(found, key.workspace.channel);
    });
  };
}

/**
 * `GET /api/public/leads/<id>` whose id the router cannot even decode (bad percent-encoding, over
 * its 100 characters; called from the app's frameworkErrors). No lead has such an id, so it is
 * answered as the route answers an unknown one: authenticated and counted first, then 404
 * `Lead not found.` (or 401 / 429 as the route would).
 */
export function unroutableLeadId(deps: Pick<LeadRouteDeps, 'authenticator' | 'rateLimiter'>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<never> => {
    const auth = await deps.authenticator.authenticate(request.headers.authorization);
    if (!auth.ok) throw new AppError(auth.reason);
    const { decision } = await deps.rateLimiter.admit(auth.key.id, auth.key.hourlyLimit);
    void reply.headers(rateLimitHeaders(decision));
    if (!decision.allowed) throw new AppError('rate_limited', { retryAfterSeconds: decision.resetSeconds });
    throw new AppError('lead_not_found');
  };
}

function parseJsonBody(body: unknown): unknown {
  if (typeof body !== 'string' || body.trim() === '') throw new AppError('invalid_json');
  try {
    return JSON.parse(body);
  } catch {
    throw new AppError('invalid_json');
  }
}

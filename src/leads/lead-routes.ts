import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../auth/api-key-queries.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { rateLimitHeaders, type RateLimitDecision, type RateLimiter } from '../auth/rate-limiter.ts';
import { AppError } from '../shared/errors.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { LeadService } from './lead-service.ts';
import { parseLeadSubmission } from './lead-submission.ts';
import { leadResponse } from './lead-view.ts';

export const PUBLIC_BODY_LIMIT = 64 * 1024;
const LEAD_BY_ID = '/api/public/leads/:id';

declare module 'fastify' {
  interface FastifyRequest {
    apiKey: ApiKeyRecord | null;
  }
}

export interface LeadRouteDeps {
  authenticator: Authenticator;
  rateLimiter: RateLimiter;
  leads: LeadService;
  workspaces: WorkspaceService;
}

/** The public API (spec section 4): thin handlers over LeadService. */
export function leadRoutes(deps: LeadRouteDeps) {
  return async function (scope: FastifyInstance): Promise<void> {
    // Bodies are read as text whatever the Content-Type says, so a client that forgets the
    // JSON header does not lose its lead; we parse and report bad JSON ourselves.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: PUBLIC_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.decorateRequest('apiKey', null);
    // Authentication, then the quota: a request that fails authentication spends nothing.
    // GET's lead is read by the statement that counts the request (one round trip), so the
    // hook counts every request except those, which the handler counts itself.
    scope.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
      const auth = await deps.authenticator.authenticate(request.headers.authorization);
      if (!auth.ok) throw new AppError(auth.reason);
      request.apiKey = auth.key;
      if (request.method === 'GET' && request.routeOptions.url === LEAD_BY_ID) return;
      admitted(reply, (await deps.rateLimiter.admit(auth.key.id, auth.key.hourlyLimit)).decision);
    });

    scope.post('/api/public/leads', async (request, reply) => {
      const key = request.apiKey!;
      const submission = parseLeadSubmission(parseJsonBody(request.body));
      const result = await deps.leads.submit(submission, {
        workspace: key.workspace,
        settings: () => deps.workspaces.settingsOf(key.workspace),
        apiKeyId: key.id,
        clientIp: request.ip ?? null,
        userAgent: request.headers['user-agent']?.slice(0, 512) ?? null,
      });
      void reply.status(201);
      return result.channel === 'voice'
        ? { ok: true, leadId: result.leadId, status: 'in_progress', providerCallId: result.providerCallId, callQueued: true }
        : { ok: true, leadId: result.leadId, status: 'new', messageQueued: true };
    });

    scope.get<{ Params: { id: string } }>(LEAD_BY_ID, async (request, reply) => {
      const key = request.apiKey!;
      const read = deps.leads.countedRead(request.params.id, key.workspace);
      const { decision, lead } = await deps.rateLimiter.admit(key.id, key.hourlyLimit, read ?? undefined);
      admitted(reply, decision);
      if (!lead) throw new AppError('lead_not_found');
      return leadResponse(lead, key.workspace.channel);
    });
  };
}

/** Sets the RateLimit headers; a refused request ends here with 429. */
function admitted(reply: FastifyReply, decision: RateLimitDecision): void {
  void reply.headers(rateLimitHeaders(decision));
  if (!decision.allowed) throw new AppError('rate_limited', { retryAfterSeconds: decision.resetSeconds });
}

function parseJsonBody(body: unknown): unknown {
  if (typeof body !== 'string' || body.trim() === '') throw new AppError('invalid_json');
  try {
    return JSON.parse(body);
  } catch {
    throw new AppError('invalid_json');
  }
}

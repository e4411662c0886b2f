import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyRecord } from '../workspaces/api-key-queries.ts';
import type { Authenticator } from '../auth/authenticator.ts';
import { rateLimitHeaders } from '../auth/rate-limiter.ts';
import { AppError } from '../shared/errors.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import type { Caller, LeadService } from './lead-service.ts';
import { leadResponse } from './lead-view.ts';
import type { LeadAccepted } from './public-api-schemas.ts';
import { registerRoute } from '../http/route-contract.ts';
import { getLeadContract, submitLeadContract } from './public-api-contracts.ts';
import { checkKeyUse, publishableIntake, registerPreflight, type BrowserIntakeDeps } from './publishable-intake.ts';

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
  leads: LeadService;
  workspaces: WorkspaceService;
  /** Publishable keys' origins and abuse limits (src/leads/publishable-intake.ts). */
  browser: BrowserIntakeDeps;
}

/**
 * The request's key as LeadService needs it, which counts the request first; the key's count,
 * once known, sets the RateLimit headers of whatever the answer turns out to be.
 */
function callerOf(key: ApiKeyRecord, request: FastifyRequest, reply: FastifyReply): Caller {
  // Handed over to be counted: a count that fails is not tried again by the onError hook.
  request.counted = true;
  return {
    apiKeyId: key.id,
    hourlyLimit: key.hourlyLimit,
    workspace: key.workspace,
    livemode: key.livemode,
    onCounted: (decision) => void reply.headers(rateLimitHeaders(decision)),
  };
}

/** The public API (docs/API.md): thin handlers over LeadService. */
export function leadRoutes(deps: LeadRouteDeps) {
  return async (scope: FastifyInstance): Promise<void> => {
    // Bodies are read as text whatever the Content-Type says, so a client that forgets the
    // JSON header does not lose its lead; we parse and report bad JSON ourselves.
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'string', bodyLimit: PUBLIC_BODY_LIMIT }, (_req, body, done) =>
      done(null, body),
    );
    scope.decorateRequest('apiKey', null);
    scope.decorateRequest('counted', false);
    // Authentication first: a request that fails it spends nothing. LeadService then counts the
    // request before it does anything else.
    scope.addHook('onRequest', async (request: FastifyRequest, reply) => {
      // A CORS preflight carries no key (registerPreflight answers it).
      if (request.method === 'OPTIONS') return;
      const auth = await deps.authenticator.authenticate(request.headers.authorization);
      if (!auth.ok) throw new AppError(auth.reason);
      // Which key from where (a secret key never from a browser) is decided before anything counts.
      checkKeyUse(auth.key, request, reply);
      request.apiKey = auth.key;
    });
    registerPreflight(scope, deps.browser);
    // Every authenticated request counts, also one that failed before its handler ran (a body
    // over the limit): it is counted here, its RateLimit headers are set, and it keeps its own
    // error (413 stays 413, also over the quota). A publishable key's request counts only once
    // its lead reaches LeadService: the key and its origin are public, so what its per-address and
    // per-workspace limits or its honeypot refuse (or a body over the limit) spends none of its
    // quota, and a flood from one address cannot lock the key for every other visitor. Its answer
    // carries the quota as it stands.
    scope.addHook('onError', async (request, reply) => {
      const key = request.apiKey;
      if (!key || request.counted) return;
      const caller = callerOf(key, request, reply);
      await (key.kind === 'publishable' ? deps.leads.standing(caller) : deps.leads.count(caller)).catch(() => {});
    });

    registerRoute(scope, submitLeadContract, async (request, reply) => {
      const key = request.apiKey!;
      const intake = key.kind === 'publishable' ? await publishableIntake(deps.browser, key, request) : undefined;
      const result = await deps.leads.submit(request.body, {
        ...(intake ? { intake } : {}),
        ...callerOf(key, request, reply),
        settings: () => deps.workspaces.settingsOf(key.workspace),
        clientIp: request.ip ?? null,
        userAgent: request.headers['user-agent']?.slice(0, 512) ?? null,
      });
      void reply.status(201);
      const accepted: LeadAccepted =
        result.channel === 'voice' && result.providerCallId === null
          ? { ok: true, leadId: result.leadId, status: 'unqualified', callQueued: false }
          : result.channel === 'voice'
            ? {
                ok: true,
                leadId: result.leadId,
                status: 'in_progress',
                providerCallId: result.providerCallId,
                callQueued: true,
              }
            : { ok: true, leadId: result.leadId, status: 'new', messageQueued: true };
      return accepted;
    });

    registerRoute(scope, getLeadContract, async (request, reply) => {
      const key = request.apiKey!;
      const found = await deps.leads.read(request.params.id, callerOf(key, request, reply));
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
export function unroutableLeadId(deps: Pick<LeadRouteDeps, 'authenticator' | 'leads'>) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<never> => {
    const auth = await deps.authenticator.authenticate(request.headers.authorization);
    if (!auth.ok) throw new AppError(auth.reason);
    checkKeyUse(auth.key, request, reply);
    // '' is no lead's id: counted (429 over the quota), then not found.
    await deps.leads.read('', callerOf(auth.key, request, reply));
    throw new AppError('lead_not_found');
  };
}

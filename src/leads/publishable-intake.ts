import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { IntakeLimits } from '../auth/intake-limits.ts';
import { corsHeaders, keyUseRefusal, preflightHeaders, type PublishableOrigins } from '../auth/public-key-policy.ts';
import { AppError } from '../shared/errors.ts';
import type { ApiKeyRecord } from '../workspaces/api-key-queries.ts';
import type { LeadIntake } from './lead-queries.ts';

// The public API in a browser (docs/INTAKE.md, "Embed and publishable keys"; docs/API.md, "Keys
// in a browser"): which key may be used from where, the CORS answers, and a publishable key's
// abuse rules before its lead reaches LeadService like any other.

/** A field a site's form may carry, hidden from people: a bot that fills it is refused. */
export const HONEYPOT_FIELD = 'leadintake_hp';

/** Built once per app (src/app.ts). */
export interface BrowserIntakeDeps {
  origins: PublishableOrigins;
  /** The publishable keys' per-address and per-workspace hourly limits. */
  limits: IntakeLimits;
}

const originOf = (request: FastifyRequest): string | undefined => {
  const origin = request.headers.origin;
  return typeof origin === 'string' ? origin : undefined;
};

/**
 * The key's use checked against the request (after authentication, before anything is counted):
 * throws the refusal; sets the CORS headers where the browser may read the answer. A refused
 * origin gets none, so its page cannot read even the refusal.
 */
export function checkKeyUse(key: ApiKeyRecord, request: FastifyRequest, reply: FastifyReply): void {
  const origin = originOf(request);
  const refusal = keyUseRefusal(key, { method: request.method, origin });
  // The secret-key refusal is readable by the page, so its developer learns why.
  if (origin !== undefined && (refusal === null || refusal === 'secret_key_in_browser'))
    void reply.headers(corsHeaders(origin));
  if (refusal) throw new AppError(refusal);
}

function honeypotFilled(body: unknown): boolean {
  if (typeof body !== 'string' || !body.includes(HONEYPOT_FIELD)) return false;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    // Not JSON: LeadService answers it as any bad body.
    return false;
  }
  if (typeof parsed !== 'object' || parsed === null || !(HONEYPOT_FIELD in parsed)) return false;
  const value = (parsed as Record<string, unknown>)[HONEYPOT_FIELD];
  return value !== null && value !== '' && value !== undefined;
}

/**
 * A publishable key's submission: counted against the per-address and per-workspace hourly limits
 * (every attempt, as the form's), then its honeypot; the lead's intake record.
 */
export async function publishableIntake(
  deps: BrowserIntakeDeps,
  key: ApiKeyRecord,
  request: FastifyRequest,
): Promise<LeadIntake> {
  const decision = await deps.limits.admit(key.workspaceId, request.ip ?? null);
  if (!decision.ok) throw new AppError('rate_limited', { retryAfterSeconds: decision.retryAfterSeconds });
  if (honeypotFilled(request.body)) {
    const issue = { path: [HONEYPOT_FIELD], message: 'This field must be left empty.' };
    throw new AppError('validation_failed', { issues: [issue] });
  }
  return { source: 'publishable', detail: { origin: originOf(request) ?? null } };
}

/**
 * The CORS preflight of `POST /api/public/leads`. It carries no key, so an origin is allowed when
 * some active publishable key lists it; the POST is then checked against its own key. Not an
 * operation of the API (no OpenAPI entry): a browser's question about one. Without an Origin it
 * is no preflight: 404, as before.
 */
export function registerPreflight(scope: FastifyInstance, deps: BrowserIntakeDeps): void {
  scope.route({
    method: 'OPTIONS',
    url: '/api/public/leads',
    handler: async (request, reply) => {
      const origin = originOf(request);
      if (origin === undefined) throw new AppError('route_not_found');
      if (!(await deps.origins.allowed(origin))) throw new AppError('origin_not_allowed');
      return reply.status(204).headers(preflightHeaders(origin)).send();
    },
  });
}

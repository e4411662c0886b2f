import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

// The security headers of every response, set in one place as the request arrives: a route that
// knows better (cached static files, the dashboard's page) sets its own Cache-Control over them.
// Three kinds of response, told apart by path:
//   /admin     the dashboard's single page (its own scripts and styles only)
//   /docs      Swagger UI, served from swagger-ui-dist by the service itself
//   the rest   JSON (public and admin API, health, errors), provider webhooks' answers, files:
//              nothing in them may run or be framed, and nothing is kept by a cache.
// Responses written outside Fastify's reply (the overload guard's 503, the live stream) carry
// their own few headers.

const NO_FRAMING = "frame-ancestors 'none'; base-uri 'none'";

/** The dashboard: only our own code; call recordings may come from the voice provider's storage. */
const ADMIN_CSP = [
  "default-src 'self'",
  "img-src 'self' data:",
  "media-src 'self' https:",
  NO_FRAMING,
  "form-action 'self'",
].join('; ');

/**
 * Swagger UI: its bundle and init.js are our own files (no inline script); it sets inline styles
 * and draws icons from data: URIs; "Try it out" calls the document's server (PUBLIC_BASE_URL),
 * which is this origin unless the page was opened under another name.
 */
const docsCsp = (publicOrigin: string) =>
  `default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self'; ` +
  `connect-src 'self' ${publicOrigin}; ${NO_FRAMING}; form-action 'none'`;

/** Everything else is data, never a document: nothing may load, run or frame it. */
const DATA_CSP = `default-src 'none'; ${NO_FRAMING}; form-action 'none'`;

export type ResponseKind = 'admin' | 'docs' | 'data';

export function responseKind(url: string): ResponseKind {
  if (url === '/admin' || url.startsWith('/admin/') || url.startsWith('/admin?')) return 'admin';
  if (url === '/docs' || url.startsWith('/docs/') || url.startsWith('/docs?')) return 'docs';
  return 'data';
}

/** The headers of each kind, computed once: the hook only copies them onto the reply. */
export function securityHeaderSets(publicBaseUrl: string): Record<ResponseKind, Record<string, string>> {
  const common: Record<string, string> = {
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'cross-origin-opener-policy': 'same-origin',
    // Personal data and session-bound answers must not stay in a browser's or a proxy's cache.
    'cache-control': 'no-store',
  };
  // HSTS only where the operator said the service is reached over https: sent over plain http it
  // would be ignored, and on a http-only installation it must not lock browsers out later.
  // No includeSubDomains: the operator's other hosts are not ours to decide for.
  const url = new URL(publicBaseUrl);
  if (url.protocol === 'https:') common['strict-transport-security'] = 'max-age=31536000';
  return {
    admin: { ...common, 'content-security-policy': ADMIN_CSP },
    docs: { ...common, 'content-security-policy': docsCsp(url.origin) },
    data: { ...common, 'content-security-policy': DATA_CSP },
  };
}

/** Sets the headers of the request's kind on the reply (a route may then set its own over them). */
export type ApplySecurityHeaders = (request: FastifyRequest, reply: FastifyReply) => void;

export function securityHeaders(publicBaseUrl: string): ApplySecurityHeaders {
  const sets = securityHeaderSets(publicBaseUrl);
  return (request, reply) => void reply.headers(sets[responseKind(request.url)]);
}

/**
 * Installs them on the root instance as the first hook, so 404s and errors carry them too. The
 * requests the router cannot even decode skip every hook: buildApp's frameworkErrors calls
 * `apply` itself.
 */
export function installSecurityHeaders(http: FastifyInstance, apply: ApplySecurityHeaders): void {
  http.addHook('onRequest', async (request, reply) => apply(request, reply));
}

import { STATUS_CODES } from 'node:http';
import type { Duplex } from 'node:stream';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../shared/errors.ts';

interface Rendering {
  status: number;
  body: Record<string, unknown>;
}

// The public strings are a contract (docs/API.md): keep them byte for byte. None of them
// repeats anything of the request (path, headers, body): a client's bytes never come back. The
// OpenAPI document lists them too (src/leads/public-api-schemas.ts); test/api/openapi.test.ts compares both.
export function renderError(err: AppError): Rendering {
  const d = err.details;
  const table: Record<ErrorCode, () => Rendering> = {
    invalid_json: () => ({ status: 400, body: { error: 'Request body must be valid JSON.' } }),
    validation_failed: () => ({ status: 400, body: { error: 'Validation failed.', issues: d.issues ?? [] } }),
    consent_required: () => ({ status: 400, body: { error: '`consent` must be true.' } }),
    missing_authorization: () => ({ status: 401, body: { error: 'Missing Authorization header.' } }),
    bad_scheme: () => ({
      status: 401,
      body: { error: 'Authorization header must use the `Bearer <api key>` scheme.' },
    }),
    invalid_key: () => ({ status: 401, body: { error: 'API key is invalid or revoked.' } }),
    // Keys in a browser (docs/API.md, "Keys in a browser"): the spec is silent; no request
    // without an Origin header, nor one with a secret key and no Origin, ever gets these.
    secret_key_in_browser: () => ({
      status: 401,
      body: {
        error: 'Secret keys must stay on your server; use a publishable key (li_pub_…) in a browser.',
      },
    }),
    publishable_key_read: () => ({
      status: 403,
      body: { error: 'A publishable key can only create leads; read them with a secret key on your server.' },
    }),
    origin_not_allowed: () => ({
      status: 403,
      body: { error: "This origin is not in the publishable key's allowed origins." },
    }),
    workspace_not_found: () => ({ status: 404, body: { error: 'Workspace not found.' } }),
    lead_not_found: () => ({ status: 404, body: { error: 'Lead not found.' } }),
    route_not_found: () => ({ status: 404, body: { error: 'Not found.' } }),
    bad_request: () => ({ status: 400, body: { error: 'Bad request.' } }),
    headers_too_large: () => ({ status: 431, body: { error: 'Request headers are too large.' } }),
    request_timeout: () => ({ status: 408, body: { error: 'Request timed out.' } }),
    service_busy: () => ({ status: 503, body: { error: 'Service is busy; retry shortly.' } }),
    duplicate_phone: () => ({
      status: 409,
      body: {
        error: 'duplicate_phone',
        message: 'A lead with this phone number already exists in the workspace.',
        ...(d.leadId ? { leadId: d.leadId } : {}),
      },
    }),
    rate_limited: () => ({ status: 429, body: { error: 'Rate limit exceeded.' } }),
    body_too_large: () => ({
      status: 413,
      body: { error: 'Request body is too large.', message: 'The request body must be at most 64 KiB.' },
    }),
    unsupported_media_type: () => ({ status: 415, body: { error: 'Unsupported media type.' } }),
    voice_dispatch_failed: () => ({ status: 502, body: { error: 'voice_dispatch_failed', message: d.message ?? '' } }),
    webhook_signature_invalid: () => ({ status: 401, body: { error: 'Invalid webhook signature.' } }),
    webhook_body_too_large: () => ({
      status: 413,
      body: { error: 'Request body is too large.', message: d.message ?? 'The request body must be at most 256 KiB.' },
    }),
    // The operators' dashboard (docs/DASHBOARD.md).
    not_signed_in: () => ({ status: 401, body: { error: 'Sign in required.' } }),
    sign_in_failed: () => ({ status: 401, body: { error: 'Email or password is incorrect.' } }),
    sign_in_throttled: () => ({ status: 429, body: { error: 'Too many sign-in attempts; retry later.' } }),
    too_many_streams: () => ({
      status: 429,
      body: { error: 'Too many live-update streams for this session: close other dashboard tabs.' },
    }),
    csrf_failed: () => ({ status: 403, body: { error: 'Missing or invalid CSRF token.' } }),
    forbidden: () => ({ status: 403, body: { error: 'Your role in this workspace does not allow this.' } }),
    webhook_endpoint_not_found: () => ({
      status: 404,
      body: { error: 'Webhook endpoint not found in this workspace.' },
    }),
    // Providers, API keys and team (docs/DASHBOARD.md, "Providers, API keys and team").
    api_key_not_found: () => ({ status: 404, body: { error: 'API key not found in this workspace.' } }),
    lead_source_not_found: () => ({ status: 404, body: { error: 'Lead source not found in this workspace.' } }),
    member_not_found: () => ({ status: 404, body: { error: 'Member not found in this workspace.' } }),
    last_owner: () => ({
      status: 409,
      body: { error: 'A workspace keeps at least one owner: make another member owner first.' },
    }),
    already_member: () => ({
      status: 409,
      body: { error: 'That e-mail address is already a member of this workspace.' },
    }),
    invite_not_found: () => ({
      status: 404,
      body: { error: 'Invitation not found, already used or expired: ask an owner for a new link.' },
    }),
    invite_account_exists: () => ({
      status: 409,
      body: { error: 'An account with this e-mail address exists: sign in to accept the invitation.' },
    }),
    invite_other_account: () => ({
      status: 403,
      body: { error: 'This invitation is for another e-mail address: sign in with that address.' },
    }),
    note_not_found: () => ({ status: 404, body: { error: 'Note not found.' } }),
    dead_letter_not_found: () => ({
      status: 404,
      body: { error: 'No such dead-lettered turn in this workspace (it may have been retried already).' },
    }),
    settings_conflict: () => ({
      status: 409,
      body: {
        error: 'These settings were changed meanwhile.',
        message: 'Someone saved them after you loaded the page: reload it and make your edits again.',
      },
    }),
    // A per-workspace cap of the installation (docs/SECURITY.md, "Quotas"): the issue says which and how many.
    limit_reached: () => ({
      status: 409,
      body: { error: 'Workspace limit reached.', issues: [{ path: [], message: d.message ?? '' }] },
    }),
    lead_status_conflict: () => ({
      status: 409,
      body: { error: "The lead's status does not allow this.", status: d.message ?? '' },
    }),
    // Call now, Skip or Stop follow-ups cannot be done now: the message says why (kill switch, do-not-contact…).
    contact_plan_conflict: () => ({
      status: 409,
      body: { error: 'The follow-ups do not allow this now.', message: d.message ?? '' },
    }),
    // Another operator took the lead over first: the message says who and when ("Taken over by Ada a moment ago.").
    lead_taken: () => ({
      status: 409,
      body: { error: 'Someone else has taken this lead over.', message: d.message ?? '' },
    }),
    internal: () => ({ status: 500, body: { error: 'Internal server error.' } }),
  };
  const r = table[err.code]();
  return { status: r.status, body: { ok: false, ...r.body } };
}

/** Translates Fastify's own errors (body parsing, limits, routing) into our vocabulary. */
function toAppError(err: FastifyError | AppError | Error): AppError {
  if (err instanceof AppError) return err;
  const code = (err as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('body_too_large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new AppError('unsupported_media_type');
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_JSON_BODY')
    return new AppError('invalid_json');
  if (isUnroutable(err)) return new AppError('route_not_found');
  const status = (err as FastifyError).statusCode;
  if (status === 400 && code?.startsWith('FST_ERR_CTP')) return new AppError('invalid_json');
  // Any other client error Fastify detects (bad Content-Length, ...) stays a 4xx.
  if (status !== undefined && status >= 400 && status < 500) return new AppError('bad_request');
  return new AppError('internal');
}

/**
 * A path the router cannot match: a parameter that is not valid percent-encoding
 * (FST_ERR_BAD_URL) or longer than the router's 100 characters (FST_ERR_MAX_PARAM_LENGTH). No
 * resource has such a name, so it is a 404 (Fastify's own answers, 400 and 414, echo the path).
 */
export function isUnroutable(err: Error): boolean {
  const code = (err as FastifyError).code;
  return code === 'FST_ERR_BAD_URL' || code === 'FST_ERR_MAX_PARAM_LENGTH';
}

export function errorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const appError = toAppError(err);
  if (appError.code === 'internal') request.log.error({ err }, 'unhandled error');
  if (appError.details.retryAfterSeconds !== undefined)
    reply.header('retry-after', String(appError.details.retryAfterSeconds));
  const { status, body } = renderError(appError);
  void reply.status(status).send(body);
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = renderError(new AppError('route_not_found'));
  void reply.status(status).send(body);
}

/**
 * Errors of Node's HTTP parser, before Fastify has a request (Fastify's `clientErrorHandler`):
 * a malformed request line, header or Content-Length, a broken chunked body, headers over the
 * limit (431), a request that took too long (408). Written straight to the socket, in our shape,
 * then the connection is closed: after a framing error nothing more on it can be trusted.
 */
export function clientErrorHandler(this: FastifyInstance, err: Error & { code?: string }, socket: Duplex): void {
  // A reset connection has nobody to answer (Node's docs on 'clientError').
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const appError =
    err.code === 'HPE_HEADER_OVERFLOW'
      ? new AppError('headers_too_large')
      : err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new AppError('request_timeout')
        : new AppError('bad_request');
  this.log.debug({ code: err.code }, 'client error');
  // As Node does: answer only if no response of this connection has started already.
  const inFlight = (socket as Duplex & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const { status, body } = renderError(appError);
    const text = JSON.stringify(body);
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(text)}\r\nConnection: close\r\n\r\n${text}`,
    );
  }
  socket.destroy();
}

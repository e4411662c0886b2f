import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, type ErrorCode } from '../shared/errors.ts';

interface Rendering {
  status: number;
  body: Record<string, unknown>;
}

// The public strings are a contract (spec sections 5, 7): keep them byte for byte.
function render(err: AppError): Rendering {
  const d = err.details;
  const table: Record<ErrorCode, () => Rendering> = {
    invalid_json: () => ({ status: 400, body: { error: 'Request body must be valid JSON.' } }),
    validation_failed: () => ({ status: 400, body: { error: 'Validation failed.', issues: d.issues ?? [] } }),
    consent_required: () => ({ status: 400, body: { error: '`consent` must be true.' } }),
    missing_authorization: () => ({ status: 401, body: { error: 'Missing Authorization header.' } }),
    bad_scheme: () => ({ status: 401, body: { error: 'Authorization header must use the `Bearer <api key>` scheme.' } }),
    invalid_key: () => ({ status: 401, body: { error: 'API key is invalid or revoked.' } }),
    workspace_not_found: () => ({ status: 404, body: { error: 'Workspace not found.' } }),
    lead_not_found: () => ({ status: 404, body: { error: 'Lead not found.' } }),
    route_not_found: () => ({ status: 404, body: { error: 'Not found.' } }),
    bad_request: () => ({ status: 400, body: { error: 'Bad request.' } }),
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
    internal: () => ({ status: 500, body: { error: 'Internal server error.' } }),
  };
  const r = table[err.code]();
  return { status: r.status, body: { ok: false, ...r.body } };
}

/** Translates Fastify's own errors (body parsing, limits) into our vocabulary. */
function toAppError(err: FastifyError | AppError | Error): AppError {
  if (err instanceof AppError) return err;
  const code = (err as FastifyError).code;
  if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return new AppError('body_too_large');
  if (code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new AppError('unsupported_media_type');
  if (code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || code === 'FST_ERR_CTP_INVALID_JSON_BODY') return new AppError('invalid_json');
  const status = (err as FastifyError).statusCode;
  if (status === 400 && code?.startsWith('FST_ERR_CTP')) return new AppError('invalid_json');
  // Any other client error Fastify detects (bad URL, bad Content-Length, ...) stays a 4xx.
  if (status !== undefined && status >= 400 && status < 500) return new AppError('bad_request');
  return new AppError('internal');
}

export function errorHandler(err: FastifyError | Error, request: FastifyRequest, reply: FastifyReply): void {
  const appError = toAppError(err);
  if (appError.code === 'internal') request.log.error({ err }, 'unhandled error');
  if (appError.details.retryAfterSeconds !== undefined) reply.header('retry-after', String(appError.details.retryAfterSeconds));
  const { status, body } = render(appError);
  void reply.status(status).send(body);
}

export function notFoundHandler(_request: FastifyRequest, reply: FastifyReply): void {
  const { status, body } = render(new AppError('route_not_found'));
  void reply.status(status).send(body);
}

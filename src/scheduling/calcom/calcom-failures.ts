import { failureMessage, requestFailure, type ResponseHeaders } from '../../shared/provider-request.ts';
import type { ProviderFailure } from '../scheduling-provider.ts';
import { parseJson } from './calcom-responses.ts';

// How a failed Cal.com attempt becomes a ProviderFailure: its kind decides the client's retries,
// `ambiguous` whether a write may have happened anyway.

export type Attempt =
  | { kind: 'response'; status: number; headers: ResponseHeaders; text: string }
  | { kind: 'network'; message: string; maybeProcessed: boolean };

export function httpFailure(
  status: number,
  headers: ResponseHeaders,
  text: string,
): { error: ProviderFailure; providerMessage: string } {
  // Envelope: {status:"error", error:{code, message, details}} (details.message may be a
  // class-validator array); some filters also repeat `message` at top level.
  const body = parseJson(text) as
    | { message?: unknown; error?: { code?: unknown; message?: unknown; details?: { message?: unknown } } }
    | undefined;
  const code = typeof body?.error?.code === 'string' ? body.error.code : undefined;
  const parts = [body?.error?.message, body?.error?.details?.message, body?.message]
    .flatMap((m) => (Array.isArray(m) ? [m.filter((x) => typeof x === 'string').join('; ')] : [m]))
    .filter((m): m is string => typeof m === 'string' && m !== '');
  const unique = [...new Set(parts)];
  // Non-JSON bodies (proxy error pages) are shortened rather than dumped into logs.
  const providerMessage = unique.length > 0 ? unique.join(' — ') : text.trim().slice(0, 200) || '(empty body)';
  const kind: ProviderFailure['kind'] =
    status === 401 || status === 403
      ? 'unauthorized'
      : status === 404
        ? 'not_found'
        : status === 429
          ? 'rate_limited'
          : status >= 500
            ? 'unavailable'
            : 'bad_request';
  const error: ProviderFailure = {
    kind,
    status,
    message: `Cal.com answered ${status}${code ? ` ${code}` : ''}: ${providerMessage}`,
  };
  if (code) error.code = code;
  const retryAfterMs = parseRetryAfter(headers.get('retry-after'));
  if (retryAfterMs !== undefined && (kind === 'rate_limited' || kind === 'unavailable'))
    error.retryAfterMs = retryAfterMs;
  return { error, providerMessage };
}

function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value.trim())) return Math.round(Number(value) * 1000);
  const at = Date.parse(value); // the HTTP-date form
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

export function networkFailure(message: string): { error: ProviderFailure; providerMessage: string } {
  return { error: { kind: 'network', message }, providerMessage: message };
}

export function describeNetworkError(err: unknown, timeoutMs: number): Attempt {
  const failure = requestFailure(err);
  // These fail before a byte of the request reaches Cal.com, so a retry cannot double-book.
  const neverSent =
    !failure.timedOut &&
    (failure.code === 'ECONNREFUSED' || failure.code === 'ENOTFOUND' || failure.code === 'EAI_AGAIN');
  return { kind: 'network', message: failureMessage(failure, 'Cal.com', timeoutMs), maybeProcessed: !neverSent };
}

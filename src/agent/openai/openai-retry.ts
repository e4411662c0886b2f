// The official openai SDK's retry rules (openai-node `shouldRetry`, `retryRequest`,
// `calculateDefaultRetryTimeoutMillis`), as pure functions so they can be tested without waiting.
// One deliberate difference lives in the client: a 429 `insufficient_quota` is never retried.

import type { ResponseHeaders } from '../../shared/provider-request.ts';

export const INITIAL_RETRY_DELAY_MS = 500;
export const MAX_RETRY_DELAY_MS = 8_000;
/** A server's requested wait longer than this is not "reasonable": the default backoff is used instead. */
export const MAX_HONOURED_RETRY_AFTER_MS = 60_000;

/** Whether an error response is worth another attempt. `x-should-retry` from the server wins. */
export function shouldRetryResponse(status: number, headers: ResponseHeaders): boolean {
  const header = headers.get('x-should-retry');
  if (header === 'true') return true;
  if (header === 'false') return false;
  // Request timeout, lock timeout, rate limit, server errors.
  return status === 408 || status === 409 || status === 429 || status >= 500;
}

/**
 * How long to wait before retry number `retryIndex` (0 for the first retry). `retry-after-ms`
 * then `retry-after` (seconds or an HTTP date) are obeyed when they ask for more than 0 and at
 * most 60 s; otherwise exponential backoff from 0.5 s, capped at 8 s, minus up to 25 % jitter.
 */
export function retryDelayMs(
  headers: ResponseHeaders | undefined,
  retryIndex: number,
  nowMs: number,
  random: () => number,
): number {
  const asked = requestedDelayMs(headers, nowMs);
  if (asked !== undefined && asked > 0 && asked <= MAX_HONOURED_RETRY_AFTER_MS) return asked;
  const base = Math.min(INITIAL_RETRY_DELAY_MS * 2 ** retryIndex, MAX_RETRY_DELAY_MS);
  return Math.round(base * (1 - random() * 0.25));
}

/** The wait the server asked for (`retry-after-ms`, then `retry-after` in seconds or as a date), if any. */
export function requestedDelayMs(headers: ResponseHeaders | undefined, nowMs: number): number | undefined {
  if (!headers) return undefined;
  // `retry-after-ms` is not standard, but OpenAI sends it and the SDK prefers it.
  const ms = parseFloat(headers.get('retry-after-ms') ?? '');
  if (!Number.isNaN(ms)) return ms;
  const value = headers.get('retry-after')?.trim();
  if (!value) return undefined;
  const seconds = parseFloat(value);
  if (!Number.isNaN(seconds)) return seconds * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : at - nowMs;
}

/**
 * A server's words for "the conversation is longer than the model's context": OpenAI's
 * `context_length_exceeded`, and the phrasings of compatible servers. Retrying cannot fix it.
 */
export function isContextOverflow(error: { message?: string; code?: string }): boolean {
  if (error.code === 'context_length_exceeded') return true;
  const overflow = /context[\w ]{0,30}(too long|exceed)|maximum context length|context window|too many tokens/i;
  return overflow.test(error.message ?? '');
}

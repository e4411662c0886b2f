import type { EgressOptions } from './egress-policy.ts';
import { failureMessage, providerRequest, requestFailure } from './provider-request.ts';

// A read-only lookup that tells whether a workspace's provider setting is right (`leadintake
// workspace verify`): each provider client answers in this shape, so the command can say which
// setting is wrong without knowing the provider's wire format.

export type SettingsLookup<T> =
  | { ok: true; value: T }
  /** `httpStatus` undefined: the provider was not reached. `code` is the provider's own error code. */
  | { ok: false; httpStatus?: number; code?: string; message: string };

export type LookupFailure = Extract<SettingsLookup<unknown>, { ok: false }>;

/** One GET with a timeout, read as JSON; `json` is undefined when the body is not JSON (`text` is the body as sent). */
export async function getJson(
  provider: string,
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
  name: string,
  egress?: EgressOptions,
): Promise<{ ok: true; status: number; json: unknown; text: string } | { ok: false; failure: LookupFailure }> {
  try {
    const init = {
      method: 'GET',
      headers: { accept: 'application/json', ...headers },
      signal: AbortSignal.timeout(timeoutMs),
      ...(egress ? { egress } : {}),
    };
    const res = await providerRequest(provider, url, init);
    const text = res.text;
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    return { ok: true, status: res.status, json, text };
  } catch (err) {
    return { ok: false, failure: { ok: false, message: failureMessage(requestFailure(err), name, timeoutMs) } };
  }
}

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

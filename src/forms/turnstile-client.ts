import { providerRequest } from '../shared/provider-request.ts';

// Cloudflare Turnstile's server-side check
// (https://developers.cloudflare.com/turnstile/get-started/server-side-validation/): POST the
// widget's token (`cf-turnstile-response`), the secret key and the visitor's address to
// siteverify, form-encoded; the answer is JSON `{ success, "error-codes": [...] }`. A token is
// valid for 300 s and only once. Tests and the demo point TURNSTILE_VERIFY_URL at the simulator
// (src/simulators/turnstile/).

export const TURNSTILE_RESPONSE_FIELD = 'cf-turnstile-response';
const TIMEOUT_MS = 5_000;

export type TurnstileVerdict = { ok: true } | { ok: false; reason: string };

export class TurnstileClient {
  readonly #url: string;

  constructor(verifyUrl: string) {
    this.#url = verifyUrl;
  }

  /** Fails closed: no answer, or one we cannot read, is no pass. */
  async verify(secret: string, token: string, remoteIp: string | null): Promise<TurnstileVerdict> {
    if (!token) return { ok: false, reason: 'missing-input-response' };
    const body = new URLSearchParams({ secret, response: token, ...(remoteIp ? { remoteip: remoteIp } : {}) });
    try {
      const res = await providerRequest('turnstile', this.#url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: body.toString(),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      const answer = JSON.parse(res.text) as { success?: unknown; 'error-codes'?: unknown };
      if (res.ok && answer.success === true) return { ok: true };
      const codes = Array.isArray(answer['error-codes']) ? answer['error-codes'].map(String) : [];
      return { ok: false, reason: codes.join(',') || `http ${res.status}` };
    } catch (err) {
      return { ok: false, reason: (err as Error).name || 'unreachable' };
    }
  }
}

import type { PlaceCallRequest, PlaceCallResult, VoiceProvider } from './voice-provider.ts';

/**
 * Vapi REST client (providers.md §1). `POST {base}/call` with the workspace's private key.
 * Vapi rejects unknown properties, so lead ids travel in `assistantOverrides.metadata`,
 * never in a top-level `metadata`.
 */
export class VapiClient implements VoiceProvider {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  constructor(opts: { baseUrl: string; timeoutMs: number }) {
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs;
  }

  async placeCall(req: PlaceCallRequest): Promise<PlaceCallResult> {
    const body = {
      assistantId: req.assistantId,
      phoneNumberId: req.phoneNumberId,
      // Vapi caps customer.name at 40 characters; the full name travels in variableValues.
      customer: { number: req.customer.number, name: [...req.customer.name].slice(0, 40).join('') },
      assistantOverrides: { variableValues: req.variableValues, metadata: req.metadata },
    };
    let response: Response;
    let text: string;
    try {
      response = await fetch(`${this.#baseUrl}/call`, {
        method: 'POST',
        headers: { authorization: `Bearer ${req.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = await response.text();
    } catch (err) {
      return { ok: false, message: describeFetchFailure(err, this.#timeoutMs) };
    }
    if (!response.ok) return { ok: false, message: text, httpStatus: response.status };
    let call: { id?: unknown; status?: unknown };
    try {
      call = JSON.parse(text);
    } catch {
      return { ok: false, message: `Voice provider answered ${response.status} with a body that is not JSON.` };
    }
    if (typeof call.id !== 'string' || call.id === '') {
      return { ok: false, message: `Voice provider answered ${response.status} without a call id.` };
    }
    return { ok: true, providerCallId: call.id, status: typeof call.status === 'string' ? call.status : 'queued' };
  }
}

function describeFetchFailure(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string };
  if (e.name === 'TimeoutError' || e.name === 'AbortError') {
    return `The voice provider did not answer within ${timeoutMs} ms.`;
  }
  const cause = e.cause?.code ?? e.cause?.message ?? e.message ?? 'unknown error';
  return `Could not reach the voice provider (${cause}).`;
}

import {
  failureMessage,
  providerRequest,
  requestFailure,
  type ProviderResponse,
} from '../../shared/provider-request.ts';
import type {
  CallControl,
  CallControlResult,
  LookupResult,
  PlaceCallRequest,
  PlaceCallResult,
  ProviderCall,
  ProviderExchange,
  VoiceProvider,
  VoiceSettingsChecker,
} from '../voice-provider.ts';

/**
 * Vapi REST client (Vapi's API docs). `POST {base}/call` with the workspace's private key.
 * Vapi rejects unknown properties, so lead ids travel in `assistantOverrides.metadata`,
 * never in a top-level `metadata`.
 */
export class VapiClient implements VoiceProvider, VoiceSettingsChecker, CallControl {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;

  constructor(opts: { baseUrl: string; timeoutMs: number }) {
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs;
  }

  async placeCall(req: PlaceCallRequest): Promise<PlaceCallResult> {
    return (await this.placeCallTraced(req)).result;
  }

  async placeCallTraced(req: PlaceCallRequest): Promise<{ result: PlaceCallResult; exchange: ProviderExchange }> {
    const sent = await this.#send('POST', '/call', req.apiKey, vapiCallBody(req));
    return { result: callResult(sent), exchange: sent.exchange };
  }

  getAssistant(apiKey: string, id: string): Promise<LookupResult> {
    return this.#lookup(apiKey, `/assistant/${encodeURIComponent(id)}`);
  }

  getPhoneNumber(apiKey: string, id: string): Promise<LookupResult> {
    return this.#lookup(apiKey, `/phone-number/${encodeURIComponent(id)}`);
  }

  async getCall(apiKey: string, id: string): Promise<CallControlResult<ProviderCall>> {
    const sent = await this.#send('GET', `/call/${encodeURIComponent(id)}`, apiKey);
    if (!sent.ok || !sent.response.ok) return controlFailure(sent);
    const call = parseObject(sent.text);
    if (!call || typeof call.id !== 'string' || typeof call.status !== 'string') {
      return { ok: false, notFound: false, message: 'Voice provider answered a call lookup without a call.' };
    }
    const plan = call.schedulePlan as { earliestAt?: unknown } | undefined;
    const earliestAt = typeof plan?.earliestAt === 'string' ? new Date(plan.earliestAt) : null;
    const at = earliestAt && !Number.isNaN(earliestAt.getTime()) ? earliestAt : null;
    return { ok: true, value: { id: call.id, status: call.status, earliestAt: at, raw: call } };
  }

  /** `DELETE /call/{id}` ("Delete Call"): its body (DeleteCallDTO) is required, and empty. */
  async deleteCall(apiKey: string, id: string): Promise<CallControlResult<null>> {
    const sent = await this.#send('DELETE', `/call/${encodeURIComponent(id)}`, apiKey, {});
    return sent.ok && sent.response.ok ? { ok: true, value: null } : controlFailure(sent);
  }

  async #lookup(apiKey: string, path: string): Promise<LookupResult> {
    const sent = await this.#send('GET', path, apiKey);
    if (!sent.ok) return { ok: false, message: sent.message, exchange: sent.exchange };
    if (sent.response.ok) return { ok: true, exchange: sent.exchange };
    return { ok: false, httpStatus: sent.response.status, message: sent.text, exchange: sent.exchange };
  }

  async #send(method: string, path: string, apiKey: string, body?: unknown): Promise<Sent> {
    const started = Date.now();
    const exchange: ProviderExchange = { method, path, ...(body === undefined ? {} : { requestBody: body }), ms: 0 };
    try {
      const response = await providerRequest('vapi', `${this.#baseUrl}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      const text = response.text;
      Object.assign(exchange, { httpStatus: response.status, responseText: text, ms: Date.now() - started });
      return { ok: true as const, response, text, exchange };
    } catch (err) {
      const message = failureMessage(requestFailure(err), 'the voice provider', this.#timeoutMs);
      Object.assign(exchange, { error: message, ms: Date.now() - started });
      return { ok: false as const, message, exchange };
    }
  }
}

function callResult(sent: Sent): PlaceCallResult {
  if (!sent.ok) return { ok: false, message: sent.message };
  const { response, text } = sent;
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

/** A call lookup or deletion that failed: a network error, or Vapi's status (its text may name the lead). */
function controlFailure(sent: Sent): { ok: false; notFound: boolean; message: string } {
  if (!sent.ok) return { ok: false, notFound: false, message: sent.message };
  return { ok: false, notFound: sent.response.status === 404, message: `HTTP ${sent.response.status}` };
}

function parseObject(text: string): Record<string, unknown> | null {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

type Sent =
  | { ok: true; response: ProviderResponse; text: string; exchange: ProviderExchange }
  | { ok: false; message: string; exchange: ProviderExchange };

/** The exact `POST /call` body for a request (also what the integration log shows). */
export function vapiCallBody(req: PlaceCallRequest): Record<string, unknown> {
  return {
    assistantId: req.assistantId,
    phoneNumberId: req.phoneNumberId,
    // Vapi caps customer.name at 40 characters; the full name travels in variableValues.
    customer: { number: req.customer.number, name: [...req.customer.name].slice(0, 40).join('') },
    assistantOverrides: {
      variableValues: req.variableValues,
      metadata: req.metadata,
      ...(req.server ? { server: req.server } : {}),
      ...(req.serverMessages ? { serverMessages: req.serverMessages } : {}),
      ...(req.tools && req.tools.length > 0 ? { 'tools:append': req.tools } : {}),
      ...(req.voicemail ? voicemailOverrides(req.voicemail.message) : {}),
    },
    // Vapi answers 201 with the call (status `scheduled`) and dials it at `earliestAt`.
    ...(req.earliestAt ? { schedulePlan: { earliestAt: req.earliestAt.toISOString() } } : {}),
  };
}

/**
 * Vapi's own detection (`provider: 'vapi'`, the one its docs recommend). Without a
 * `voicemailMessage` Vapi hangs up on a machine ("If unspecified, it will hang up"), so a null
 * message sends none; an assistant that has a voicemail message of its own would still say it.
 */
function voicemailOverrides(message: string | null): Record<string, unknown> {
  return { voicemailDetection: { provider: 'vapi' }, ...(message !== null ? { voicemailMessage: message } : {}) };
}

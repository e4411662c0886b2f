import {
  failureMessage,
  providerRequest,
  requestFailure,
  type ProviderResponse,
} from '../../shared/provider-request.ts';
import { getJson, isRecord, type SettingsLookup } from '../../shared/settings-lookup.ts';
import type {
  MessagingProvider,
  SendFailureKind,
  SendMessageRequest,
  SendMessageResult,
} from '../messaging-provider.ts';

// Meta WhatsApp Cloud API client (Meta's WhatsApp Cloud API docs): `POST {base}/{phone-number-id}/messages`
// with the workspace's access token. A 200 only means "accepted"; the delivery outcome arrives
// later as status webhooks (meta-webhook-parse.ts). Graph has no idempotency key for sends, so a
// caller that retries after a timeout may deliver twice; the `transient` kind says "may retry",
// not "certainly not sent".

/** The Graph API version of Meta's WhatsApp Cloud API documentation we follow; the version is part of the base URL. */
export const META_GRAPH_DEFAULT_BASE_URL = 'https://graph.facebook.com/v23.0';

export interface MetaClientOptions {
  /** Graph base URL including the version, e.g. `https://graph.facebook.com/v23.0` (WHATSAPP_GRAPH_BASE_URL). */
  baseUrl?: string;
  /** System-user (or user) access token with whatsapp_business_messaging on the number. */
  accessToken: string;
  phoneNumberId: string;
  /** The workspace's approved first-contact template, its body using {{1}} for the lead's first name. */
  templateName: string;
  /** The template's language code as approved, e.g. `en_US` or `de`. */
  templateLanguage: string;
  /** Default 10 000 ms. */
  timeoutMs?: number;
}

/** Graph's error envelope (Meta's WhatsApp OpenAPI document GraphAPIError). */
interface GraphError {
  message?: unknown;
  type?: unknown;
  code?: unknown;
  error_subcode?: unknown;
  is_transient?: unknown;
  error_data?: { details?: unknown };
}

export class MetaWhatsAppClient implements MessagingProvider {
  readonly name = 'meta';
  readonly #url: string;
  readonly #numberUrl: string;
  readonly #accessToken: string;
  readonly #templateName: string;
  readonly #templateLanguage: string;
  readonly #timeoutMs: number;

  constructor(opts: MetaClientOptions) {
    const base = (opts.baseUrl ?? META_GRAPH_DEFAULT_BASE_URL).replace(/\/+$/, '');
    this.#numberUrl = `${base}/${encodeURIComponent(opts.phoneNumberId)}`;
    this.#url = `${this.#numberUrl}/messages`;
    this.#accessToken = opts.accessToken;
    this.#templateName = opts.templateName;
    this.#templateLanguage = opts.templateLanguage;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
  }

  async send(request: SendMessageRequest): Promise<SendMessageResult> {
    let response: ProviderResponse;
    let text: string;
    try {
      response = await providerRequest('meta', this.#url, {
        method: 'POST',
        headers: { authorization: `Bearer ${this.#accessToken}`, 'content-type': 'application/json' },
        body: JSON.stringify(this.#body(request)),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = response.text;
    } catch (err) {
      return {
        ok: false,
        kind: 'transient',
        message: this.#scrub(failureMessage(requestFailure(err), 'WhatsApp Cloud API', this.#timeoutMs)),
      };
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      // A 200 that is not JSON came from something in between (a proxy); the send may or may not have happened.
      const kind = response.ok ? 'transient' : classifyMetaError(undefined, response.status);
      return {
        ok: false,
        kind,
        message: `WhatsApp Cloud API answered ${response.status} with a body that is not JSON.`,
        httpStatus: response.status,
      };
    }
    if (!response.ok) return this.#failure(json, response.status);
    const id = (json as { messages?: Array<{ id?: unknown }> }).messages?.[0]?.id;
    if (typeof id !== 'string' || id === '') {
      return {
        ok: false,
        kind: 'transient',
        message: `WhatsApp Cloud API answered ${response.status} without a message id.`,
        httpStatus: response.status,
      };
    }
    return { ok: true, providerMessageId: id };
  }

  /**
   * `GET /{version}/{phone-number-id}` (default fields): does the token see this WhatsApp number?
   * Graph answers 401/190 for a bad token and 400/100 (subcode 33) for an id it cannot load.
   */
  async getPhoneNumber(): Promise<
    SettingsLookup<{ displayPhoneNumber: string; verifiedName?: string; qualityRating?: string }>
  > {
    const got = await getJson(
      'meta',
      this.#numberUrl,
      { authorization: `Bearer ${this.#accessToken}` },
      this.#timeoutMs,
      'WhatsApp Cloud API',
    );
    if (!got.ok) return { ...got.failure, message: this.#scrub(got.failure.message) };
    const json = isRecord(got.json) ? got.json : {};
    if (got.status >= 200 && got.status < 300) {
      if (typeof json.display_phone_number !== 'string')
        return {
          ok: false,
          message: 'WhatsApp Cloud API sent an unexpected phone-number body: is WHATSAPP_GRAPH_BASE_URL right?',
        };
      const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
      const verifiedName = str(json.verified_name);
      const qualityRating = str(json.quality_rating);
      return {
        ok: true,
        value: {
          displayPhoneNumber: json.display_phone_number,
          ...(verifiedName ? { verifiedName } : {}),
          ...(qualityRating ? { qualityRating } : {}),
        },
      };
    }
    const error = (isRecord(json.error) ? json.error : {}) as GraphError;
    const message =
      typeof error.message === 'string' && error.message !== ''
        ? error.message
        : `WhatsApp Cloud API answered ${got.status}.`;
    return {
      ok: false,
      httpStatus: got.status,
      message: this.#scrub(message),
      ...(typeof error.code === 'number' ? { code: String(error.code) } : {}),
    };
  }

  #body(request: SendMessageRequest): Record<string, unknown> {
    // Graph accepts `+` and formatting, but its examples and the wa_id it answers are bare digits.
    const base = { messaging_product: 'whatsapp', recipient_type: 'individual', to: request.to.replace(/\D/g, '') };
    const content = request.content;
    if (content.kind === 'text') return { ...base, type: 'text', text: { body: content.text } };
    // A follow-up's own template, or the workspace's first-contact one.
    const ref = content.ref && 'name' in content.ref ? content.ref : null;
    const template: Record<string, unknown> = {
      name: ref?.name ?? this.#templateName,
      language: { code: ref?.language ?? this.#templateLanguage },
    };
    if (content.variables.length > 0) {
      // Meta refuses parameters with new-lines, tabs or more than 4 consecutive spaces; a name
      // typed into a web form may carry any of those, and none of them matter in a greeting.
      const parameters = content.variables.map((v) => ({ type: 'text', text: v.replace(/\s+/g, ' ').trim() }));
      template.components = [{ type: 'body', parameters }];
    }
    return { ...base, type: 'template', template };
  }

  #failure(json: unknown, httpStatus: number): SendMessageResult {
    const error = ((json as { error?: GraphError } | null)?.error ?? {}) as GraphError;
    const code = typeof error.code === 'number' ? error.code : undefined;
    const kind = classifyMetaError(code, httpStatus, error.is_transient === true);
    const title = typeof error.message === 'string' && error.message !== '' ? error.message : `HTTP ${httpStatus}`;
    const details = typeof error.error_data?.details === 'string' ? error.error_data.details : '';
    const message = this.#scrub(details !== '' && !title.includes(details) ? `${title}: ${details}` : title);
    return { ok: false, kind, message, ...(code === undefined ? {} : { code }), httpStatus };
  }

  /** Graph does not echo tokens, but a proxy or a URL in an error might; never hand one on. */
  #scrub(text: string): string {
    return this.#accessToken === '' ? text : text.split(this.#accessToken).join('[redacted]');
  }
}

// Codes from Meta's Cloud API error-code table (Meta's WhatsApp Cloud API docs). Meta says to act on `code`;
// `error_subcode` is deprecated, and the HTTP status of a code differs between sources.
const WINDOW_CLOSED = new Set([131047]);
const RECIPIENT = new Set([
  131026, // message undeliverable: not on WhatsApp, old app version, blocked us, …
  131021, // recipient cannot be sender
  131049, // Meta chose not to deliver (per-user marketing limit)
  131050, // the user stopped marketing messages
  130472, // the user's number is part of an experiment
]);
const TRANSIENT = new Set([
  1,
  2, // API unknown / service temporarily unavailable
  4,
  17,
  341,
  80007, // app, user and WABA call-rate limits
  130429, // throughput limit of the number
  131000, // "Something went wrong"
  131016, // service unavailable
  131048, // spam rate limit
  131056, // pair rate limit: too many messages to this recipient in a short time
  133004, // server temporarily unavailable
]);
const CONFIGURATION = new Set([
  0,
  3,
  10,
  190,
  100, // auth, capability, permission, access token, invalid parameter (also a wrong phone-number id)
  368, // temporarily blocked for policy violations
  131008,
  131009, // required parameter missing / value not valid
  131031, // account locked
  131042, // payment problem on the account
  131051, // unsupported message type: our payload, not the recipient, is wrong
  132000,
  132001,
  132005,
  132007,
  132012,
  132015,
  132016,
  132018, // template: params, missing, paused, disabled, …
  133010, // the business number is not registered
]);

/**
 * The failure kind of a Graph error. `code` decides when known; otherwise the HTTP status
 * (401/403 settings, 429/5xx or `is_transient` retry, other 4xx settings: never retried blindly).
 */
export function classifyMetaError(code: number | undefined, httpStatus: number, isTransient = false): SendFailureKind {
  if (code !== undefined) {
    if (WINDOW_CLOSED.has(code)) return 'window_closed';
    if (RECIPIENT.has(code)) return 'recipient';
    if (TRANSIENT.has(code)) return 'transient';
    if (CONFIGURATION.has(code) || (code >= 200 && code <= 299)) return 'configuration';
  }
  if (isTransient || httpStatus === 429 || httpStatus >= 500) return 'transient';
  return 'configuration';
}

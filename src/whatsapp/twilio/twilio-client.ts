import {
  failureMessage,
  providerRequest,
  requestFailure,
  type ProviderResponse,
} from '../../shared/provider-request.ts';
import type { MessagingProvider, SendMessageRequest, SendMessageResult } from '../messaging-provider.ts';
import { getJson, isRecord, type LookupFailure, type SettingsLookup } from '../../shared/settings-lookup.ts';
import { classifyTwilioError } from './twilio-errors.ts';

// Twilio Messages API client for WhatsApp (Twilio's Messages API docs). One POST per message, form-encoded,
// HTTP Basic auth. No retries here: a create is not idempotent at Twilio (a timeout may still have
// sent the message), so the caller's job decides what to do with a `transient` result.

export interface TwilioClientOptions {
  /** Default https://api.twilio.com (TWILIO_BASE_URL points it at the simulator). */
  baseUrl?: string;
  accountSid: string;
  authToken: string;
  /** Our WhatsApp sender, `+digits` (sent as `whatsapp:+digits`). */
  from: string;
  /** The approved first-contact template (HX…); variables fill {{1}}, {{2}}, … */
  templateContentSid: string;
  /** Where Twilio posts delivery statuses; omitted → no status callbacks. */
  statusCallbackUrl?: string;
  timeoutMs: number;
}

/**
 * Query parameter carrying SendMessageRequest.idempotencyKey on the StatusCallback URL, so a status
 * callback can be matched to our outbound message even when the create response was lost.
 */
export const TWILIO_STATUS_KEY_PARAM = 'outboundKey';

export class TwilioClient implements MessagingProvider {
  readonly name = 'twilio' as const;
  readonly #url: string;
  readonly #accountUrl: string;
  readonly #authorization: string;
  readonly #from: string;
  readonly #templateContentSid: string;
  readonly #statusCallbackUrl: string | undefined;
  readonly #timeoutMs: number;

  constructor(opts: TwilioClientOptions) {
    const base = (opts.baseUrl ?? 'https://api.twilio.com').replace(/\/+$/, '');
    this.#accountUrl = `${base}/2010-04-01/Accounts/${encodeURIComponent(opts.accountSid)}`;
    this.#url = `${this.#accountUrl}/Messages.json`;
    this.#authorization = `Basic ${Buffer.from(`${opts.accountSid}:${opts.authToken}`, 'utf8').toString('base64')}`;
    this.#from = whatsappAddress(opts.from);
    this.#templateContentSid = opts.templateContentSid;
    // Parsed now so that a malformed setting fails at start, not on the first message.
    if (opts.statusCallbackUrl !== undefined) new URL(opts.statusCallbackUrl);
    this.#statusCallbackUrl = opts.statusCallbackUrl;
    this.#timeoutMs = opts.timeoutMs;
  }

  async send(req: SendMessageRequest): Promise<SendMessageResult> {
    const form = new URLSearchParams({ To: whatsappAddress(req.to), From: this.#from });
    if (req.content.kind === 'text') {
      form.set('Body', req.content.text);
    } else {
      // A follow-up's own template, or the workspace's first-contact one.
      const ref = req.content.ref;
      form.set('ContentSid', ref && 'contentSid' in ref ? ref.contentSid : this.#templateContentSid);
      form.set(
        'ContentVariables',
        JSON.stringify(Object.fromEntries(req.content.variables.map((v, i) => [String(i + 1), v]))),
      );
    }
    if (this.#statusCallbackUrl !== undefined)
      form.set('StatusCallback', withKey(this.#statusCallbackUrl, req.idempotencyKey));

    let response: ProviderResponse;
    let text: string;
    try {
      response = await providerRequest('twilio', this.#url, {
        method: 'POST',
        headers: {
          authorization: this.#authorization,
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
        },
        body: form.toString(),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      text = response.text;
    } catch (err) {
      return { ok: false, kind: 'transient', message: failureMessage(requestFailure(err), 'Twilio', this.#timeoutMs) };
    }
    const json = parseJson(text);
    if (!response.ok) return failure(response.status, json);

    const sid = json?.sid;
    if (typeof sid !== 'string' || sid === '') {
      return {
        ok: false,
        kind: 'transient',
        message: `Twilio answered ${response.status} without a message sid.`,
        httpStatus: response.status,
      };
    }
    // A create can come back already failed (error_code set); treat it like the callback would.
    if ((json?.status === 'failed' || json?.status === 'undelivered') && typeof json.error_code === 'number') {
      const message = typeof json.error_message === 'string' ? json.error_message : `Message ${sid} failed.`;
      return {
        ok: false,
        kind: classifyTwilioError(json.error_code),
        message,
        code: json.error_code,
        httpStatus: response.status,
      };
    }
    return { ok: true, providerMessageId: sid };
  }

  /** `GET /2010-04-01/Accounts/{Sid}.json`: are the account SID and auth token right, and is the account active? */
  async fetchAccount(): Promise<SettingsLookup<{ status: string }>> {
    const got = await this.#get(`${this.#accountUrl}.json`);
    if (!got.ok) return got;
    return typeof got.json.status === 'string'
      ? { ok: true, value: { status: got.json.status } }
      : unexpected('account');
  }

  /**
   * `GET …/IncomingPhoneNumbers.json?PhoneNumber=`: whether our sender is one of the account's
   * phone numbers (the filter matches partial numbers too, so the answer is compared exactly).
   */
  async hasIncomingNumber(phone: string): Promise<SettingsLookup<{ found: boolean }>> {
    const got = await this.#get(
      `${this.#accountUrl}/IncomingPhoneNumbers.json?${new URLSearchParams({ PhoneNumber: phone, PageSize: '50' })}`,
    );
    if (!got.ok) return got;
    const list = got.json.incoming_phone_numbers;
    if (!Array.isArray(list)) return unexpected('phone number list');
    return { ok: true, value: { found: list.some((n) => isRecord(n) && n.phone_number === phone) } };
  }

  async #get(url: string): Promise<{ ok: true; json: Record<string, unknown> } | LookupFailure> {
    const got = await getJson('twilio', url, { authorization: this.#authorization }, this.#timeoutMs, 'Twilio');
    if (!got.ok) return got.failure;
    const json = isRecord(got.json) ? got.json : undefined;
    if (got.status >= 200 && got.status < 300 && json) return { ok: true, json };
    if (got.status < 300) return unexpected('resource');
    const code = typeof json?.code === 'number' ? String(json.code) : undefined;
    const message =
      typeof json?.message === 'string' && json.message !== '' ? json.message : `Twilio answered ${got.status}.`;
    return { ok: false, httpStatus: got.status, message, ...(code ? { code } : {}) };
  }
}

function unexpected(what: string): LookupFailure {
  return { ok: false, message: `Twilio sent an unexpected ${what} body: is TWILIO_BASE_URL right?` };
}

/** `+15551234567` → `whatsapp:+15551234567`; an address that already has the prefix is kept. */
export function whatsappAddress(phone: string): string {
  return phone.startsWith('whatsapp:') ? phone : `whatsapp:${phone}`;
}

function withKey(callbackUrl: string, key: string): string {
  const url = new URL(callbackUrl);
  url.searchParams.set(TWILIO_STATUS_KEY_PARAM, key);
  return url.toString();
}

function failure(status: number, json: Record<string, unknown> | undefined): SendMessageResult {
  const code = typeof json?.code === 'number' ? json.code : undefined;
  const kind = classifyTwilioError(code, status);
  // Only Twilio's own text: never the request (it carried our Authorization header).
  const message =
    typeof json?.message === 'string' && json.message !== ''
      ? json.message
      : `Twilio answered ${status}${json ? '' : ' with a body that is not JSON'}.`;
  return code === undefined
    ? { ok: false, kind, message, httpStatus: status }
    : { ok: false, kind, message, code, httpStatus: status };
}

function parseJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

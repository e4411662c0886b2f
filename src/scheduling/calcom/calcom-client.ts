import { providerRequest } from '../../shared/provider-request.ts';
import type { SettingsLookup } from '../../shared/settings-lookup.ts';
import type {
  BookingListResult,
  BookingWindowResult,
  BookingLookupResult,
  BookingResult,
  ProviderFailure,
  SchedulingProvider,
  SlotsResult,
} from '../scheduling-provider.ts';
import { type Attempt, describeNetworkError, httpFailure, networkFailure } from './calcom-failures.ts';
import {
  badStart,
  malformed,
  parseJson,
  toBooking,
  toBookingWindow,
  toEventType,
  toSlots,
  toUtcIso,
} from './calcom-responses.ts';

// Cal.com API v2 client (Cal.com's API v2 docs). Each endpoint is pinned to the `cal-api-version` it was
// written against: without the header Cal.com silently serves an older version with other shapes.
const SLOTS_API_VERSION = '2024-09-04';
const BOOKINGS_API_VERSION = '2024-08-13';
const EVENT_TYPES_API_VERSION = '2024-06-14';

// How Cal.com has worded "this time cannot be booked" (v1 `no_available_users_found_error`, v2
// "User either already has booking at this time or is not available"); exact v2 text is unconfirmed,
// so match loosely, and only on 400/409 answers to create/reschedule.
const SLOT_TAKEN_PATTERNS = [
  /no_available_users_found/i,
  /no available users/i,
  /already has (a )?booking/i,
  /\bnot available\b/i,
  /seats?[_ ]full/i,
  /slot.{0,40}(taken|unavailable|booked|reserved)/i,
];

export interface CalcomClientOptions {
  /** Default https://api.cal.com; self-hosted instances differ. Paths below start with /v2. */
  baseUrl?: string;
  /** Per attempt. Default 10 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt for 429, 5xx and network errors. Default 2. */
  maxRetries?: number;
  /** Injected so tests can observe delays without waiting. */
  sleep?: (ms: number) => Promise<void>;
  /** First backoff delay when the provider gives no Retry-After; doubles per retry. Default 500 ms. */
  backoffBaseMs?: number;
  /**
   * A Retry-After longer than this is not waited for inline; the failure is returned with retryAfterMs. Default 30 000.
   */
  maxRetryAfterMs?: number;
}

type CallOutcome =
  | { ok: true; data: unknown }
  | { ok: false; error: ProviderFailure; providerMessage: string; ambiguousEarlier: boolean };

export class CalcomClient implements SchedulingProvider {
  readonly #baseUrl: string;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #backoffBaseMs: number;
  readonly #maxRetryAfterMs: number;

  constructor(opts: CalcomClientOptions = {}) {
    this.#baseUrl = (opts.baseUrl ?? 'https://api.cal.com').replace(/\/+$/, '');
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
    this.#maxRetries = opts.maxRetries ?? 2;
    this.#sleep = opts.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#backoffBaseMs = opts.backoffBaseMs ?? 500;
    this.#maxRetryAfterMs = opts.maxRetryAfterMs ?? 30_000;
  }

  async listSlots(q: {
    apiKey: string;
    eventTypeId: number;
    start: Date;
    end: Date;
    timeZone: string;
  }): Promise<SlotsResult> {
    const query = new URLSearchParams({
      start: q.start.toISOString(),
      end: q.end.toISOString(),
      eventTypeId: String(q.eventTypeId),
      timeZone: q.timeZone,
    });
    const out = await this.#call('GET', `/v2/slots?${query}`, q.apiKey, SLOTS_API_VERSION);
    if (!out.ok) return { ok: false, error: out.error };
    const slots = toSlots(out.data);
    if (slots === undefined) return { ok: false, error: malformed('slots') };
    return { ok: true, slots };
  }

  async createBooking(b: Parameters<SchedulingProvider['createBooking']>[0]): Promise<BookingResult> {
    const start = toUtcIso(b.start);
    if (start === undefined) return { ok: false, error: badStart(b.start) };
    const attendee: Record<string, string> = {
      name: b.attendee.name,
      email: b.attendee.email,
      timeZone: b.attendee.timeZone,
    };
    if (b.attendee.phoneNumber) attendee.phoneNumber = b.attendee.phoneNumber;
    const body: Record<string, unknown> = { start, eventTypeId: b.eventTypeId, attendee };
    if (b.metadata && Object.keys(b.metadata).length > 0) body.metadata = b.metadata;
    // Not repeated after an attempt that may have booked: with several hosts a second POST is not
    // "taken" but books another host. The caller looks for the booking instead (error.ambiguous).
    const out = await this.#call('POST', '/v2/bookings', b.apiKey, BOOKINGS_API_VERSION, body, false);
    return this.#bookingWrite(out);
  }

  async getBooking(apiKey: string, uid: string): Promise<BookingLookupResult> {
    const out = await this.#call('GET', `/v2/bookings/${encodeURIComponent(uid)}`, apiKey, BOOKINGS_API_VERSION);
    return out.ok ? toBooking(out.data) : { ok: false, error: out.error };
  }

  async findBookings(q: {
    apiKey: string;
    eventTypeId: number;
    afterStart: Date;
    beforeEnd: Date;
  }): Promise<BookingListResult> {
    const query = new URLSearchParams({
      eventTypeId: String(q.eventTypeId),
      afterStart: q.afterStart.toISOString(),
      beforeEnd: q.beforeEnd.toISOString(),
      sortStart: 'asc',
      take: '100',
    });
    const out = await this.#call('GET', `/v2/bookings?${query}`, q.apiKey, BOOKINGS_API_VERSION);
    if (!out.ok) return { ok: false, error: out.error };
    if (!Array.isArray(out.data)) return { ok: false, error: malformed('bookings') };
    // An item we cannot read (a seated or recurring variant) cannot be ours: we book single events.
    const bookings = out.data.flatMap((item) => {
      const parsed = toBooking(item);
      return parsed.ok ? [parsed.booking] : [];
    });
    return { ok: true, bookings };
  }

  async cancelBooking(apiKey: string, uid: string, reason?: string): Promise<BookingLookupResult> {
    const body = reason ? { cancellationReason: reason } : {};
    const out = await this.#call(
      'POST',
      `/v2/bookings/${encodeURIComponent(uid)}/cancel`,
      apiKey,
      BOOKINGS_API_VERSION,
      body,
    );
    return out.ok ? toBooking(out.data) : { ok: false, error: out.error };
  }

  async rescheduleBooking(apiKey: string, uid: string, start: string, reason?: string): Promise<BookingResult> {
    const utc = toUtcIso(start);
    if (utc === undefined) return { ok: false, error: badStart(start) };
    const body: Record<string, string> = { start: utc };
    if (reason) body.reschedulingReason = reason;
    const path = `/v2/bookings/${encodeURIComponent(uid)}/reschedule`;
    return this.#bookingWrite(await this.#call('POST', path, apiKey, BOOKINGS_API_VERSION, body));
  }

  /** `GET /v2/event-types/{id}`: does the key see this event type (`workspace verify`)? */
  async getEventType(
    apiKey: string,
    eventTypeId: number,
  ): Promise<SettingsLookup<{ title: string; lengthInMinutes?: number }>> {
    const out = await this.#call(
      'GET',
      `/v2/event-types/${encodeURIComponent(String(eventTypeId))}`,
      apiKey,
      EVENT_TYPES_API_VERSION,
    );
    if (!out.ok) {
      const e = out.error;
      return {
        ok: false,
        message: e.message,
        ...(e.status === undefined ? {} : { httpStatus: e.status }),
        ...(e.code ? { code: e.code } : {}),
      };
    }
    const value = toEventType(out.data);
    if (value === undefined) return { ok: false, message: malformed('event type').message };
    return { ok: true, value };
  }

  /** The event type's `minimumBookingNotice` (minutes) and fixed `bookingWindow`, for bookConsult's check. */
  async bookingWindow(apiKey: string, eventTypeId: number): Promise<BookingWindowResult> {
    const path = `/v2/event-types/${encodeURIComponent(String(eventTypeId))}`;
    const out = await this.#call('GET', path, apiKey, EVENT_TYPES_API_VERSION);
    if (!out.ok) return { ok: false, error: out.error };
    const window = toBookingWindow(out.data);
    if (window === undefined) return { ok: false, error: malformed('event type') };
    return { ok: true, window };
  }

  #bookingWrite(out: CallOutcome): BookingResult {
    if (out.ok) return toBooking(out.data);
    const { error } = out;
    if (
      (error.status === 400 || error.status === 409) &&
      SLOT_TAKEN_PATTERNS.some((p) => p.test(out.providerMessage))
    ) {
      return out.ambiguousEarlier
        ? { ok: false, slotTaken: true, message: out.providerMessage, afterAmbiguousRetry: true }
        : { ok: false, slotTaken: true, message: out.providerMessage };
    }
    return { ok: false, error };
  }

  /**
   * One logical call with retries on 429, 5xx and network errors; never on other 4xx. Without
   * `repeatable`, an attempt that may have been processed (5xx, connection lost after sending) ends
   * the call: only failures that certainly did nothing are retried.
   */
  async #call(
    method: 'GET' | 'POST',
    path: string,
    apiKey: string,
    version: string,
    body?: unknown,
    repeatable = true,
  ): Promise<CallOutcome> {
    let ambiguousEarlier = false;
    for (let attempt = 0; ; attempt++) {
      const a = await this.#attempt(method, path, apiKey, version, body);
      if (a.kind === 'response' && a.status >= 200 && a.status < 300) {
        const parsed = parseJson(a.text) as { status?: unknown; data?: unknown } | undefined;
        if (parsed?.status !== 'success' || parsed.data === undefined) {
          // Cal.com accepted the request, so a write did happen even though we cannot read the answer.
          const error: ProviderFailure = { ...malformed(path.split('?')[0] ?? path, a.status), ambiguous: true };
          return { ok: false, error, providerMessage: '', ambiguousEarlier };
        }
        return { ok: true, data: parsed.data };
      }
      const { error, providerMessage } =
        a.kind === 'network' ? networkFailure(a.message) : httpFailure(a.status, a.headers, a.text);
      // A 429 is rejected before any work; a 5xx or a dropped connection may have booked anyway.
      const ambiguousNow = a.kind === 'network' ? a.maybeProcessed : a.status >= 500;
      if (ambiguousEarlier || ambiguousNow) error.ambiguous = true;
      const retryable =
        (error.kind === 'rate_limited' || error.kind === 'unavailable' || error.kind === 'network') &&
        (repeatable || !ambiguousNow);
      if (!retryable || attempt >= this.#maxRetries) return { ok: false, error, providerMessage, ambiguousEarlier };
      const delay = error.retryAfterMs ?? this.#backoff(attempt);
      if (delay > this.#maxRetryAfterMs) return { ok: false, error, providerMessage, ambiguousEarlier };
      if (ambiguousNow) ambiguousEarlier = true;
      await this.#sleep(delay);
    }
  }

  async #attempt(method: string, path: string, apiKey: string, version: string, body?: unknown): Promise<Attempt> {
    const headers: Record<string, string> = { 'cal-api-version': version, accept: 'application/json' };
    // Slots of public event types need no key, so an empty key means "anonymous".
    if (apiKey !== '') headers.authorization = `Bearer ${apiKey}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    try {
      const res = await providerRequest('calcom', `${this.#baseUrl}${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
      return { kind: 'response', status: res.status, headers: res.headers, text: res.text };
    } catch (err) {
      return describeNetworkError(err, this.#timeoutMs);
    }
  }

  #backoff(attempt: number): number {
    // Equal jitter: half fixed, half random, so concurrent retries spread out.
    const d = this.#backoffBaseMs * 2 ** attempt;
    return Math.round(d / 2 + Math.random() * (d / 2));
  }
}

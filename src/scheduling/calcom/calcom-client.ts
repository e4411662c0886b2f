import {
  failureMessage,
  providerRequest,
  requestFailure,
  type ResponseHeaders,
} from '../../shared/provider-request.ts';
import { z } from 'zod';
import type { SettingsLookup } from '../../shared/settings-lookup.ts';
import type { BookingWindow } from '../booking-window.ts';
import type {
  Booking,
  BookingListResult,
  BookingWindowResult,
  BookingLookupResult,
  BookingResult,
  ProviderFailure,
  SchedulingProvider,
  Slot,
  SlotsResult,
} from '../scheduling-provider.ts';

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

type Attempt =
  | { kind: 'response'; status: number; headers: ResponseHeaders; text: string }
  | { kind: 'network'; message: string; maybeProcessed: boolean };

// Lenient: Cal.com sends many more fields, and nullable ones as null.
const BookingSchema = z.object({
  uid: z.string().min(1),
  id: z.number().nullish(),
  start: z.string(),
  end: z.string(),
  status: z.string(),
  eventTypeId: z.number().nullish(),
  rescheduledFromUid: z.string().nullish(),
  rescheduledToUid: z.string().nullish(),
  cancellationReason: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

const WindowSchema = z.object({
  type: z.enum(['businessDays', 'calendarDays', 'range']),
  value: z.union([z.number().int().nonnegative(), z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/))]),
  rolling: z.boolean().nullish(),
});
const EventTypeWindowSchema = z.object({
  minimumBookingNotice: z.number().nullish(),
  bookingWindow: z
    .union([WindowSchema, z.array(WindowSchema)])
    .nullish()
    .catch(null),
});

const SlotItemSchema = z.union([z.string(), z.object({ start: z.string(), end: z.string().nullish() })]);
const SlotsDataSchema = z.record(z.string(), z.array(z.unknown()));

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
    const days = SlotsDataSchema.safeParse(out.data);
    if (!days.success) return { ok: false, error: malformed('slots') };
    const slots: Slot[] = [];
    for (const items of Object.values(days.data)) {
      for (const item of items) {
        // Cal.com's OpenAPI schema says strings, its examples and the source say `{start}` objects.
        const parsed = SlotItemSchema.safeParse(item);
        if (!parsed.success) continue;
        const slot = typeof parsed.data === 'string' ? { start: parsed.data } : parsed.data;
        if (Number.isNaN(Date.parse(slot.start))) continue;
        slots.push(slot.end ? { start: slot.start, end: slot.end } : { start: slot.start });
      }
    }
    // Order by instant, not by string: day keys and offsets are in the requested zone.
    slots.sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
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
    return this.#bookingWrite(await this.#call('POST', '/v2/bookings', b.apiKey, BOOKINGS_API_VERSION, body));
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
    const parsed = z.object({ title: z.string(), lengthInMinutes: z.number().nullish() }).safeParse(out.data);
    if (!parsed.success) return { ok: false, message: malformed('event type').message };
    const { title, lengthInMinutes } = parsed.data;
    return { ok: true, value: lengthInMinutes == null ? { title } : { title, lengthInMinutes } };
  }

  /** The event type's `minimumBookingNotice` (minutes) and fixed `bookingWindow`, for bookConsult's check. */
  async bookingWindow(apiKey: string, eventTypeId: number): Promise<BookingWindowResult> {
    const path = `/v2/event-types/${encodeURIComponent(String(eventTypeId))}`;
    const out = await this.#call('GET', path, apiKey, EVENT_TYPES_API_VERSION);
    if (!out.ok) return { ok: false, error: out.error };
    const parsed = EventTypeWindowSchema.safeParse(out.data);
    if (!parsed.success) return { ok: false, error: malformed('event type') };
    // Cal.com's document types bookingWindow as an array of one window; its examples send the object.
    const w = Array.isArray(parsed.data.bookingWindow) ? parsed.data.bookingWindow[0] : parsed.data.bookingWindow;
    const window: BookingWindow = { minimumNoticeMinutes: Math.max(0, parsed.data.minimumBookingNotice ?? 0) };
    if (w && w.rolling !== true) {
      if (w.type === 'range' && Array.isArray(w.value) && w.value.length === 2) {
        window.horizon = { kind: 'range', from: w.value[0]!, to: w.value[1]! };
      } else if (w.type !== 'range' && typeof w.value === 'number') {
        window.horizon = { kind: w.type, days: w.value };
      }
    }
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

  /** One logical call with retries on 429, 5xx and network errors; never on other 4xx. */
  async #call(
    method: 'GET' | 'POST',
    path: string,
    apiKey: string,
    version: string,
    body?: unknown,
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
      const retryable = error.kind === 'rate_limited' || error.kind === 'unavailable' || error.kind === 'network';
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

function toUtcIso(value: string): string | undefined {
  // Starts may come from an agent's tool call, so a bad one is an expected outcome, not a throw.
  // An offset is required: without one Date.parse would read the time in *this server's* zone.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value.trim())) return undefined;
  const ms = Date.parse(value.trim());
  if (Number.isNaN(ms)) return undefined;
  // Cal.com requires UTC for booking starts; seconds precision matches its examples.
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

function badStart(value: string): ProviderFailure {
  return {
    kind: 'bad_request',
    message: `Booking start must be an ISO 8601 date-time with Z or an offset, got ${JSON.stringify(value)}; nothing was sent to Cal.com.`,
  };
}

function toBooking(data: unknown): BookingLookupResult {
  // Recurring event types answer with an array; we only book single events, so take the first.
  const parsed = BookingSchema.safeParse(Array.isArray(data) ? data[0] : data);
  if (!parsed.success) return { ok: false, error: malformed('booking') };
  const d = parsed.data;
  const start = Date.parse(d.start);
  const end = Date.parse(d.end);
  if (Number.isNaN(start) || Number.isNaN(end)) return { ok: false, error: malformed('booking') };
  const booking: Booking = {
    uid: d.uid,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    status: d.status,
  };
  if (d.id != null) booking.id = d.id;
  if (d.eventTypeId != null) booking.eventTypeId = d.eventTypeId;
  if (d.rescheduledFromUid) booking.rescheduledFromUid = d.rescheduledFromUid;
  if (d.rescheduledToUid) booking.rescheduledToUid = d.rescheduledToUid;
  if (d.cancellationReason) booking.cancellationReason = d.cancellationReason;
  if (d.metadata) {
    const entries = Object.entries(d.metadata).filter((e): e is [string, string] => typeof e[1] === 'string');
    if (entries.length > 0) booking.metadata = Object.fromEntries(entries);
  }
  return { ok: true, booking };
}

function httpFailure(
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

function networkFailure(message: string): { error: ProviderFailure; providerMessage: string } {
  return { error: { kind: 'network', message }, providerMessage: message };
}

function describeNetworkError(err: unknown, timeoutMs: number): Attempt {
  const failure = requestFailure(err);
  // These fail before a byte of the request reaches Cal.com, so a retry cannot double-book.
  const neverSent =
    !failure.timedOut &&
    (failure.code === 'ECONNREFUSED' || failure.code === 'ENOTFOUND' || failure.code === 'EAI_AGAIN');
  return { kind: 'network', message: failureMessage(failure, 'Cal.com', timeoutMs), maybeProcessed: !neverSent };
}

function malformed(what: string, status?: number): ProviderFailure {
  const failure: ProviderFailure = {
    kind: 'unavailable',
    message: `Cal.com sent an unexpected ${what} response body.`,
  };
  if (status !== undefined) failure.status = status;
  return failure;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

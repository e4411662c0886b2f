import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CALCOM_SIGNATURE_HEADER, signCalcomBody } from '../../scheduling/calcom/calcom-signature.ts';
import { outsideWindow, type BookingWindow } from '../../scheduling/booking-window.ts';
import { isValidTimeZone, offsetMinutes, formatInZone } from '../../shared/zoned-time.ts';
import { slotStarts, type SimEventType } from './availability.ts';
import { checkMetadata, envelope, eventTypeOutput, HttpError, newUid, parseInstant } from './calcom-sim-wire.ts';

export type { SimEventType, WeeklyRule } from './availability.ts';

// Local stand-in for Cal.com API v2 (Cal.com's API v2 docs), for tests and offline demos. It speaks the
// same wire protocol as api.cal.com for the endpoints our client uses; differences are noted inline.

export interface SimBooking {
  id: number;
  uid: string;
  eventTypeId: number;
  startMs: number;
  endMs: number;
  status: 'accepted' | 'cancelled';
  attendee: { name: string; email: string; timeZone: string; phoneNumber?: string };
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  cancellationReason?: string;
  reschedulingReason?: string;
  rescheduledFromUid?: string;
  rescheduledToUid?: string;
}

export interface SimRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization?: string;
  calApiVersion?: string;
  body: unknown;
}

export type WebhookTrigger = 'BOOKING_CREATED' | 'BOOKING_RESCHEDULED' | 'BOOKING_CANCELLED';
export interface WebhookConfig {
  subscriberUrl: string;
  secret?: string /** Send on each booking change, as Cal.com does. Default false: tests call sendWebhook. */;
  autoSend?: boolean;
}
export interface WebhookDelivery {
  trigger: WebhookTrigger;
  body: string;
  signature: string;
  status?: number;
  responseText?: string;
  error?: string;
}

export interface CalcomSimulatorOptions {
  port?: number;
  apiKey?: string;
  eventTypes?: SimEventType[];
  /**
   * `object` = `{start}` items (current Cal.com); `string` = bare ISO strings (older versions, and Cal.com's OpenAPI
   * schema).
   */
  slotFormat?: 'object' | 'string';
  webhook?: WebhookConfig;
  /** Retry-After (seconds) sent in rate-limited mode. Default 1. */
  retryAfterSeconds?: number;
  /** Message of the 400 for an unavailable time; the v2 wording is unconfirmed, so configurable. */
  slotTakenMessage?: string;
  now?: () => Date;
  /**
   * `one` (default): a booking blocks its time. `unlimited`: bookings never block a time (the
   * sandbox, where every lead is offered and books the same first free slot, for days on end).
   */
  capacity?: 'one' | 'unlimited';
}

export interface CalcomSimulator {
  url: string;
  apiKey: string;
  eventTypes: SimEventType[];
  bookings: Map<string, SimBooking>;
  requests: SimRequest[];
  webhookDeliveries: WebhookDelivery[];
  /** `times` limits the failure to the next n requests, then the simulator recovers. */
  setFailure(mode: 'none' | 'down' | 'rate-limited', opts?: { times?: number }): void;
  setWebhook(config: WebhookConfig | undefined): void;
  sendWebhook(trigger: WebhookTrigger, booking: SimBooking | string): Promise<WebhookDelivery>;
  close(): Promise<void>;
}

export const DEFAULT_EVENT_TYPE: SimEventType = {
  id: 1001,
  slug: 'consultation',
  title: 'Consultation',
  lengthInMinutes: 30,
  timeZone: 'Europe/Berlin',
  availability: [
    { days: ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday'], startTime: '09:00', endTime: '17:00' },
  ],
};

const ORGANIZER = { id: 1, name: 'Simulated Host', email: 'host@sim.cal.local', username: 'sim-host' };
const SLOTS_VERSION = '2024-09-04';
const BOOKINGS_VERSION = '2024-08-13';
const EVENT_TYPES_VERSION = '2024-06-14';

export async function startCalcomSimulator(opts: CalcomSimulatorOptions = {}): Promise<CalcomSimulator> {
  const apiKey = opts.apiKey ?? 'cal_test_simulator_key';
  const now = opts.now ?? (() => new Date());
  const eventTypes = opts.eventTypes ?? [DEFAULT_EVENT_TYPE];
  const bookings = new Map<string, SimBooking>();
  const requests: SimRequest[] = [];
  const webhookDeliveries: WebhookDelivery[] = [];
  let webhook = opts.webhook;
  let failure: { mode: 'none' | 'down' | 'rate-limited'; times: number } = { mode: 'none', times: Infinity };
  let nextId = 1;

  const eventType = (id: unknown): SimEventType => {
    const et = eventTypes.find((e) => e.id === Number(id));
    if (!et) throw new HttpError(404, 'NotFoundException', `Event type with id=${String(id)} not found`);
    return et;
  };
  // One host owns every event type, so any accepted booking blocks the time for all of them.
  const freeStarts = (et: SimEventType, fromMs: number, toMs: number, ignoreUid?: string): number[] => {
    const busy =
      opts.capacity === 'unlimited'
        ? []
        : [...bookings.values()].filter((b) => b.status === 'accepted' && b.uid !== ignoreUid);
    const earliest = now().getTime();
    // The event type's notice and window, as Cal.com applies them to its slots and bookings.
    const w = et.bookingWindow;
    const window: BookingWindow = { minimumNoticeMinutes: et.minimumBookingNotice ?? 0 };
    if (w?.type === 'range') window.horizon = { kind: 'range', from: w.value[0], to: w.value[1] };
    else if (w && !w.rolling) window.horizon = { kind: w.type, days: w.value };
    return slotStarts(et, fromMs, toMs).filter((s) => {
      const e = s + et.lengthInMinutes * 60_000;
      const inWindow = outsideWindow(window, s, earliest, et.timeZone) === null;
      return s >= earliest && inWindow && !busy.some((b) => b.startMs < e && s < b.endMs);
    });
  };
  const slotTaken = () =>
    new HttpError(
      400,
      'BadRequestException',
      opts.slotTakenMessage ?? 'User either already has booking at this time or is not available',
    );

  function listSlots(q: URLSearchParams): unknown {
    const timeZone = q.get('timeZone') ?? 'UTC';
    if (!isValidTimeZone(timeZone)) throw new HttpError(400, 'BadRequestException', `Invalid time zone ${timeZone}`);
    // A bare date means the whole UTC day (Cal.com's OpenAPI document parameter descriptions).
    const from = parseInstant(q.get('start'), 'start', false);
    const to = parseInstant(q.get('end'), 'end', true);
    const et = eventType(q.get('eventTypeId') ?? 'missing');
    const data: Record<string, unknown[]> = {};
    for (const s of freeStarts(et, from, to)) {
      const start = formatInZone(s, timeZone);
      const end = formatInZone(s + et.lengthInMinutes * 60_000, timeZone);
      const item = q.get('format') === 'range' ? { start, end } : opts.slotFormat === 'string' ? start : { start };
      (data[start.slice(0, 10)] ??= []).push(item);
    }
    return data;
  }

  function createBooking(body: Record<string, unknown>): SimBooking {
    const a = (typeof body.attendee === 'object' && body.attendee !== null ? body.attendee : {}) as Record<
      string,
      unknown
    >;
    const issues: string[] = [];
    if (typeof body.start !== 'string' || Number.isNaN(Date.parse(body.start)))
      issues.push('start must be a valid ISO 8601 date string');
    if (typeof body.eventTypeId !== 'number') issues.push('eventTypeId must be a number');
    if (typeof a.name !== 'string' || a.name === '') issues.push('attendee.name must be a string');
    if (typeof a.timeZone !== 'string' || !isValidTimeZone(a.timeZone))
      issues.push('attendee.timeZone must be a valid IANA time zone');
    const metadata = checkMetadata(body.metadata, issues);
    if (issues.length > 0) throw new HttpError(400, 'BadRequestException', 'Bad Request Exception', issues);
    const et = eventType(body.eventTypeId);
    const startMs = Date.parse(body.start as string);
    if (startMs < now().getTime())
      throw new HttpError(400, 'BadRequestException', 'Attempting to book a meeting in the past.');
    if (!freeStarts(et, startMs, startMs).includes(startMs)) throw slotTaken();
    const at = now().toISOString();
    const booking: SimBooking = {
      id: nextId++,
      uid: newUid(),
      eventTypeId: et.id,
      startMs,
      endMs: startMs + et.lengthInMinutes * 60_000,
      status: 'accepted',
      attendee: {
        name: a.name as string,
        email: typeof a.email === 'string' ? a.email : '',
        timeZone: a.timeZone as string,
      },
      metadata,
      createdAt: at,
      updatedAt: at,
    };
    if (typeof a.phoneNumber === 'string') booking.attendee.phoneNumber = a.phoneNumber;
    bookings.set(booking.uid, booking);
    return booking;
  }

  // Only the filters our client sends; Cal.com has more (status, attendeeEmail, …) and paginates.
  function findBookings(q: URLSearchParams): unknown[] {
    const [et, after, before] = [q.get('eventTypeId'), q.get('afterStart'), q.get('beforeEnd')];
    return [...bookings.values()]
      .filter(
        (b) =>
          (!et || b.eventTypeId === Number(et)) &&
          (!after || b.startMs >= Date.parse(after)) &&
          (!before || b.endMs <= Date.parse(before)),
      )
      .sort((a, b) => a.startMs - b.startMs)
      .map(output);
  }

  function existing(uid: string): SimBooking {
    const b = bookings.get(uid);
    if (!b) throw new HttpError(404, 'NotFoundException', `Booking with uid=${uid} not found`);
    return b;
  }

  function reschedule(old: SimBooking, body: Record<string, unknown>): SimBooking {
    if (typeof body.start !== 'string' || Number.isNaN(Date.parse(body.start))) {
      throw new HttpError(400, 'BadRequestException', 'Bad Request Exception', [
        'start must be a valid ISO 8601 date string',
      ]);
    }
    if (old.status !== 'accepted')
      throw new HttpError(
        400,
        'BadRequestException',
        `Booking with uid=${old.uid} is cancelled and cannot be rescheduled`,
      );
    const et = eventType(old.eventTypeId);
    const startMs = Date.parse(body.start);
    // The booking being moved does not block its own new time (Cal.com ignores it too).
    if (!freeStarts(et, startMs, startMs, old.uid).includes(startMs)) throw slotTaken();
    const at = now().toISOString();
    const fresh: SimBooking = {
      ...old,
      id: nextId++,
      uid: newUid(),
      startMs,
      endMs: startMs + et.lengthInMinutes * 60_000,
      createdAt: at,
      updatedAt: at,
      rescheduledFromUid: old.uid,
    };
    if (typeof body.reschedulingReason === 'string') fresh.reschedulingReason = body.reschedulingReason;
    // Cal.com marks the original as cancelled and points it at its replacement.
    Object.assign(old, { status: 'cancelled', rescheduledToUid: fresh.uid, updatedAt: at });
    bookings.set(fresh.uid, fresh);
    return fresh;
  }

  async function route(req: http.IncomingMessage, url: URL, body: unknown): Promise<{ status: number; data: unknown }> {
    const path = url.pathname.replace(/\/+$/, '');
    const bearer = /^Bearer (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
    const isSlots = path === '/v2/slots';
    // A wrong key is always refused. A missing key is fine for slots (public event types) but refused
    // for bookings: stricter than Cal.com (which allows anonymous booking of public event types) so
    // that a client forgetting its key is caught here rather than in production.
    if ((req.headers.authorization !== undefined && bearer !== apiKey) || (!isSlots && bearer === undefined)) {
      throw new HttpError(401, 'UnauthorizedException', 'Invalid API Key');
    }
    // Cal.com silently serves an older API version (other shapes) when the header is missing or wrong;
    // mimicking that would hide the bug, so the simulator refuses loudly with a 400 instead.
    const eventTypeRead = /^\/v2\/event-types\/([^/]+)$/.exec(path);
    const wanted = isSlots ? SLOTS_VERSION : eventTypeRead ? EVENT_TYPES_VERSION : BOOKINGS_VERSION;
    if (req.headers['cal-api-version'] !== wanted) {
      throw new HttpError(
        400,
        'BadRequestException',
        `Simulator only serves ${path} with header cal-api-version: ${wanted}`,
      );
    }
    const input = (typeof body === 'object' && body !== null ? body : {}) as Record<string, unknown>;
    const m = /^\/v2\/bookings\/([^/]+)(\/cancel|\/reschedule)?$/.exec(path);
    if (isSlots && req.method === 'GET') return { status: 200, data: listSlots(url.searchParams) };
    if (eventTypeRead && req.method === 'GET')
      return { status: 200, data: eventTypeOutput(eventType(decodeURIComponent(eventTypeRead[1]!)), ORGANIZER) };
    if (path === '/v2/bookings' && req.method === 'POST') return respond(201, createBooking(input), 'BOOKING_CREATED');
    if (path === '/v2/bookings' && req.method === 'GET') return { status: 200, data: findBookings(url.searchParams) };
    if (m && !m[2] && req.method === 'GET') return { status: 200, data: output(existing(decodeURIComponent(m[1]!))) };
    if (m?.[2] === '/cancel' && req.method === 'POST') {
      const b = existing(decodeURIComponent(m[1]!));
      if (b.status === 'cancelled')
        throw new HttpError(400, 'BadRequestException', `Booking with uid=${b.uid} is already cancelled`);
      b.status = 'cancelled';
      b.updatedAt = now().toISOString();
      if (typeof input.cancellationReason === 'string') b.cancellationReason = input.cancellationReason;
      return respond(200, b, 'BOOKING_CANCELLED');
    }
    if (m?.[2] === '/reschedule' && req.method === 'POST')
      return respond(201, reschedule(existing(decodeURIComponent(m[1]!)), input), 'BOOKING_RESCHEDULED');
    throw new HttpError(404, 'NotFoundException', `Cannot ${req.method} ${path}`);
  }

  function respond(status: number, b: SimBooking, trigger: WebhookTrigger): { status: number; data: unknown } {
    if (webhook?.autoSend) void sendWebhook(trigger, b).catch(() => undefined);
    return { status, data: output(b) };
  }

  function output(b: SimBooking): unknown {
    const et = eventType(b.eventTypeId);
    const { attendee } = b;
    return {
      id: b.id,
      uid: b.uid,
      title: `${et.title} between ${ORGANIZER.name} and ${attendee.name}`,
      description: '',
      hosts: [{ ...ORGANIZER, displayEmail: ORGANIZER.email, timeZone: et.timeZone }],
      status: b.status,
      cancellationReason: b.cancellationReason,
      reschedulingReason: b.reschedulingReason,
      rescheduledFromUid: b.rescheduledFromUid,
      rescheduledToUid: b.rescheduledToUid,
      start: new Date(b.startMs).toISOString(),
      end: new Date(b.endMs).toISOString(),
      duration: et.lengthInMinutes,
      eventTypeId: et.id,
      eventType: { id: et.id, slug: et.slug },
      location: '',
      absentHost: false,
      createdAt: b.createdAt,
      updatedAt: b.updatedAt,
      attendees: [{ ...attendee, displayEmail: attendee.email, language: 'en', absent: false }],
      guests: [],
      bookingFieldsResponses: { name: attendee.name, email: attendee.email, attendeePhoneNumber: attendee.phoneNumber },
      metadata: b.metadata,
    };
  }

  async function sendWebhook(trigger: WebhookTrigger, ref: SimBooking | string): Promise<WebhookDelivery> {
    if (!webhook) throw new Error('calcom simulator: no webhook configured');
    const b = typeof ref === 'string' ? existing(ref) : ref;
    const body = JSON.stringify({
      triggerEvent: trigger,
      createdAt: now().toISOString(),
      payload: webhookPayload(trigger, b),
    });
    // Cal.com sends this literal when the webhook has no secret (sendPayload.ts).
    const signature = webhook.secret ? signCalcomBody(webhook.secret, body) : 'no-secret-provided';
    const delivery: WebhookDelivery = { trigger, body, signature };
    webhookDeliveries.push(delivery);
    try {
      const res = await fetch(webhook.subscriberUrl, {
        method: 'POST',
        body,
        headers: { 'content-type': 'application/json', [CALCOM_SIGNATURE_HEADER]: signature },
      });
      delivery.status = res.status;
      delivery.responseText = await res.text();
    } catch (err) {
      delivery.error = (err as Error).message;
    }
    return delivery;
  }

  function webhookPayload(trigger: WebhookTrigger, b: SimBooking): Record<string, unknown> {
    const et = eventType(b.eventTypeId);
    const { attendee } = b;
    const payload: Record<string, unknown> = {
      type: et.slug,
      title: `${et.title} between ${ORGANIZER.name} and ${attendee.name}`,
      description: '',
      additionalNotes: '',
      customInputs: {},
      startTime: new Date(b.startMs).toISOString(),
      endTime: new Date(b.endMs).toISOString(),
      organizer: {
        ...ORGANIZER,
        timeZone: et.timeZone,
        language: { locale: 'en' },
        timeFormat: 'h:mma',
        utcOffset: offsetMinutes(b.startMs, et.timeZone),
      },
      attendees: [{ ...attendee, language: { locale: 'en' }, utcOffset: offsetMinutes(b.startMs, attendee.timeZone) }],
      responses: {
        name: { label: 'your_name', value: attendee.name },
        email: { label: 'email_address', value: attendee.email },
        ...(attendee.phoneNumber
          ? { attendeePhoneNumber: { label: 'phone_number', value: attendee.phoneNumber } }
          : {}),
      },
      uid: b.uid,
      bookingId: b.id,
      eventTypeId: et.id,
      eventTitle: et.title,
      length: et.lengthInMinutes,
      metadata: b.metadata,
      status: trigger === 'BOOKING_CANCELLED' ? 'CANCELLED' : 'ACCEPTED',
      iCalUID: `${b.uid}@Cal.com`,
    };
    if (trigger === 'BOOKING_CANCELLED')
      Object.assign(payload, { cancellationReason: b.cancellationReason ?? '', cancelledBy: ORGANIZER.email });
    const old = b.rescheduledFromUid ? bookings.get(b.rescheduledFromUid) : undefined;
    if (trigger === 'BOOKING_RESCHEDULED' && old) {
      Object.assign(payload, {
        rescheduleId: old.id,
        rescheduleUid: old.uid,
        rescheduledBy: ORGANIZER.email,
        rescheduleStartTime: new Date(old.startMs).toISOString(),
        rescheduleEndTime: new Date(old.endMs).toISOString(),
      });
    }
    return payload;
  }

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://sim.local');
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: unknown;
      try {
        body = raw === '' ? undefined : JSON.parse(raw);
      } catch {
        body = raw;
      }
      const header = (v: string | string[] | undefined) => (Array.isArray(v) ? v.join(',') : v);
      const entry: SimRequest = {
        method: req.method ?? 'GET',
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        body,
      };
      const auth = header(req.headers.authorization);
      const version = header(req.headers['cal-api-version']);
      if (auth !== undefined) entry.authorization = auth;
      if (version !== undefined) entry.calApiVersion = version;
      requests.push(entry);
      if (failure.mode !== 'none') {
        const mode = failure.mode;
        if (--failure.times <= 0) failure = { mode: 'none', times: Infinity };
        // An outage looks like a proxy error page, not a Cal.com envelope, so clients must cope with non-JSON.
        if (mode === 'down')
          return void res.writeHead(503, { 'content-type': 'text/plain' }).end('Service Unavailable');
        const retryAfter = String(opts.retryAfterSeconds ?? 1);
        res.writeHead(429, {
          'content-type': 'application/json',
          'retry-after': retryAfter,
          'x-ratelimit-limit-default': '120',
          'x-ratelimit-remaining-default': '0',
        });
        return void res.end(
          JSON.stringify(envelope(429, 'ThrottlerException', 'ThrottlerException: Too Many Requests', url.pathname)),
        );
      }
      route(req, url, body).then(
        ({ status, data }) =>
          void res
            .writeHead(status, { 'content-type': 'application/json' })
            .end(JSON.stringify({ status: 'success', data })),
        (err: unknown) => {
          const e =
            err instanceof HttpError ? err : new HttpError(500, 'InternalServerErrorException', (err as Error).message);
          res
            .writeHead(e.status, { 'content-type': 'application/json' })
            .end(JSON.stringify(envelope(e.status, e.code, e.message, url.pathname, e.details)));
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    eventTypes,
    bookings,
    requests,
    webhookDeliveries,
    setFailure: (mode, o) => void (failure = { mode, times: o?.times ?? Infinity }),
    setWebhook: (config) => void (webhook = config),
    sendWebhook,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

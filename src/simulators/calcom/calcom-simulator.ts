import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CALCOM_SIGNATURE_HEADER, signCalcomBody } from '../../scheduling/calcom/calcom-signature.ts';
import type { SimEventType } from './availability.ts';
import { createBookingStore, type SimBooking } from './calcom-sim-bookings.ts';
import { bookingOutput, ORGANIZER, webhookPayload } from './calcom-sim-render.ts';
import { envelope, eventTypeOutput, HttpError } from './calcom-sim-wire.ts';

export type { SimEventType, WeeklyRule } from './availability.ts';

// Local stand-in for Cal.com API v2 (Cal.com's API v2 docs), for tests and offline demos. It speaks the
// same wire protocol as api.cal.com for the endpoints our client uses; differences are noted inline.

export interface SimRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  authorization?: string;
  calApiVersion?: string;
  body: unknown;
}

type FailureMode = 'none' | 'down' | 'rate-limited' | 'lost-answer';

export type WebhookTrigger = 'BOOKING_CREATED' | 'BOOKING_RESCHEDULED' | 'BOOKING_CANCELLED' | 'BOOKING_REJECTED';
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
  /**
   * Hosts of a round-robin team (default 1): a time stays bookable until each host has a booking then,
   * so booking it again is not "taken" but lands with another host.
   */
  hosts?: number;
}

export interface CalcomSimulator {
  url: string;
  apiKey: string;
  eventTypes: SimEventType[];
  bookings: Map<string, SimBooking>;
  requests: SimRequest[];
  webhookDeliveries: WebhookDelivery[];
  /**
   * `times` limits the failure to the next n requests, then the simulator recovers. `lost-answer`: the
   * request is carried out (a booking is made), then answered 502 as a proxy whose upstream reply was lost.
   */
  setFailure(mode: FailureMode, opts?: { times?: number }): void;
  setWebhook(config: WebhookConfig | undefined): void;
  sendWebhook(trigger: WebhookTrigger, booking: SimBooking | string): Promise<WebhookDelivery>;
  /**
   * The host declines a booking held for confirmation (Cal.com's web app; BOOKING_REJECTED). The simulator
   * confirms every booking at once, so any booking stands in for one awaiting confirmation.
   */
  rejectBooking(uid: string, reason?: string): SimBooking;
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

const SLOTS_VERSION = '2024-09-04';
const BOOKINGS_VERSION = '2024-08-13';
const EVENT_TYPES_VERSION = '2024-06-14';

export async function startCalcomSimulator(opts: CalcomSimulatorOptions = {}): Promise<CalcomSimulator> {
  const apiKey = opts.apiKey ?? 'cal_test_simulator_key';
  const now = opts.now ?? (() => new Date());
  const eventTypes = opts.eventTypes ?? [DEFAULT_EVENT_TYPE];
  const requests: SimRequest[] = [];
  const webhookDeliveries: WebhookDelivery[] = [];
  let webhook = opts.webhook;
  let failure: { mode: FailureMode; times: number } = { mode: 'none', times: Infinity };
  const store = createBookingStore({
    eventTypes,
    now,
    capacity: opts.capacity,
    hosts: opts.hosts,
    slotFormat: opts.slotFormat,
    slotTakenMessage: opts.slotTakenMessage,
  });
  const { bookings, eventType, existing } = store;
  const output = (b: SimBooking): unknown => bookingOutput(b, eventType(b.eventTypeId));

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
    if (isSlots && req.method === 'GET') return { status: 200, data: store.listSlots(url.searchParams) };
    if (eventTypeRead && req.method === 'GET')
      return { status: 200, data: eventTypeOutput(eventType(decodeURIComponent(eventTypeRead[1]!)), ORGANIZER) };
    if (path === '/v2/bookings' && req.method === 'POST')
      return respond(201, store.createBooking(input), 'BOOKING_CREATED');
    if (path === '/v2/bookings' && req.method === 'GET')
      return { status: 200, data: store.findBookings(url.searchParams).map(output) };
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
      return respond(201, store.reschedule(existing(decodeURIComponent(m[1]!)), input), 'BOOKING_RESCHEDULED');
    throw new HttpError(404, 'NotFoundException', `Cannot ${req.method} ${path}`);
  }

  function respond(status: number, b: SimBooking, trigger: WebhookTrigger): { status: number; data: unknown } {
    if (webhook?.autoSend) void sendWebhook(trigger, b).catch(() => undefined);
    return { status, data: output(b) };
  }

  async function sendWebhook(trigger: WebhookTrigger, ref: SimBooking | string): Promise<WebhookDelivery> {
    if (!webhook) throw new Error('calcom simulator: no webhook configured');
    const b = typeof ref === 'string' ? existing(ref) : ref;
    const body = JSON.stringify({
      triggerEvent: trigger,
      createdAt: now().toISOString(),
      payload: webhookPayload(
        trigger,
        b,
        eventType(b.eventTypeId),
        b.rescheduledFromUid ? bookings.get(b.rescheduledFromUid) : undefined,
      ),
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

  function rejectBooking(uid: string, reason?: string): SimBooking {
    const b = existing(uid);
    b.status = 'rejected';
    b.updatedAt = now().toISOString();
    if (reason !== undefined) b.rejectionReason = reason;
    if (webhook?.autoSend) void sendWebhook('BOOKING_REJECTED', b).catch(() => undefined);
    return b;
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
      const mode = failure.mode;
      if (mode !== 'none' && --failure.times <= 0) failure = { mode: 'none', times: Infinity };
      if (mode === 'down' || mode === 'rate-limited') {
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
      // lost-answer: the request is carried out, but a proxy answers 502 instead of Cal.com's reply.
      const lost = () => void res.writeHead(502, { 'content-type': 'text/plain' }).end('Bad Gateway');
      route(req, url, body).then(
        ({ status, data }) =>
          mode === 'lost-answer'
            ? lost()
            : void res
                .writeHead(status, { 'content-type': 'application/json' })
                .end(JSON.stringify({ status: 'success', data })),
        (err: unknown) => {
          if (mode === 'lost-answer') return lost();
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
    rejectBooking,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

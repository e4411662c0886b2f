// The real Cal.com client against the local simulator, over HTTP. Dates are in 2050 so that the
// simulator's "no bookings in the past" rule never interferes; 2050-09-05 is a Monday.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { startCalcomSimulator, type CalcomSimulatorOptions } from '../../src/simulators/calcom/calcom-simulator.ts';
import { signCalcomBody, verifyCalcomSignature } from '../../src/scheduling/calcom/calcom-signature.ts';

const EVENT_TYPE_ID = 1001; // the simulator's default event type: Mon–Fri 09:00–17:00 Europe/Berlin, 30 min
const MONDAY = { start: new Date('2050-09-05T00:00:00Z'), end: new Date('2050-09-05T23:59:59Z') };
const ATTENDEE = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  timeZone: 'Europe/London',
  phoneNumber: '+447700900123',
};

async function setup(t: TestContext, opts: CalcomSimulatorOptions = {}) {
  const sim = await startCalcomSimulator(opts);
  t.after(() => sim.close());
  const sleeps: number[] = [];
  const client = new CalcomClient({ baseUrl: sim.url, backoffBaseMs: 100, sleep: async (ms) => void sleeps.push(ms) });
  const book = (start: string) =>
    client.createBooking({ apiKey: sim.apiKey, eventTypeId: EVENT_TYPE_ID, start, attendee: ATTENDEE });
  return { sim, client, sleeps, book };
}

async function bookOk(
  book: (start: string) => Promise<Awaited<ReturnType<CalcomClient['createBooking']>>>,
  start: string,
) {
  const r = await book(start);
  assert.ok(r.ok, JSON.stringify(r));
  return r.booking;
}

test('slots as {start} objects, in the requested time zone, with the right pinned headers', async (t) => {
  const { sim, client } = await setup(t);
  const r = await client.listSlots({
    apiKey: sim.apiKey,
    eventTypeId: EVENT_TYPE_ID,
    timeZone: 'Europe/Berlin',
    ...MONDAY,
  });
  assert.ok(r.ok);
  assert.equal(r.slots.length, 16); // 09:00–16:30 every 30 minutes
  assert.deepEqual(r.slots[0], { start: '2050-09-05T09:00:00.000+02:00' });
  assert.equal(r.slots.at(-1)?.start, '2050-09-05T16:30:00.000+02:00');
  const req = sim.requests[0]!;
  assert.equal(req.calApiVersion, '2024-09-04');
  assert.equal(req.authorization, `Bearer ${sim.apiKey}`);
  assert.deepEqual(req.query, {
    start: '2050-09-05T00:00:00.000Z',
    end: '2050-09-05T23:59:59.000Z',
    eventTypeId: '1001',
    timeZone: 'Europe/Berlin',
  });

  // Winter: Berlin is UTC+1.
  const jan = await client.listSlots({
    apiKey: sim.apiKey,
    eventTypeId: EVENT_TYPE_ID,
    timeZone: 'Europe/Berlin',
    start: new Date('2050-01-03T00:00:00Z'),
    end: new Date('2050-01-03T23:59:59Z'),
  });
  assert.ok(jan.ok);
  assert.equal(jan.slots[0]?.start, '2050-01-03T09:00:00.000+01:00');
});

test('slots as plain strings, flattened across days in time order', async (t) => {
  const { sim, client } = await setup(t, { slotFormat: 'string' });
  // In Auckland (UTC+12 in early September) Monday's Berlin afternoon falls on Tuesday.
  const r = await client.listSlots({
    apiKey: sim.apiKey,
    eventTypeId: EVENT_TYPE_ID,
    timeZone: 'Pacific/Auckland',
    ...MONDAY,
  });
  assert.ok(r.ok);
  assert.equal(r.slots.length, 16);
  assert.deepEqual(r.slots[0], { start: '2050-09-05T19:00:00.000+12:00' });
  assert.equal(r.slots[10]?.start, '2050-09-06T00:00:00.000+12:00');
  assert.equal(r.slots.at(-1)?.start, '2050-09-06T02:30:00.000+12:00');
  const instants = r.slots.map((s) => Date.parse(s.start));
  assert.deepEqual(
    instants,
    [...instants].sort((a, b) => a - b),
  );
});

test('booking happy path: UTC start sent, booking parsed, slot no longer offered', async (t) => {
  const { sim, client } = await setup(t);
  const r = await client.createBooking({
    apiKey: sim.apiKey,
    eventTypeId: EVENT_TYPE_ID,
    start: '2050-09-05T09:00:00.000+02:00',
    attendee: ATTENDEE,
    metadata: { leadId: 'lead_1' },
  });
  assert.ok(r.ok, JSON.stringify(r));
  assert.equal(r.booking.start, '2050-09-05T07:00:00.000Z');
  assert.equal(r.booking.end, '2050-09-05T07:30:00.000Z');
  assert.equal(r.booking.status, 'accepted');
  assert.equal(r.booking.eventTypeId, EVENT_TYPE_ID);
  assert.deepEqual(r.booking.metadata, { leadId: 'lead_1' });
  assert.ok(sim.bookings.has(r.booking.uid));
  const req = sim.requests.at(-1)!;
  assert.equal(req.calApiVersion, '2024-08-13');
  assert.deepEqual(req.body, {
    start: '2050-09-05T07:00:00Z',
    eventTypeId: EVENT_TYPE_ID,
    attendee: ATTENDEE,
    metadata: { leadId: 'lead_1' },
  });

  const slots = await client.listSlots({ apiKey: sim.apiKey, eventTypeId: EVENT_TYPE_ID, timeZone: 'UTC', ...MONDAY });
  assert.ok(slots.ok);
  assert.equal(slots.slots[0]?.start, '2050-09-05T07:30:00.000+00:00');
});

test('a taken slot is a value, not an error, and is not retried', async (t) => {
  const { sim, sleeps, book } = await setup(t);
  await bookOk(book, '2050-09-05T07:00:00Z');
  const before = sim.requests.length;
  const r = await book('2050-09-05T07:00:00Z');
  assert.ok(!r.ok && 'slotTaken' in r, JSON.stringify(r));
  assert.match(r.message, /already has booking/);
  assert.equal(r.afterAmbiguousRetry, undefined);
  assert.equal(sim.requests.length, before + 1);
  assert.deepEqual(sleeps, []);

  // Outside working hours is refused the same way by Cal.com ("not available").
  const night = await book('2050-09-05T23:00:00Z');
  assert.ok(!night.ok && 'slotTaken' in night);
});

test('the v1 wording no_available_users_found_error is also recognised as slot taken', async (t) => {
  const { book } = await setup(t, { slotTakenMessage: 'no_available_users_found_error' });
  await bookOk(book, '2050-09-05T07:00:00Z');
  const r = await book('2050-09-05T07:00:00Z');
  assert.ok(!r.ok && 'slotTaken' in r);
});

test("a bad key is unauthorized, with Cal.com's message, and not retried", async (t) => {
  const { sim, client, sleeps } = await setup(t);
  const r = await client.createBooking({
    apiKey: 'cal_live_wrong',
    eventTypeId: EVENT_TYPE_ID,
    start: '2050-09-05T07:00:00Z',
    attendee: ATTENDEE,
  });
  assert.ok(!r.ok && 'error' in r);
  assert.equal(r.error.kind, 'unauthorized');
  assert.equal(r.error.status, 401);
  assert.equal(r.error.code, 'UnauthorizedException');
  assert.match(r.error.message, /401 UnauthorizedException: Invalid API Key/);
  assert.equal(sim.requests.length, 1);
  assert.deepEqual(sleeps, []);
});

test('Cal.com down: retried with growing backoff, then reported as unavailable', async (t) => {
  const { sim, client, sleeps } = await setup(t);
  sim.setFailure('down');
  const r = await client.listSlots({ apiKey: sim.apiKey, eventTypeId: EVENT_TYPE_ID, timeZone: 'UTC', ...MONDAY });
  assert.ok(!r.ok);
  assert.equal(r.error.kind, 'unavailable');
  assert.equal(r.error.status, 503);
  assert.match(r.error.message, /503: Service Unavailable/);
  assert.equal(sim.requests.length, 3); // first attempt + maxRetries (2)
  assert.equal(sleeps.length, 2);
  assert.ok(sleeps[0]! >= 50 && sleeps[0]! <= 100, `first backoff ${sleeps[0]}`);
  assert.ok(sleeps[1]! >= 100 && sleeps[1]! <= 200, `second backoff ${sleeps[1]}`);
});

test('a booking is not posted again after a 5xx (it may have booked), only after a 429 (it did nothing)', async (t) => {
  const { sim, book } = await setup(t);
  sim.setFailure('lost-answer', { times: 1 });
  const r = await book('2050-09-05T07:00:00Z');
  assert.ok(!r.ok && 'error' in r);
  assert.deepEqual([r.error.kind, r.error.status, r.error.ambiguous], ['unavailable', 502, true]);
  assert.equal(sim.requests.length, 1);
  assert.equal(sim.bookings.size, 1, 'Cal.com did book: the caller looks it up');

  sim.setFailure('rate-limited', { times: 1 });
  const retried = await bookOk(book, '2050-09-05T07:30:00Z');
  assert.equal(retried.start, '2050-09-05T07:30:00.000Z');
  assert.equal(sim.requests.length, 3);
});

test('an outage is ridden out; a reschedule retried after a 5xx then finding its slot taken is flagged', async (t) => {
  const { sim, client, book } = await setup(t);
  const first = await bookOk(book, '2050-09-05T07:00:00Z');
  await bookOk(book, '2050-09-05T07:30:00Z');
  sim.setFailure('down', { times: 1 });
  assert.ok((await client.getBooking(sim.apiKey, first.uid)).ok);
  assert.equal(sim.requests.length, 4);
  sim.setFailure('down', { times: 1 });
  const r = await client.rescheduleBooking(sim.apiKey, first.uid, '2050-09-05T07:30:00Z');
  assert.ok(!r.ok && 'slotTaken' in r);
  assert.equal(r.afterAmbiguousRetry, true);
});

test('unreachable Cal.com is a network failure after retries', async () => {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const sleeps: number[] = [];
  const client = new CalcomClient({ baseUrl: `http://127.0.0.1:${port}`, sleep: async (ms) => void sleeps.push(ms) });
  const r = await client.getBooking('cal_x', 'abc');
  assert.ok(!r.ok);
  assert.equal(r.error.kind, 'network');
  assert.equal(r.error.message, 'Could not reach Cal.com (ECONNREFUSED).');
  assert.notEqual(r.error.ambiguous, true, 'a refused connection sent nothing, so nothing can have been booked');
  assert.equal(sleeps.length, 2);
});

test('429 honours Retry-After (seconds) exactly, then succeeds', async (t) => {
  const { sim, client, sleeps } = await setup(t, { retryAfterSeconds: 3 });
  sim.setFailure('rate-limited', { times: 1 });
  const r = await client.listSlots({ apiKey: sim.apiKey, eventTypeId: EVENT_TYPE_ID, timeZone: 'UTC', ...MONDAY });
  assert.ok(r.ok);
  assert.deepEqual(sleeps, [3000]);
  assert.equal(sim.requests.length, 2);
});

test('persistent 429 ends as rate_limited with retryAfterMs; a very long Retry-After is not waited for', async (t) => {
  const { sim, client, sleeps } = await setup(t, { retryAfterSeconds: 2 });
  sim.setFailure('rate-limited');
  const r = await client.getBooking(sim.apiKey, 'whatever');
  assert.ok(!r.ok);
  assert.deepEqual(
    { kind: r.error.kind, status: r.error.status, retryAfterMs: r.error.retryAfterMs },
    { kind: 'rate_limited', status: 429, retryAfterMs: 2000 },
  );
  assert.deepEqual(sleeps, [2000, 2000]);

  const slow = await setup(t, { retryAfterSeconds: 120 });
  slow.sim.setFailure('rate-limited');
  const r2 = await slow.client.getBooking(slow.sim.apiKey, 'whatever');
  assert.ok(!r2.ok && r2.error.retryAfterMs === 120_000);
  assert.equal(slow.sim.requests.length, 1);
  assert.deepEqual(slow.sleeps, []);
});

test("a 400 validation error is bad_request with the validator's details, never retried", async (t) => {
  const { sim, client, sleeps } = await setup(t);
  const r = await client.createBooking({
    apiKey: sim.apiKey,
    eventTypeId: EVENT_TYPE_ID,
    start: '2050-09-05T07:00:00Z',
    attendee: { ...ATTENDEE, timeZone: 'Mars/Olympus_Mons' },
  });
  assert.ok(!r.ok && 'error' in r, JSON.stringify(r));
  assert.equal(r.error.kind, 'bad_request');
  assert.match(r.error.message, /attendee\.timeZone must be a valid IANA time zone/);
  assert.equal(sim.requests.length, 1);
  assert.deepEqual(sleeps, []);

  // A start without an offset is ambiguous (whose 09:00?), so it is refused before any request.
  for (const start of ['2050-09-05T09:00:00', 'next monday']) {
    const local = await client.createBooking({
      apiKey: sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      start,
      attendee: ATTENDEE,
    });
    assert.ok(!local.ok && 'error' in local && local.error.kind === 'bad_request', JSON.stringify(local));
  }
  assert.equal(sim.requests.length, 1);
});

test('get and cancel; the cancelled slot is offered again; unknown uid is not_found', async (t) => {
  const { sim, client, book } = await setup(t);
  const b = await bookOk(book, '2050-09-05T07:00:00Z');
  const got = await client.getBooking(sim.apiKey, b.uid);
  assert.ok(got.ok);
  assert.deepEqual(got.booking, b);

  const c = await client.cancelBooking(sim.apiKey, b.uid, 'Lead asked to cancel');
  assert.ok(c.ok);
  assert.equal(c.booking.status, 'cancelled');
  assert.equal(c.booking.cancellationReason, 'Lead asked to cancel');
  assert.equal(sim.requests.at(-1)?.path, `/v2/bookings/${b.uid}/cancel`);
  const slots = await client.listSlots({ apiKey: sim.apiKey, eventTypeId: EVENT_TYPE_ID, timeZone: 'UTC', ...MONDAY });
  assert.ok(slots.ok && slots.slots[0]?.start === '2050-09-05T07:00:00.000+00:00');

  const again = await client.cancelBooking(sim.apiKey, b.uid);
  assert.ok(!again.ok && again.error.kind === 'bad_request');
  const missing = await client.getBooking(sim.apiKey, 'nope');
  assert.ok(!missing.ok && missing.error.kind === 'not_found' && missing.error.status === 404);
});

test('reschedule gives a new uid linked both ways; onto a taken slot it is slotTaken', async (t) => {
  const { sim, client, book } = await setup(t);
  const old = await bookOk(book, '2050-09-05T07:00:00Z');
  const r = await client.rescheduleBooking(sim.apiKey, old.uid, '2050-09-05T10:00:00.000+02:00', 'Lead prefers later');
  assert.ok(r.ok, JSON.stringify(r));
  assert.notEqual(r.booking.uid, old.uid);
  assert.equal(r.booking.rescheduledFromUid, old.uid);
  assert.equal(r.booking.start, '2050-09-05T08:00:00.000Z');
  assert.deepEqual(sim.requests.at(-1)?.body, {
    start: '2050-09-05T08:00:00Z',
    reschedulingReason: 'Lead prefers later',
  });
  const previous = await client.getBooking(sim.apiKey, old.uid);
  assert.ok(previous.ok);
  assert.equal(previous.booking.status, 'cancelled');
  assert.equal(previous.booking.rescheduledToUid, r.booking.uid);

  const other = await bookOk(book, '2050-09-05T09:00:00Z');
  const clash = await client.rescheduleBooking(sim.apiKey, other.uid, '2050-09-05T08:00:00Z');
  assert.ok(!clash.ok && 'slotTaken' in clash);
  // Moving a booking onto its own time is allowed: it does not block itself.
  const same = await client.rescheduleBooking(sim.apiKey, other.uid, '2050-09-05T09:00:00Z');
  assert.ok(same.ok);
});

test('simulator refuses a missing cal-api-version instead of silently changing shape', async (t) => {
  const { sim } = await setup(t);
  const res = await fetch(`${sim.url}/v2/bookings/abc`, { headers: { authorization: `Bearer ${sim.apiKey}` } });
  assert.equal(res.status, 400);
  const body = (await res.json()) as { status: string; error: { code: string; message: string } };
  assert.equal(body.status, 'error');
  assert.equal(body.error.code, 'BadRequestException');
  assert.match(body.error.message, /cal-api-version: 2024-08-13/);
});

test('webhooks: signed deliveries verify; tampered body, wrong secret and missing header do not', async (t) => {
  const received: { raw: Buffer; signature: string | undefined }[] = [];
  const receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({
        raw: Buffer.concat(chunks),
        signature: req.headers['x-cal-signature-256'] as string | undefined,
      });
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise((resolve) => receiver.close(resolve)));
  const secret = 'whsec_test';
  const { sim, client, book } = await setup(t, {
    webhook: { subscriberUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/cal`, secret },
  });
  const b = await bookOk(book, '2050-09-05T07:00:00Z');

  const created = await sim.sendWebhook('BOOKING_CREATED', b.uid);
  assert.equal(created.status, 200);
  const { raw, signature } = received[0]!;
  assert.equal(signature, signCalcomBody(secret, raw));
  assert.ok(verifyCalcomSignature(secret, raw, signature));
  assert.ok(verifyCalcomSignature(secret, raw.toString('utf8'), signature?.toUpperCase()));
  assert.ok(!verifyCalcomSignature(secret, Buffer.from(raw.toString().replace('Ada', 'Eve')), signature));
  assert.ok(!verifyCalcomSignature('whsec_other', raw, signature));
  assert.ok(!verifyCalcomSignature(secret, raw, undefined));
  assert.ok(!verifyCalcomSignature(secret, raw, `sha256=${signature}`));

  const event = JSON.parse(raw.toString()) as {
    triggerEvent: string;
    createdAt: string;
    payload: Record<string, unknown>;
  };
  assert.equal(event.triggerEvent, 'BOOKING_CREATED');
  assert.equal(event.payload.uid, b.uid);
  assert.equal(event.payload.status, 'ACCEPTED');
  assert.equal(event.payload.startTime, '2050-09-05T07:00:00.000Z');
  assert.equal(event.payload.eventTypeId, EVENT_TYPE_ID);
  assert.equal(typeof event.payload.bookingId, 'number');
  assert.deepEqual(
    (event.payload.attendees as { email: string }[]).map((a) => a.email),
    [ATTENDEE.email],
  );

  const moved = await client.rescheduleBooking(sim.apiKey, b.uid, '2050-09-05T08:00:00Z');
  assert.ok(moved.ok);
  await sim.sendWebhook('BOOKING_RESCHEDULED', moved.booking.uid);
  const rescheduled = JSON.parse(received[1]!.raw.toString()) as { payload: Record<string, unknown> };
  assert.equal(rescheduled.payload.uid, moved.booking.uid);
  assert.equal(rescheduled.payload.rescheduleUid, b.uid);
  assert.equal(rescheduled.payload.rescheduleStartTime, '2050-09-05T07:00:00.000Z');

  await client.cancelBooking(sim.apiKey, moved.booking.uid, 'No longer interested');
  await sim.sendWebhook('BOOKING_CANCELLED', moved.booking.uid);
  const cancelled = JSON.parse(received[2]!.raw.toString()) as { payload: Record<string, unknown> };
  assert.equal(cancelled.payload.status, 'CANCELLED');
  assert.equal(cancelled.payload.cancellationReason, 'No longer interested');

  // Without a secret Cal.com sends a fixed marker, which must never verify.
  sim.setWebhook({ subscriberUrl: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hooks/cal` });
  const unsigned = await sim.sendWebhook('BOOKING_CREATED', b.uid);
  assert.equal(unsigned.signature, 'no-secret-provided');
  assert.ok(!verifyCalcomSignature(secret, received[3]!.raw, received[3]!.signature));
});

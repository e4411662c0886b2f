// The Cal.com client's booking lookup and its "may have been applied" flag, against the simulator.
// They let bookConsult find a booking whose answer was lost instead of guessing.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test, type TestContext } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { startCalcomSimulator } from '../../src/simulators/calcom/calcom-simulator.ts';

const EVENT_TYPE_ID = 1001;
const ATTENDEE = { name: 'Ada Lovelace', email: 'ada@example.com', timeZone: 'Europe/London' };

async function setup(t: TestContext) {
  const sim = await startCalcomSimulator({
    eventTypes: [
      {
        id: EVENT_TYPE_ID,
        slug: 'consultation',
        title: 'Consultation',
        lengthInMinutes: 30,
        timeZone: 'Europe/Berlin',
        availability: [{ days: ['Monday'], startTime: '09:00', endTime: '17:00' }],
      },
      {
        id: 1002,
        slug: 'other',
        title: 'Other',
        lengthInMinutes: 30,
        timeZone: 'Europe/Berlin',
        availability: [{ days: ['Tuesday'], startTime: '09:00', endTime: '17:00' }],
      },
    ],
  });
  t.after(() => sim.close());
  const client = new CalcomClient({ baseUrl: sim.url, sleep: async () => {} });
  const book = async (eventTypeId: number, start: string, metadata?: Record<string, string>) => {
    const r = await client.createBooking({
      apiKey: sim.apiKey,
      eventTypeId,
      start,
      attendee: ATTENDEE,
      ...(metadata ? { metadata } : {}),
    });
    assert.ok(r.ok, JSON.stringify(r));
    return r.booking;
  };
  return { sim, client, book };
}

test(
  "findBookings: the event type's bookings inside the window, " + 'in start order, with metadata and any status',
  async (t) => {
    const { sim, client, book } = await setup(t);
    const late = await book(EVENT_TYPE_ID, '2050-09-05T14:00:00Z', { leadId: 'lead-b' });
    const early = await book(EVENT_TYPE_ID, '2050-09-05T07:00:00Z', { leadId: 'lead-a' });
    await book(1002, '2050-09-06T07:00:00Z');
    await book(EVENT_TYPE_ID, '2050-09-12T07:00:00Z');
    assert.ok((await client.cancelBooking(sim.apiKey, late.uid)).ok);
    sim.requests.length = 0;

    const r = await client.findBookings({
      apiKey: sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      afterStart: new Date('2050-09-05T06:59:00Z'),
      beforeEnd: new Date('2050-09-06T07:00:00Z'),
    });
    assert.ok(r.ok, JSON.stringify(r));
    assert.deepEqual(
      r.bookings.map((b) => [b.uid, b.start, b.status, b.metadata]),
      [
        [early.uid, '2050-09-05T07:00:00.000Z', 'accepted', { leadId: 'lead-a' }],
        [late.uid, '2050-09-05T14:00:00.000Z', 'cancelled', { leadId: 'lead-b' }],
      ],
    );
    const [req] = sim.requests;
    assert.equal(req?.method, 'GET');
    assert.equal(req?.path, '/v2/bookings');
    assert.equal(req?.calApiVersion, '2024-08-13');
    assert.deepEqual(req?.query, {
      eventTypeId: '1001',
      afterStart: '2050-09-05T06:59:00.000Z',
      beforeEnd: '2050-09-06T07:00:00.000Z',
      sortStart: 'asc',
      take: '100',
    });

    const none = await client.findBookings({
      apiKey: sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      afterStart: new Date('2050-10-01T00:00:00Z'),
      beforeEnd: new Date('2050-10-02T00:00:00Z'),
    });
    assert.deepEqual(none, { ok: true, bookings: [] });
    const badKey = await client.findBookings({
      apiKey: 'cal_live_wrong',
      eventTypeId: EVENT_TYPE_ID,
      afterStart: new Date(),
      beforeEnd: new Date(),
    });
    assert.ok(!badKey.ok && badKey.error.kind === 'unauthorized');
  },
);

test(
  'a write that failed after Cal.com may have processed it ' + 'is flagged ambiguous; a refused one is not',
  async (t) => {
    const { sim, client } = await setup(t);
    const attempt = () =>
      client.createBooking({
        apiKey: sim.apiKey,
        eventTypeId: EVENT_TYPE_ID,
        start: '2050-09-05T07:00:00Z',
        attendee: ATTENDEE,
      });

    sim.setFailure('down');
    const down = await attempt();
    assert.ok(!down.ok && 'error' in down);
    assert.deepEqual([down.error.kind, down.error.ambiguous], ['unavailable', true]);

    // A 429 is refused before any work is done.
    sim.setFailure('rate-limited');
    const limited = await attempt();
    assert.ok(!limited.ok && 'error' in limited);
    assert.deepEqual([limited.error.kind, limited.error.ambiguous], ['rate_limited', undefined]);

    // A 5xx first, then a refusal: the first attempt may still have done the write. (A booking is
    // not retried after a 5xx at all, so a reschedule shows it.)
    sim.setFailure('down', { times: 1 });
    const mixed = await client.rescheduleBooking(sim.apiKey, 'no-such-uid', '2050-09-05T07:00:00Z');
    assert.ok(!mixed.ok && 'error' in mixed);
    assert.deepEqual([mixed.error.kind, mixed.error.ambiguous], ['not_found', true]);

    sim.setFailure('none');
    const refused = await client.createBooking({
      apiKey: 'cal_live_wrong',
      eventTypeId: EVENT_TYPE_ID,
      start: '2050-09-05T07:00:00Z',
      attendee: ATTENDEE,
    });
    assert.ok(!refused.ok && 'error' in refused);
    assert.equal(refused.error.ambiguous, undefined);
  },
);

test('a connection refused never reached Cal.com, so it is not ambiguous', async () => {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const client = new CalcomClient({ baseUrl: `http://127.0.0.1:${port}`, sleep: async () => {} });
  const r = await client.createBooking({
    apiKey: 'cal_x',
    eventTypeId: EVENT_TYPE_ID,
    start: '2050-09-05T07:00:00Z',
    attendee: ATTENDEE,
  });
  assert.ok(!r.ok && 'error' in r);
  assert.deepEqual([r.error.kind, r.error.ambiguous], ['network', undefined]);
});

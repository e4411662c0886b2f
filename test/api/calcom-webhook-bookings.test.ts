// Cal.com webhooks through the real app over HTTP, the booking changes they carry (reschedules,
// cancellations, unknown bookings): deliveries come from the Cal.com simulator, signed as Cal.com
// signs them, and the bookings are made with the real client. The signature check and the
// endpoint's refusals: calcom-webhook-endpoint.test.ts. Dates are in
// 2050 so the simulator's "no bookings in the past" rule never interferes.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import {
  startCalcomSimulator,
  type CalcomSimulator,
  type WebhookDelivery,
  type WebhookTrigger,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

const EVENT_TYPE_ID = 1001; // the simulator's default: Mon–Fri 09:00–17:00 Europe/Berlin, 30 min
const SECRET = 'whsec-test-0123456789abcdef';
const OTHER_SECRET = 'whsec-other-fedcba9876543210';
const ATTENDEE = { name: 'Ada Lovelace', email: 'ada.webhook@example.com', timeZone: 'Europe/London' };

let sim: CalcomSimulator;
let app: TestApp;
let client: CalcomClient;
let baseUrl: string;
let ws: { workspaceId: string; slug: string };

const scheduling = (webhookSecret?: string) => ({
  scheduling: {
    provider: 'calcom' as const,
    apiKey: 'cal_test_simulator_key',
    eventTypeId: EVENT_TYPE_ID,
    ...(webhookSecret ? { webhookSecret } : {}),
  },
});

before(async () => {
  sim = await startCalcomSimulator();
  app = await startTestApp();
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  baseUrl = `http://127.0.0.1:${(app.http.server.address() as AddressInfo).port}`;
  client = new CalcomClient({ baseUrl: sim.url, sleep: async () => {} });
  ws = await app.createWorkspace('whatsapp', scheduling(SECRET));
  pointSimulatorAt(ws.slug, SECRET);
});
after(async () => {
  await app.close();
  await sim.close();
});

function pointSimulatorAt(slug: string, secret?: string): void {
  sim.setWebhook({ subscriberUrl: `${baseUrl}/api/webhooks/calcom/${slug}`, ...(secret ? { secret } : {}) });
}

// Each booking takes its own half-hour: the simulator has one host, so times must not collide.
let slotIndex = 0;
function nextSlot(): string {
  const day = Math.floor(slotIndex / 16);
  const start = Date.parse('2050-09-05T07:00:00Z') + day * 86_400_000 + (slotIndex % 16) * 1_800_000; // 09:00 Berlin, Monday
  slotIndex += 1;
  assert.ok(day < 5, 'out of weekday slots');
  return new Date(start).toISOString();
}

async function insertLead(workspaceId: string, status = 'new'): Promise<string> {
  const phone = uniquePhone();
  const { rows } = await app.db.pool.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, status)
     VALUES ($1, 'Ada Lovelace', $2, $3, now(), $4) RETURNING id`,
    [workspaceId, phone, `+${phone.replace(/\D/g, '')}`, status],
  );
  return rows[0].id;
}

/** A lead with a Cal.com booking, recorded as the agent records it (uid, start, metadata.leadId). */
async function bookedLead(opts: { status?: string; workspaceId?: string; recorded?: boolean } = {}) {
  const leadId = await insertLead(opts.workspaceId ?? ws.workspaceId, opts.status ?? 'booked');
  const r = await client.createBooking({
    apiKey: sim.apiKey,
    eventTypeId: EVENT_TYPE_ID,
    start: nextSlot(),
    attendee: ATTENDEE,
    metadata: { leadId },
  });
  assert.ok(r.ok, JSON.stringify(r));
  if (opts.recorded !== false) {
    await app.db.pool.query('UPDATE leads SET booking_uid = $2, booking_start = $3 WHERE id = $1', [
      leadId,
      r.booking.uid,
      r.booking.start,
    ]);
  }
  return { leadId, booking: r.booking };
}

async function leadRow(id: string) {
  const { rows } = await app.db.pool.query(
    'SELECT status, booking_uid, booking_start, updated_at FROM leads WHERE id = $1',
    [id],
  );
  return rows[0];
}

async function events(leadId: string, type?: string) {
  const { rows } = await app.db.pool.query(
    'SELECT type, data FROM lead_events WHERE lead_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY id',
    [leadId, type ?? null],
  );
  return rows;
}

/** Everything a delivery could write: leads, their timeline and the receipts. */
async function snapshot() {
  const { rows } = await app.db.pool.query(
    `SELECT (SELECT json_agg(l ORDER BY l.id) FROM leads l) AS leads,
            (SELECT count(*)::int FROM lead_events) AS events,
            (SELECT count(*)::int FROM webhook_receipts) AS receipts`,
  );
  return rows[0];
}

async function deliver(trigger: WebhookTrigger, uid: string): Promise<WebhookDelivery & { json: any }> {
  const d = await sim.sendWebhook(trigger, uid);
  assert.equal(d.error, undefined);
  return { ...d, json: JSON.parse(d.responseText ?? 'null') };
}

describe('booking changes', () => {
  test('BOOKING_RESCHEDULED moves the booking uid and start; the status stays', async () => {
    const { leadId, booking } = await bookedLead();
    const before = await leadRow(leadId);
    const newStart = nextSlot();
    const moved = await client.rescheduleBooking(sim.apiKey, booking.uid, newStart, 'Conflict');
    assert.ok(moved.ok);
    assert.notEqual(moved.booking.uid, booking.uid);
    const d = await deliver('BOOKING_RESCHEDULED', moved.booking.uid);
    assert.equal(d.status, 200);
    assert.deepEqual(d.json, { ok: true });

    const after = await leadRow(leadId);
    assert.equal(after.status, 'booked');
    assert.equal(after.booking_uid, moved.booking.uid);
    assert.equal(after.booking_start.toISOString(), newStart);
    assert.ok(after.updated_at > before.updated_at);
    assert.deepEqual(await events(leadId, 'booking.rescheduled'), [
      {
        type: 'booking.rescheduled',
        data: {
          bookingUid: moved.booking.uid,
          bookingStart: newStart,
          previousBookingUid: booking.uid,
          previousBookingStart: booking.start,
          actor: 'system',
        },
      },
    ]);

    // The replaced booking is cancelled in Cal.com; a cancellation for it no longer concerns the lead.
    const late = await deliver('BOOKING_CANCELLED', booking.uid);
    assert.deepEqual(late.json, { ok: true, ignored: 'unknown booking' });
    assert.equal((await leadRow(leadId)).status, 'booked');
  });

  test('BOOKING_RESCHEDULED finds a lead through metadata.leadId only while it holds no booking', async () => {
    const unrecorded = await bookedLead({ status: 'in_conversation', recorded: false });
    const moved = await client.rescheduleBooking(sim.apiKey, unrecorded.booking.uid, nextSlot());
    assert.ok(moved.ok);
    assert.deepEqual((await deliver('BOOKING_RESCHEDULED', moved.booking.uid)).json, { ok: true });
    assert.equal((await leadRow(unrecorded.leadId)).booking_uid, moved.booking.uid);

    // A lead that holds another booking is not re-pointed by a delivery about a different one.
    const holder = await bookedLead();
    const other = await client.createBooking({
      apiKey: sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      start: nextSlot(),
      attendee: ATTENDEE,
      metadata: { leadId: holder.leadId },
    });
    assert.ok(other.ok);
    const otherMoved = await client.rescheduleBooking(sim.apiKey, other.booking.uid, nextSlot());
    assert.ok(otherMoved.ok);
    assert.deepEqual((await deliver('BOOKING_RESCHEDULED', otherMoved.booking.uid)).json, {
      ok: true,
      ignored: 'unknown booking',
    });
    assert.equal((await leadRow(holder.leadId)).booking_uid, holder.booking.uid);
  });

  test('BOOKING_CANCELLED makes the lead needs_human, the reason in the timeline (raw UTF-8 bytes)', async () => {
    const { leadId, booking } = await bookedLead();
    const reason = 'Can’t make it 🙏 — will call back';
    await client.cancelBooking(sim.apiKey, booking.uid, reason);
    const d = await deliver('BOOKING_CANCELLED', booking.uid);
    assert.equal(d.status, 200, d.responseText);
    const row = await leadRow(leadId);
    assert.equal(row.status, 'needs_human');
    assert.equal(row.booking_uid, booking.uid, 'the cancelled booking stays on record for the operator');
    assert.deepEqual(await events(leadId, 'booking.cancelled'), [
      {
        type: 'booking.cancelled',
        data: { bookingUid: booking.uid, reason, from: 'booked', to: 'needs_human', actor: 'system' },
      },
    ]);
  });

  test('BOOKING_CANCELLED for a lead already with an operator only records the event', async () => {
    const { leadId, booking } = await bookedLead({ status: 'needs_human' });
    await client.cancelBooking(sim.apiKey, booking.uid);
    assert.deepEqual((await deliver('BOOKING_CANCELLED', booking.uid)).json, { ok: true });
    assert.equal((await leadRow(leadId)).status, 'needs_human');
    assert.deepEqual(await events(leadId, 'booking.cancelled'), [
      {
        type: 'booking.cancelled',
        data: { bookingUid: booking.uid, reason: null, status: 'needs_human', actor: 'system' },
      },
    ]);
  });

  test('unknown booking: 200 ignored, a receipt, no lead touched', async () => {
    const stray = await client.createBooking({
      apiKey: sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      start: nextSlot(),
      attendee: ATTENDEE,
    });
    assert.ok(stray.ok);
    const before = await snapshot();
    const d = await deliver('BOOKING_CREATED', stray.booking.uid);
    assert.equal(d.status, 200);
    assert.deepEqual(d.json, { ok: true, ignored: 'unknown booking' });
    const after = await snapshot();
    assert.deepEqual(after.leads, before.leads);
    assert.equal(after.events, before.events);
    assert.equal(after.receipts, before.receipts + 1);
  });

  test("another workspace's booking is unknown here, even with a valid signature", async () => {
    const other = await app.createWorkspace('voice', scheduling(OTHER_SECRET));
    const { leadId, booking } = await bookedLead();
    await client.cancelBooking(sim.apiKey, booking.uid);
    pointSimulatorAt(other.slug, OTHER_SECRET);
    const d = await deliver('BOOKING_CANCELLED', booking.uid);
    pointSimulatorAt(ws.slug, SECRET);
    assert.deepEqual(d.json, { ok: true, ignored: 'unknown booking' });
    assert.equal((await leadRow(leadId)).status, 'booked');
    // The receipt is per workspace: the right workspace still handles its own copy.
    assert.deepEqual((await deliver('BOOKING_CANCELLED', booking.uid)).json, { ok: true });
    assert.equal((await leadRow(leadId)).status, 'needs_human');
  });
});

describe('logs', () => {
  // The same check as in calcom-webhook-endpoint.test.ts, over the deliveries of this file: the
  // cancellation reasons and attendees of the booking changes above.
  test('logs carry neither secrets nor personal data', () => {
    const logs = app.logs.join('\n');
    const outcomes = app.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'calcom webhook');
    assert.ok(outcomes.length > 0);
    for (const line of outcomes) assert.match(line.reqId, /^[0-9a-f-]{36}$/, 'correlated with its request');
    for (const secretOrPersonal of [SECRET, OTHER_SECRET, ATTENDEE.email, 'Double-booked', 'make it', 'Ada Lovelace']) {
      assert.equal(logs.includes(secretOrPersonal), false, secretOrPersonal);
    }
  });
});

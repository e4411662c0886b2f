// Cal.com webhooks through the real app over HTTP, the booking changes they carry (reschedules,
// cancellations, rejections, unknown bookings): deliveries come from the Cal.com simulator, signed as Cal.com
// signs them, and the bookings are made with the real client. The signature check and the
// endpoint's refusals: calcom-webhook-endpoint.test.ts. Dates are in
// 2050 so the simulator's "no bookings in the past" rule never interferes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ATTENDEE,
  EVENT_TYPE_ID,
  OTHER_SECRET,
  SECRET,
  scheduling,
  setUpCalcomWebhookApp,
} from '../helpers/calcom-webhook-setup.ts';

const cal = setUpCalcomWebhookApp();
const { pointSimulatorAt, nextSlot, bookedLead, leadRow, events, snapshot, deliver } = cal;

describe('booking changes', () => {
  test('BOOKING_RESCHEDULED moves the booking uid and start; the status stays', async () => {
    const { leadId, booking } = await bookedLead();
    const before = await leadRow(leadId);
    const newStart = nextSlot();
    const moved = await cal.client.rescheduleBooking(cal.sim.apiKey, booking.uid, newStart, 'Conflict');
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
    const moved = await cal.client.rescheduleBooking(cal.sim.apiKey, unrecorded.booking.uid, nextSlot());
    assert.ok(moved.ok);
    assert.deepEqual((await deliver('BOOKING_RESCHEDULED', moved.booking.uid)).json, { ok: true });
    assert.equal((await leadRow(unrecorded.leadId)).booking_uid, moved.booking.uid);

    // A lead that holds another booking is not re-pointed by a delivery about a different one.
    const holder = await bookedLead();
    const other = await cal.client.createBooking({
      apiKey: cal.sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      start: nextSlot(),
      attendee: ATTENDEE,
      metadata: { leadId: holder.leadId },
    });
    assert.ok(other.ok);
    const otherMoved = await cal.client.rescheduleBooking(cal.sim.apiKey, other.booking.uid, nextSlot());
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
    await cal.client.cancelBooking(cal.sim.apiKey, booking.uid, reason);
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
    await cal.client.cancelBooking(cal.sim.apiKey, booking.uid);
    assert.deepEqual((await deliver('BOOKING_CANCELLED', booking.uid)).json, { ok: true });
    assert.equal((await leadRow(leadId)).status, 'needs_human');
    assert.deepEqual(await events(leadId, 'booking.cancelled'), [
      {
        type: 'booking.cancelled',
        data: { bookingUid: booking.uid, reason: null, status: 'needs_human', actor: 'system' },
      },
    ]);
  });

  test('BOOKING_REJECTED (the host declines a booking awaiting confirmation) is a cancellation', async () => {
    const { leadId, booking } = await bookedLead();
    cal.sim.rejectBooking(booking.uid, 'Fully booked that week');
    const d = await deliver('BOOKING_REJECTED', booking.uid);
    assert.equal(d.status, 200, d.responseText);
    assert.deepEqual(d.json, { ok: true });
    const row = await leadRow(leadId);
    assert.equal(row.status, 'needs_human');
    assert.equal(row.booking_uid, booking.uid, 'the rejected booking stays on record for the operator');
    const rejected = {
      type: 'booking.cancelled',
      data: {
        bookingUid: booking.uid,
        reason: 'Rejected by the host: Fully booked that week',
        from: 'booked',
        to: 'needs_human',
        actor: 'system',
      },
    };
    assert.deepEqual(await events(leadId, 'booking.cancelled'), [rejected]);
    // Cal.com sending it again is the same event.
    assert.deepEqual((await deliver('BOOKING_REJECTED', booking.uid)).json, { ok: true, duplicate: true });
    assert.deepEqual(await events(leadId, 'booking.cancelled'), [rejected]);

    // Without a reason from the host; and a lead already with an operator keeps its status.
    const waiting = await bookedLead({ status: 'needs_human' });
    cal.sim.rejectBooking(waiting.booking.uid);
    assert.deepEqual((await deliver('BOOKING_REJECTED', waiting.booking.uid)).json, { ok: true });
    assert.equal((await leadRow(waiting.leadId)).status, 'needs_human');
    assert.deepEqual(await events(waiting.leadId, 'booking.cancelled'), [
      {
        type: 'booking.cancelled',
        data: {
          bookingUid: waiting.booking.uid,
          reason: 'Rejected by the host',
          status: 'needs_human',
          actor: 'system',
        },
      },
    ]);
  });

  test('unknown booking: 200 ignored, a receipt, no lead touched', async () => {
    const stray = await cal.client.createBooking({
      apiKey: cal.sim.apiKey,
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
    const other = await cal.app.createWorkspace('voice', scheduling(OTHER_SECRET));
    const { leadId, booking } = await bookedLead();
    await cal.client.cancelBooking(cal.sim.apiKey, booking.uid);
    pointSimulatorAt(other.slug, OTHER_SECRET);
    const d = await deliver('BOOKING_CANCELLED', booking.uid);
    const rejected = await deliver('BOOKING_REJECTED', booking.uid);
    pointSimulatorAt(cal.ws.slug, SECRET);
    assert.deepEqual(d.json, { ok: true, ignored: 'unknown booking' });
    assert.deepEqual(rejected.json, { ok: true, ignored: 'unknown booking' });
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
    const logs = cal.app.logs.join('\n');
    const outcomes = cal.app.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'calcom webhook');
    assert.ok(outcomes.length > 0);
    for (const line of outcomes) assert.match(line.reqId, /^[0-9a-f-]{36}$/, 'correlated with its request');
    for (const secretOrPersonal of [
      SECRET,
      OTHER_SECRET,
      ATTENDEE.email,
      'Double-booked',
      'make it',
      'Fully booked',
      'Ada Lovelace',
    ]) {
      assert.equal(logs.includes(secretOrPersonal), false, secretOrPersonal);
    }
  });
});

// Cal.com webhooks through the real app over HTTP, the signature check and the endpoint (replays,
// unknown slugs, unusable or oversized bodies, logs): deliveries come from the Cal.com simulator,
// signed as Cal.com signs them, and the bookings are made with the real client. The booking
// changes they carry: calcom-webhook-bookings.test.ts. Dates are in
// 2050 so the simulator's "no bookings in the past" rule never interferes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { signCalcomBody } from '../../src/scheduling/calcom/calcom-signature.ts';
import { ATTENDEE, OTHER_SECRET, SECRET, scheduling, setUpCalcomWebhookApp } from '../helpers/calcom-webhook-setup.ts';

const cal = setUpCalcomWebhookApp();
const { pointSimulatorAt, nextSlot, bookedLead, leadRow, events, snapshot, deliver } = cal;

/** Posts raw bytes, as a captured or hand-made delivery. */
async function post(slug: string, body: string | Buffer, signature?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${cal.baseUrl}/api/webhooks/calcom/${slug}`, {
    method: 'POST',
    body,
    headers: {
      'content-type': 'application/json',
      ...(signature === undefined ? {} : { 'x-cal-signature-256': signature }),
    },
  });
  return { status: res.status, json: await res.json() };
}

const signed = (body: string, secret = SECRET) => signCalcomBody(secret, body);

describe('signature', () => {
  test('accepted: a signed delivery is applied and answered 200', async () => {
    const { leadId, booking } = await bookedLead();
    const d = await deliver('BOOKING_CREATED', booking.uid);
    assert.equal(d.status, 200, d.responseText);
    assert.deepEqual(d.json, { ok: true });
    assert.deepEqual(await events(leadId, 'booking.webhook'), [
      { type: 'booking.webhook', data: { trigger: 'BOOKING_CREATED', bookingUid: booking.uid } },
    ]);
    const { rows } = await cal.app.db.pool.query(
      'SELECT provider, lead_id, type FROM webhook_receipts WHERE workspace_id = $1 AND dedupe_key LIKE $2',
      [cal.ws.workspaceId, `BOOKING_CREATED:${booking.uid}:%`],
    );
    assert.deepEqual(rows, [{ provider: 'calcom', lead_id: leadId, type: 'BOOKING_CREATED' }]);
  });

  test(
    'rejected with 401 and nothing written: wrong secret, no secret, ' +
      'tampered, re-serialised, missing or malformed header',
    async () => {
      const { leadId, booking } = await bookedLead();
      await cal.client.cancelBooking(cal.sim.apiKey, booking.uid, 'Cannot make it');
      const before = await snapshot();
      const refused = { ok: false, error: 'Invalid webhook signature.' };

      // Real deliveries from Cal.com configured with another secret, and with none at all.
      pointSimulatorAt(cal.ws.slug, OTHER_SECRET);
      const wrong = await deliver('BOOKING_CANCELLED', booking.uid);
      pointSimulatorAt(cal.ws.slug);
      const none = await deliver('BOOKING_CANCELLED', booking.uid);
      pointSimulatorAt(cal.ws.slug, SECRET);
      assert.equal(none.signature, 'no-secret-provided');
      for (const d of [wrong, none]) {
        assert.equal(d.status, 401);
        assert.deepEqual(d.json, refused);
      }

      const body = wrong.body;
      const tampered = body.replace('Cannot make it', 'Cannot make iT');
      assert.notEqual(tampered, body);
      const pretty = JSON.stringify(JSON.parse(body), null, 2);
      const cases: Array<[string, string, string | undefined]> = [
        ['tampered body', tampered, signed(body)],
        // Same JSON value, other bytes: proves the check runs over the raw body.
        ['re-serialised body', pretty, signed(body)],
        ['missing header', body, undefined],
        ['empty header', body, ''],
        ['sha256= prefix', body, `sha256=${signed(body)}`],
        ['truncated', body, signed(body).slice(0, 63)],
        ['not hex', body, 'z'.repeat(64)],
        ['other workspace secret', body, signed(body, OTHER_SECRET)],
      ];
      for (const [name, payload, signature] of cases) {
        const res = await post(cal.ws.slug, payload, signature);
        assert.equal(res.status, 401, name);
        assert.deepEqual(res.json, refused, name);
      }
      assert.deepEqual(await snapshot(), before);
      assert.equal((await leadRow(leadId)).status, 'booked');

      // The bytes themselves, correctly signed, are accepted: the cases above failed on the signature alone.
      const ok = await post(cal.ws.slug, pretty, signed(pretty));
      assert.equal(ok.status, 200);
      assert.equal((await leadRow(leadId)).status, 'needs_human');
    },
  );

  test('replayed: the same delivery again is a no-op, even after an operator moved the lead on', async () => {
    const { leadId, booking } = await bookedLead();
    await cal.client.cancelBooking(cal.sim.apiKey, booking.uid, 'Double-booked');
    const first = await deliver('BOOKING_CANCELLED', booking.uid);
    assert.deepEqual(first.json, { ok: true });
    assert.equal((await leadRow(leadId)).status, 'needs_human');

    // An operator resumes the lead; a replay must not send it back.
    await cal.app.db.pool.query(`UPDATE leads SET status = 'in_conversation' WHERE id = $1`, [leadId]);
    const before = await snapshot();
    const replay = await post(cal.ws.slug, first.body, first.signature);
    assert.equal(replay.status, 200);
    assert.deepEqual(replay.json, { ok: true, duplicate: true });
    // Cal.com sending the cancellation again (a second webhook, new createdAt) is the same event.
    const again = await deliver('BOOKING_CANCELLED', booking.uid);
    assert.deepEqual(again.json, { ok: true, duplicate: true });
    assert.deepEqual(await snapshot(), before);
    assert.equal((await events(leadId, 'booking.cancelled')).length, 1);
  });

  test('replayed concurrently: ten copies of a reschedule apply once', async () => {
    const { leadId, booking } = await bookedLead();
    const moved = await cal.client.rescheduleBooking(cal.sim.apiKey, booking.uid, nextSlot());
    assert.ok(moved.ok);
    pointSimulatorAt('no-such-workspace', SECRET); // only to capture a signed body
    const captured = await cal.sim.sendWebhook('BOOKING_RESCHEDULED', moved.booking.uid);
    pointSimulatorAt(cal.ws.slug, SECRET);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(cal.ws.slug, captured.body, captured.signature)),
    );
    assert.deepEqual(
      answers.map((a) => a.status),
      Array(10).fill(200),
    );
    assert.equal(answers.filter((a) => a.json.duplicate !== true).length, 1);
    assert.equal((await events(leadId, 'booking.rescheduled')).length, 1);
    assert.equal((await leadRow(leadId)).booking_uid, moved.booking.uid);
  });
});

describe('endpoint', () => {
  test('unknown slug, deleted workspace, no webhook secret → 404 and nothing written', async () => {
    const body = JSON.stringify({
      triggerEvent: 'BOOKING_CREATED',
      createdAt: new Date().toISOString(),
      payload: { uid: 'x' },
    });
    const noSecret = await cal.app.createWorkspace('whatsapp', scheduling());
    const noSettings = await cal.app.createWorkspace('whatsapp');
    const deleted = await cal.app.createWorkspace('whatsapp', scheduling(SECRET));
    await cal.app.workspaces.delete(deleted.slug);
    const before = await snapshot();
    for (const slug of ['no-such-workspace', 'NOT_A_SLUG', noSecret.slug, noSettings.slug, deleted.slug]) {
      const res = await post(slug, body, signed(body));
      assert.equal(res.status, 404, slug);
      assert.deepEqual(res.json, { ok: false, error: 'Workspace not found.' });
    }
    assert.deepEqual(await snapshot(), before);
  });

  test('signed but unusable bodies: 400, nothing written', async () => {
    const before = await snapshot();
    const notJson = '{"triggerEvent":';
    const bad = await post(cal.ws.slug, notJson, signed(notJson));
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, { ok: false, error: 'Request body must be valid JSON.' });

    const noStart = JSON.stringify({
      triggerEvent: 'BOOKING_RESCHEDULED',
      createdAt: new Date().toISOString(),
      payload: { uid: 'new', rescheduleUid: 'old' },
    });
    const invalid = await post(cal.ws.slug, noStart, signed(noStart));
    assert.equal(invalid.status, 400);
    assert.equal(invalid.json.error, 'Validation failed.');
    assert.deepEqual(
      invalid.json.issues.map((i: { path: string[] }) => i.path),
      [['payload', 'startTime']],
    );
    assert.deepEqual(await snapshot(), before);
  });

  test('events without a booking (the Ping test) are answered 200 and not stored', async () => {
    const before = await snapshot();
    const ping = JSON.stringify({
      triggerEvent: 'PING',
      createdAt: new Date().toISOString(),
      payload: { type: 'Test', title: 'Test trigger event' },
    });
    const res = await post(cal.ws.slug, ping, signed(ping));
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { ok: true, ignored: 'unsupported event' });
    assert.deepEqual(await snapshot(), before);
  });

  test('bodies over 256 KiB → 413 naming that limit', async () => {
    const big = JSON.stringify({ triggerEvent: 'BOOKING_CREATED', payload: { description: 'x'.repeat(260 * 1024) } });
    const res = await post(cal.ws.slug, big, signed(big));
    assert.equal(res.status, 413);
    assert.deepEqual(res.json, {
      ok: false,
      error: 'Request body is too large.',
      message: 'The request body must be at most 256 KiB.',
    });
  });

  test('logs carry neither secrets nor personal data', () => {
    const logs = cal.app.logs.join('\n');
    const outcomes = cal.app.logs.map((l) => JSON.parse(l)).filter((l) => l.msg === 'calcom webhook');
    assert.ok(outcomes.length > 0);
    for (const line of outcomes) assert.match(line.reqId, /^[0-9a-f-]{36}$/, 'correlated with its request');
    for (const secretOrPersonal of [SECRET, OTHER_SECRET, ATTENDEE.email, 'Double-booked', 'make it', 'Ada Lovelace']) {
      assert.equal(logs.includes(secretOrPersonal), false, secretOrPersonal);
    }
  });
});

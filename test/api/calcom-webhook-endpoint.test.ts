// Cal.com webhooks through the real app over HTTP, the signature check and the endpoint (replays,
// unknown slugs, unusable or oversized bodies, logs): deliveries come from the Cal.com simulator,
// signed as Cal.com signs them, and the bookings are made with the real client. The booking
// changes they carry: calcom-webhook-bookings.test.ts. Dates are in
// 2050 so the simulator's "no bookings in the past" rule never interferes.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { signCalcomBody } from '../../src/scheduling/calcom/calcom-signature.ts';
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

/** Posts raw bytes, as a captured or hand-made delivery. */
async function post(slug: string, body: string | Buffer, signature?: string): Promise<{ status: number; json: any }> {
  const res = await fetch(`${baseUrl}/api/webhooks/calcom/${slug}`, {
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
    const { rows } = await app.db.pool.query(
      'SELECT provider, lead_id, type FROM webhook_receipts WHERE workspace_id = $1 AND dedupe_key LIKE $2',
      [ws.workspaceId, `BOOKING_CREATED:${booking.uid}:%`],
    );
    assert.deepEqual(rows, [{ provider: 'calcom', lead_id: leadId, type: 'BOOKING_CREATED' }]);
  });

  test('rejected with 401 and nothing written: wrong secret, no secret, tampered, re-serialised, missing or malformed header', async () => {
    const { leadId, booking } = await bookedLead();
    await client.cancelBooking(sim.apiKey, booking.uid, 'Cannot make it');
    const before = await snapshot();
    const refused = { ok: false, error: 'Invalid webhook signature.' };

    // Real deliveries from Cal.com configured with another secret, and with none at all.
    pointSimulatorAt(ws.slug, OTHER_SECRET);
    const wrong = await deliver('BOOKING_CANCELLED', booking.uid);
    pointSimulatorAt(ws.slug);
    const none = await deliver('BOOKING_CANCELLED', booking.uid);
    pointSimulatorAt(ws.slug, SECRET);
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
      const res = await post(ws.slug, payload, signature);
      assert.equal(res.status, 401, name);
      assert.deepEqual(res.json, refused, name);
    }
    assert.deepEqual(await snapshot(), before);
    assert.equal((await leadRow(leadId)).status, 'booked');

    // The bytes themselves, correctly signed, are accepted: the cases above failed on the signature alone.
    const ok = await post(ws.slug, pretty, signed(pretty));
    assert.equal(ok.status, 200);
    assert.equal((await leadRow(leadId)).status, 'needs_human');
  });

  test('replayed: the same delivery again is a no-op, even after an operator moved the lead on', async () => {
    const { leadId, booking } = await bookedLead();
    await client.cancelBooking(sim.apiKey, booking.uid, 'Double-booked');
    const first = await deliver('BOOKING_CANCELLED', booking.uid);
    assert.deepEqual(first.json, { ok: true });
    assert.equal((await leadRow(leadId)).status, 'needs_human');

    // An operator resumes the lead; a replay must not send it back.
    await app.db.pool.query(`UPDATE leads SET status = 'in_conversation' WHERE id = $1`, [leadId]);
    const before = await snapshot();
    const replay = await post(ws.slug, first.body, first.signature);
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
    const moved = await client.rescheduleBooking(sim.apiKey, booking.uid, nextSlot());
    assert.ok(moved.ok);
    pointSimulatorAt('no-such-workspace', SECRET); // only to capture a signed body
    const captured = await sim.sendWebhook('BOOKING_RESCHEDULED', moved.booking.uid);
    pointSimulatorAt(ws.slug, SECRET);
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => post(ws.slug, captured.body, captured.signature)),
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
    const noSecret = await app.createWorkspace('whatsapp', scheduling());
    const noSettings = await app.createWorkspace('whatsapp');
    const deleted = await app.createWorkspace('whatsapp', scheduling(SECRET));
    await app.workspaces.delete(deleted.slug);
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
    const bad = await post(ws.slug, notJson, signed(notJson));
    assert.equal(bad.status, 400);
    assert.deepEqual(bad.json, { ok: false, error: 'Request body must be valid JSON.' });

    const noStart = JSON.stringify({
      triggerEvent: 'BOOKING_RESCHEDULED',
      createdAt: new Date().toISOString(),
      payload: { uid: 'new', rescheduleUid: 'old' },
    });
    const invalid = await post(ws.slug, noStart, signed(noStart));
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
    const res = await post(ws.slug, ping, signed(ping));
    assert.equal(res.status, 200);
    assert.deepEqual(res.json, { ok: true, ignored: 'unsupported event' });
    assert.deepEqual(await snapshot(), before);
  });

  test('bodies over 256 KiB → 413 naming that limit', async () => {
    const big = JSON.stringify({ triggerEvent: 'BOOKING_CREATED', payload: { description: 'x'.repeat(260 * 1024) } });
    const res = await post(ws.slug, big, signed(big));
    assert.equal(res.status, 413);
    assert.deepEqual(res.json, {
      ok: false,
      error: 'Request body is too large.',
      message: 'The request body must be at most 256 KiB.',
    });
  });

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

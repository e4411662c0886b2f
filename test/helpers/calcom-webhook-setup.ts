// The setup shared by the Cal.com webhook tests: the real app listening over HTTP, the Cal.com
// simulator delivering to it, the real client making bookings, and a workspace that checks
// signatures. Each test file calls setUpCalcomWebhookApp() once and gets its own app and database.
import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import {
  startCalcomSimulator,
  type CalcomSimulator,
  type WebhookDelivery,
  type WebhookTrigger,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import { uniquePhone } from './http.ts';
import { startTestApp, type TestApp } from './test-app.ts';

export const EVENT_TYPE_ID = 1001; // the simulator's default: Mon–Fri 09:00–17:00 Europe/Berlin, 30 min
export const SECRET = 'whsec-test-0123456789abcdef';
export const OTHER_SECRET = 'whsec-other-fedcba9876543210';
export const ATTENDEE = { name: 'Ada Lovelace', email: 'ada.webhook@example.com', timeZone: 'Europe/London' };

export const scheduling = (webhookSecret?: string) => ({
  scheduling: {
    provider: 'calcom' as const,
    apiKey: 'cal_test_simulator_key',
    eventTypeId: EVENT_TYPE_ID,
    ...(webhookSecret ? { webhookSecret } : {}),
  },
});

/** Registers the file's before/after hooks; sim, app, client, baseUrl and ws are set once `before` has run. */
export function setUpCalcomWebhookApp() {
  const s = {} as {
    sim: CalcomSimulator;
    app: TestApp;
    client: CalcomClient;
    baseUrl: string;
    ws: { workspaceId: string; slug: string };
  };

  before(async () => {
    s.sim = await startCalcomSimulator();
    s.app = await startTestApp();
    await s.app.http.listen({ port: 0, host: '127.0.0.1' });
    s.baseUrl = `http://127.0.0.1:${(s.app.http.server.address() as AddressInfo).port}`;
    s.client = new CalcomClient({ baseUrl: s.sim.url, sleep: async () => {} });
    s.ws = await s.app.createWorkspace('whatsapp', scheduling(SECRET));
    pointSimulatorAt(s.ws.slug, SECRET);
  });
  after(async () => {
    await s.app.close();
    await s.sim.close();
  });

  function pointSimulatorAt(slug: string, secret?: string): void {
    s.sim.setWebhook({ subscriberUrl: `${s.baseUrl}/api/webhooks/calcom/${slug}`, ...(secret ? { secret } : {}) });
  }

  // Each booking takes its own half-hour: the simulator has one host, so times must not collide.
  let slotIndex = 0;
  function nextSlot(): string {
    const day = Math.floor(slotIndex / 16);
    // 09:00 Berlin, Monday.
    const start = Date.parse('2050-09-05T07:00:00Z') + day * 86_400_000 + (slotIndex % 16) * 1_800_000;
    slotIndex += 1;
    assert.ok(day < 5, 'out of weekday slots');
    return new Date(start).toISOString();
  }

  async function insertLead(workspaceId: string, status = 'new'): Promise<string> {
    const phone = uniquePhone();
    const { rows } = await s.app.db.pool.query(
      `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, status)
       VALUES ($1, 'Ada Lovelace', $2, $3, now(), $4) RETURNING id`,
      [workspaceId, phone, `+${phone.replace(/\D/g, '')}`, status],
    );
    return rows[0].id;
  }

  /** A lead with a Cal.com booking, recorded as the agent records it (uid, start, metadata.leadId). */
  async function bookedLead(opts: { status?: string; workspaceId?: string; recorded?: boolean } = {}) {
    const leadId = await insertLead(opts.workspaceId ?? s.ws.workspaceId, opts.status ?? 'booked');
    const r = await s.client.createBooking({
      apiKey: s.sim.apiKey,
      eventTypeId: EVENT_TYPE_ID,
      start: nextSlot(),
      attendee: ATTENDEE,
      metadata: { leadId },
    });
    assert.ok(r.ok, JSON.stringify(r));
    if (opts.recorded !== false) {
      await s.app.db.pool.query('UPDATE leads SET booking_uid = $2, booking_start = $3 WHERE id = $1', [
        leadId,
        r.booking.uid,
        r.booking.start,
      ]);
    }
    return { leadId, booking: r.booking };
  }

  async function leadRow(id: string) {
    const { rows } = await s.app.db.pool.query(
      'SELECT status, booking_uid, booking_start, updated_at FROM leads WHERE id = $1',
      [id],
    );
    return rows[0];
  }

  async function events(leadId: string, type?: string) {
    const { rows } = await s.app.db.pool.query(
      'SELECT type, data FROM lead_events WHERE lead_id = $1 AND ($2::text IS NULL OR type = $2) ORDER BY id',
      [leadId, type ?? null],
    );
    return rows;
  }

  /** Everything a delivery could write: leads, their timeline and the receipts. */
  async function snapshot() {
    const { rows } = await s.app.db.pool.query(
      `SELECT (SELECT json_agg(l ORDER BY l.id) FROM leads l) AS leads,
              (SELECT count(*)::int FROM lead_events) AS events,
              (SELECT count(*)::int FROM webhook_receipts) AS receipts`,
    );
    return rows[0];
  }

  async function deliver(trigger: WebhookTrigger, uid: string): Promise<WebhookDelivery & { json: any }> {
    const d = await s.sim.sendWebhook(trigger, uid);
    assert.equal(d.error, undefined);
    return { ...d, json: JSON.parse(d.responseText ?? 'null') };
  }

  return Object.assign(s, { pointSimulatorAt, nextSlot, bookedLead, leadRow, events, snapshot, deliver });
}

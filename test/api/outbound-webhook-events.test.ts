import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CALCOM_SIGNATURE_HEADER, signCalcomBody } from '../../src/scheduling/calcom/calcom-signature.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { isEndpointError } from '../../src/webhooks/webhook-endpoint-service.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, postLead } from '../helpers/http.ts';
import { outboundWebhookSetup } from '../helpers/outbound-webhook-setup.ts';
import type { TestApp } from '../helpers/test-app.ts';
import { drainWebhooks } from '../helpers/webhook-receiver.ts';

// Outbound webhooks end to end, every event type: sandbox leads run through the real service with
// the simulated providers; their events are delivered to a receiver on 127.0.0.1 by the real
// delivery service, run here job by job (drainWebhooks). Retries, secrets, endpoint health, safety
// and metrics are in test/api/outbound-webhook-delivery.test.ts.

/** The turns of the sandbox leads, run here job by job (settleLeads). */
function turnWorker(app: TestApp): TurnWorker {
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: () => new Date(),
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
  });
  return new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 2 });
}

let worker: TurnWorker;
const s = outboundWebhookSetup(
  () => new Date(),
  (app) => {
    worker = turnWorker(app);
  },
);
const { phone, workspaceWithEndpoint, ofLead, verified, quietLead } = s;

/** Relays, runs turn jobs and the sandbox's simulators until nothing is left (bounded). */
async function settleLeads(): Promise<void> {
  for (let round = 0; round < 100; round++) {
    await s.app.relay.drain();
    const ran = await worker.drainOnce({ ignoreBackoff: true });
    await s.app.sandbox.settled();
    const { rows } = await s.app.db.pool.query(
      `SELECT count(*)::int AS n FROM outbox WHERE queue <> 'webhook-delivery'`,
    );
    if (ran === 0 && rows[0].n === 0) return;
  }
  throw new Error('the sandbox did not settle within 100 rounds');
}

describe('every event type, end to end on sandbox leads', () => {
  it(
    'WhatsApp: lead.created, message.sent, message.received, ' +
      'lead.status_changed up to booked — signed, in order, livemode false',
    async () => {
      const ws = await workspaceWithEndpoint('whatsapp');
      const created = await postLead(s.app.http, ws.sandboxKey, {
        name: 'Ada Hook',
        phone: phone('0001'),
        email: 'ada@example.com',
        consent: true,
      });
      assert.equal(created.status, 201);
      const leadId = created.body.leadId;
      await settleLeads();
      await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
      const got = await getLead(s.app.http, ws.sandboxKey, leadId);
      assert.equal(got.body.lead.status, 'booked');
      const events = ofLead(leadId);
      const types = events.map((e) => e.json.type);
      assert.equal(types[0], 'lead.created');
      for (const t of ['message.sent', 'message.received', 'lead.status_changed'])
        assert.ok(types.includes(t), types.join(', '));
      for (const e of events) {
        assert.ok(verified(e, ws.secret), 'signature verifies');
        assert.equal(e.json.livemode, false);
        assert.match(String(e.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
        // The payload's lead is the GET body's lead, field for field.
        assert.deepEqual(Object.keys(e.json.data.lead), Object.keys(got.body.lead));
      }
      // Each event once, in the order the changes happened.
      assert.equal(new Set(events.map((e) => e.headers['webhook-id'])).size, events.length);
      const at = events.map((e) => Date.parse(e.json.timestamp));
      assert.deepEqual(
        at,
        [...at].sort((a, b) => a - b),
      );
      assert.equal(events[0]!.json.data.lead.status, 'new');
      const changes = events
        .filter((e) => e.json.type === 'lead.status_changed')
        .map((e) => `${e.json.data.previousStatus}→${e.json.data.status}`);
      assert.deepEqual(changes, ['new→in_conversation', 'in_conversation→booked']);
      // The first message sent, then the status change it caused.
      assert.ok(types.indexOf('message.sent') < types.indexOf('lead.status_changed'), types.join(', '));
      const booked = events.find((e) => e.json.type === 'lead.status_changed' && e.json.data.status === 'booked')!;
      assert.equal(booked.json.data.bookingUid, got.body.lead.bookingUid);
      assert.equal(booked.json.data.bookingStart, got.body.lead.bookingStart);
      assert.equal(booked.json.data.lead.bookingUid, got.body.lead.bookingUid);
      const sent = events.find((e) => e.json.type === 'message.sent')!;
      assert.equal(sent.json.data.message.direction, 'outbound');
      const inbound = events.find((e) => e.json.type === 'message.received')!;
      assert.equal(inbound.json.data.message.direction, 'inbound');
      assert.match(inbound.json.data.message.text, /\w/);
    },
  );

  it('voice: call.ended carries the voiceCall as GET returns it', async () => {
    const ws = await workspaceWithEndpoint('voice');
    const created = await postLead(s.app.http, ws.sandboxKey, {
      name: 'Ada Hook',
      phone: phone('0001'),
      consent: true,
    });
    assert.equal(created.status, 201);
    await settleLeads();
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    const got = await getLead(s.app.http, ws.sandboxKey, created.body.leadId);
    const events = ofLead(created.body.leadId);
    const ended = events.find((e) => e.json.type === 'call.ended');
    assert.ok(ended, events.map((e) => e.json.type).join(', '));
    assert.equal(ended.json.livemode, false);
    assert.equal(ended.json.data.voiceCall.providerCallId, got.body.voiceCall.providerCallId);
    assert.equal(ended.json.data.voiceCall.status, 'ended');
    assert.equal(ended.json.data.voiceCall.endedReason, got.body.voiceCall.endedReason);
    assert.deepEqual(ended.json.data.voiceCall, got.body.voiceCall);
    assert.equal(events[0]!.json.type, 'lead.created');
    assert.ok(events.some((e) => e.json.type === 'lead.status_changed' && e.json.data.status === 'booked'));
  });

  it('Cal.com reschedule, cancel, reject: lead.booking_changed (and the status change a cancel causes)', async () => {
    const secret = 'calcom-webhook-secret-for-outbound-test';
    const ws = await s.app.createWorkspace('whatsapp', {
      agent: SOLAR_AGENT,
      scheduling: { provider: 'calcom', apiKey: 'cal_live_unused', eventTypeId: 7, webhookSecret: secret },
    });
    const added = await s.endpoints.add(ws.slug, s.receiver.url, ['lead.booking_changed', 'lead.status_changed']);
    if (isEndpointError(added)) throw new Error('add failed');
    // Booked as the agent's booking tool books (the conversation itself is covered above).
    const leadId = await quietLead(ws);
    const moved = await transitionLead(s.app.db.pool, {
      leadId,
      to: 'booked',
      actor: 'agent',
      event: { type: 'booking.created' },
      set: { bookingUid: 'first-uid-1', bookingStart: new Date('2050-09-05T08:00:00Z') },
    });
    assert.equal(moved.ok, true);
    const booked = await getLead(s.app.http, ws.sandboxKey, leadId);
    const created = { body: { leadId } };
    const calcom = async (triggerEvent: string, payload: Record<string, unknown>) => {
      const body = JSON.stringify({ triggerEvent, createdAt: new Date().toISOString(), payload });
      const res = await s.app.http.inject({
        method: 'POST',
        url: `/api/webhooks/calcom/${ws.slug}`,
        headers: { 'content-type': 'application/json', [CALCOM_SIGNATURE_HEADER]: signCalcomBody(secret, body) },
        payload: body,
      });
      assert.ok(res.statusCode < 300, res.body);
    };
    await calcom('BOOKING_RESCHEDULED', {
      uid: 'rescheduled-uid-1',
      startTime: '2050-09-06T08:00:00Z',
      rescheduleUid: booked.body.lead.bookingUid,
    });
    await calcom('BOOKING_CANCELLED', { uid: 'rescheduled-uid-1', cancellationReason: 'cannot make it' });
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    const events = ofLead(created.body.leadId).map((e) => e.json);
    const changes = events.filter((e) => e.type === 'lead.booking_changed').map((e) => e.data);
    assert.deepEqual(
      changes.map((c) => c.change),
      ['rescheduled', 'cancelled'],
    );
    assert.equal(changes[0].bookingUid, 'rescheduled-uid-1');
    assert.equal(changes[0].bookingStart, '2050-09-06T08:00:00.000Z');
    assert.equal(changes[0].previousBookingUid, booked.body.lead.bookingUid);
    assert.equal(changes[1].reason, 'cannot make it');
    const last = events.at(-1)!;
    assert.equal(last.type, 'lead.status_changed');
    assert.equal(`${last.data.previousStatus}→${last.data.status}`, 'booked→needs_human');
    assert.ok(events.every((e) => e.livemode === false));

    // A booking the host rejects (it awaited confirmation) goes out as a cancellation, saying so.
    const rejectedLead = await quietLead(ws);
    const held = await transitionLead(s.app.db.pool, {
      leadId: rejectedLead,
      to: 'booked',
      actor: 'agent',
      event: { type: 'booking.created' },
      set: { bookingUid: 'pending-uid-1', bookingStart: new Date('2050-09-07T08:00:00Z') },
    });
    assert.equal(held.ok, true);
    await calcom('BOOKING_REJECTED', { uid: 'pending-uid-1', rejectionReason: 'no capacity' });
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    const rejectedEvents = ofLead(rejectedLead).map((e) => e.json);
    const rejection = rejectedEvents.find((e) => e.type === 'lead.booking_changed');
    assert.deepEqual(
      { change: rejection?.data.change, bookingUid: rejection?.data.bookingUid, reason: rejection?.data.reason },
      { change: 'cancelled', bookingUid: 'pending-uid-1', reason: 'Rejected by the host: no capacity' },
    );
    const lastOfRejected = rejectedEvents.at(-1)!;
    assert.equal(lastOfRejected.type, 'lead.status_changed');
    assert.equal(`${lastOfRejected.data.previousStatus}→${lastOfRejected.data.status}`, 'booked→needs_human');
  });

  it(
    'leads POSTed together to workspaces with and without an endpoint: each ' +
      'lead.created once, only where an endpoint listens (migrations/027)',
    async () => {
      const listened = await workspaceWithEndpoint('whatsapp');
      const quiet = await s.app.createWorkspace('whatsapp', { agent: SOLAR_AGENT });
      // Concurrent POSTs share the statement that inserts their leads and timeline entries.
      const answers = await Promise.all(
        [0, 1, 2, 3].map((i) =>
          postLead(s.app.http, i % 2 === 0 ? listened.sandboxKey : quiet.sandboxKey, {
            name: `Batch ${i}`,
            phone: phone('0100'),
            email: `b${i}@example.com`,
            consent: true,
          }),
        ),
      );
      assert.deepEqual(
        answers.map((a) => a.status),
        [201, 201, 201, 201],
      );
      const ids = answers.map((a) => a.body.leadId as string);
      const { rows } = await s.app.db.pool.query(
        `SELECT lead_id, type, workspace_id FROM webhook_events WHERE lead_id = ANY($1::uuid[]) ORDER BY id`,
        [ids],
      );
      assert.deepEqual(
        rows.map((r) => `${r.lead_id} ${r.type}`).sort(),
        [`${ids[0]} lead.created`, `${ids[2]} lead.created`].sort(),
      );
      assert.ok(rows.every((r) => r.workspace_id === listened.workspaceId));
      const { rows: none } = await s.app.db.pool.query(
        `SELECT count(*)::int AS n FROM webhook_events WHERE workspace_id = $1`,
        [quiet.workspaceId],
      );
      assert.equal(none[0].n, 0, 'a workspace without an endpoint gets no events');
    },
  );

  it('an endpoint receives only the event types it asked for', async () => {
    const ws = await workspaceWithEndpoint('whatsapp', s.receiver.url, ['lead.status_changed']);
    const created = await postLead(s.app.http, ws.sandboxKey, {
      name: 'Ada Hook',
      phone: phone('0002'),
      consent: true,
    });
    await settleLeads();
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    const types = new Set(ofLead(created.body.leadId).map((e) => e.json.type));
    assert.deepEqual([...types], ['lead.status_changed']);
  });
});

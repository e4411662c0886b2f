import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';
import type { VapiFailureMode } from '../../src/simulators/vapi/vapi-simulator.ts';
import { statusUpdateMessage } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { recordLeadCreated } from '../../src/leads/lead-queries.ts';
import { VapiClient } from '../../src/voice/vapi/vapi-client.ts';
import { vapiCallOptions } from '../../src/voice/voice-channel.ts';
import { WebhookEndpointService, isEndpointError } from '../../src/webhooks/webhook-endpoint-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { insertLead } from '../helpers/agent-harness.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { TEST_ENCRYPTION_KEY } from '../helpers/test-app.ts';
import { deliver, eventTypes, VAPI } from '../helpers/voice-harness.ts';
import { voiceWorkspaceSetup } from '../helpers/voice-workspace-setup.ts';

// A voice lead's `lead.created` webhook is emitted only for a lead that is kept (the call recorded,
// the do-not-contact close, the crash window's reconciliation), never for the reservation a refused
// call deletes (docs/OUTBOUND-WEBHOOKS.md). The relay is not started: every webhook committed stays
// as rows (webhook_events, webhook_deliveries, the outbox's `webhook-delivery` rows), which is what
// these tests read.

const s = voiceWorkspaceSetup();
const db = () => s.h.app.db.pool;

// Once, inside the describe (the setup's own hook has run by then).
let ready: Promise<void> | null = null;
const setUp = () => (ready ??= addEndpoint());
async function addEndpoint(): Promise<void> {
  const endpoints = new WebhookEndpointService(
    db(),
    new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)),
    () => new Date(),
    { allowPrivateNetworks: true },
  );
  const added = await endpoints.add(s.ws.slug, 'http://127.0.0.1:9/hooks', []);
  if (isEndpointError(added)) throw new Error(JSON.stringify(added));
}

/** The workspace's `lead.created` webhook rows: events, their deliveries, the outbox rows that carry them. */
async function createdWebhooks(): Promise<{ events: number; deliveries: number; outbox: number }> {
  const { rows } = await db().query(
    `SELECT (SELECT count(*)::int FROM webhook_events WHERE workspace_id = $1 AND type = 'lead.created') AS events,
            (SELECT count(*)::int FROM webhook_deliveries d JOIN webhook_events e ON e.id = d.event_id
              WHERE e.workspace_id = $1 AND e.type = 'lead.created') AS deliveries,
            (SELECT count(*)::int FROM outbox WHERE queue = 'webhook-delivery') AS outbox`,
    [s.ws.workspaceId],
  );
  return rows[0];
}

/** The lead's `lead.created` webhook events: when, the lead's status in it, how many deliveries. */
async function createdEventsOf(leadId: string) {
  const { rows } = await db().query(
    `SELECT e.at = l.created_at AS at_creation, e.lead->>'status' AS status, e.detail AS data, l.api_key_id,
            (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = e.id) AS deliveries
       FROM webhook_events e JOIN leads l ON l.id = e.lead_id
      WHERE e.lead_id = $1 AND e.type = 'lead.created'`,
    [leadId],
  );
  return rows;
}

/** The lead's timeline entry `lead.created`: dated when the lead was inserted. */
async function createdEntryAtCreation(leadId: string): Promise<boolean[]> {
  const { rows } = await db().query(
    `SELECT e.at = l.created_at AS ok FROM lead_events e JOIN leads l ON l.id = e.lead_id
      WHERE e.lead_id = $1 AND e.type = 'lead.created'`,
    [leadId],
  );
  return rows.map((r) => r.ok);
}

describe('voice: lead.created only for a lead that is kept', () => {
  before(setUp);
  const refusals: VapiFailureMode[] = ['bad-key', 'server-error', 'hang-up'];
  for (const mode of refusals) {
    test(`a call refused (${mode}) commits no lead.created webhook: no event, delivery or outbox row`, async () => {
      const before = await createdWebhooks();
      s.h.vapi.setFailure(mode);
      try {
        const res = await postLead(s.h.app.http, s.ws.apiKey, validLead());
        assert.equal(res.status, 502, JSON.stringify(res.body));
      } finally {
        s.h.vapi.setFailure('none');
      }
      // The outbox row would outlive the deleted lead (no cascade): the CRM would get it.
      assert.deepEqual(await createdWebhooks(), before);
    });
  }

  test('an accepted call: one lead.created (the lead still new, at its creation), before call.dispatched', async () => {
    const before = await createdWebhooks();
    const res = await postLead(s.h.app.http, s.ws.apiKey, validLead());
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const leadId = res.body.leadId;
    const created = await createdEventsOf(leadId);
    assert.ok(created[0]?.api_key_id, 'the lead records the key that submitted it');
    assert.deepEqual(created, [
      {
        at_creation: true,
        status: 'new',
        data: { channel: 'voice', apiKeyId: created[0]?.api_key_id },
        api_key_id: created[0]?.api_key_id,
        deliveries: 1,
      },
    ]);
    assert.deepEqual(await createdWebhooks(), {
      events: before.events + 1,
      deliveries: before.deliveries + 1,
      outbox: before.outbox + 1,
    });
    assert.deepEqual(await eventTypes(s.h, leadId), ['lead.created', 'call.dispatched']);
    assert.deepEqual(await createdEntryAtCreation(leadId), [true]);
  });

  test('a number on the do-not-contact list: 201 without a call, one lead.created, then the close', async () => {
    const raw = uniquePhone();
    const listed = `INSERT INTO suppressed_numbers (workspace_id, phone_e164, source) VALUES ($1, $2, 'operator')`;
    await db().query(listed, [s.ws.workspaceId, `+${raw.replace(/\D/g, '')}`]);
    const res = await postLead(s.h.app.http, s.ws.apiKey, validLead({ phone: raw }));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    assert.equal(res.body.callQueued, false);
    const leadId = res.body.leadId;
    const created = await createdEventsOf(leadId);
    assert.equal(created.length, 1);
    assert.equal(created[0].status, 'new');
    assert.equal(created[0].deliveries, 1);
    assert.deepEqual((await eventTypes(s.h, leadId)).slice(0, 2), ['lead.created', 'contact.suppressed']);
    assert.deepEqual(await createdEntryAtCreation(leadId), [true]);
  });

  test("the crash window: Vapi's first messages reconcile the call; one lead.created first", async () => {
    // What a crash leaves: the reservation (new, no session, no lead.created) and a call Vapi accepted.
    const leadId = await insertLead(db(), s.ws.workspaceId, { status: 'new' });
    const workspace = (await s.h.app.workspaces.findBySlug(s.ws.slug))!;
    const client = new VapiClient({ baseUrl: s.h.vapi.url, timeoutMs: 2000 });
    const placed = await client.placeCall({
      ...VAPI,
      customer: { number: '+4930123456', name: 'Ada Lovelace' },
      variableValues: { leadName: 'Ada Lovelace' },
      metadata: { leadId, workspaceId: s.ws.workspaceId },
      ...vapiCallOptions(s.h.baseUrl, workspace, VAPI),
    });
    assert.ok(placed.ok);
    assert.deepEqual(await createdEventsOf(leadId), []);
    const call = s.h.vapi.calls.find((c) => c.call.id === placed.providerCallId)!.call;
    for (const [i, status] of ['queued', 'ringing'].entries()) {
      const res = await deliver(s.h, s.ws.slug, statusUpdateMessage(call, status, s.at() + i), s.secret());
      assert.equal(res.status, 200, JSON.stringify(res.body));
    }
    const created = await createdEventsOf(leadId);
    assert.equal(created.length, 1);
    assert.equal(created[0].status, 'new');
    assert.equal(created[0].at_creation, true);
    assert.deepEqual((await eventTypes(s.h, leadId)).slice(0, 2), ['lead.created', 'call.reconciled']);
  });

  test('Vapi rings before the submission recorded the call: 201, one lead.created', async () => {
    s.h.vapi.setAutoPlay({ persona: 'books', ringBeforeAnswer: true });
    let leadId: string;
    try {
      const res = await postLead(s.h.app.http, s.ws.apiKey, validLead({ email: 'ada@example.com' }));
      assert.equal(res.status, 201, JSON.stringify(res.body));
      leadId = res.body.leadId;
      await s.h.vapi.settled();
    } finally {
      s.h.vapi.setAutoPlay(null);
    }
    const types = await eventTypes(s.h, leadId);
    assert.deepEqual(types.slice(0, 2), ['lead.created', 'call.reconciled'], types.join(', '));
    assert.ok(!types.includes('call.dispatched'));
    assert.equal((await createdEventsOf(leadId)).length, 1);
  });

  test("a sandbox lead's lead.created says livemode false, as newLead's createdEvent does", async () => {
    const { sandboxKey } = s.ws as unknown as { sandboxKey: string };
    const res = await postLead(s.h.app.http, sandboxKey, validLead());
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const created = await createdEventsOf(res.body.leadId);
    assert.equal(created.length, 1);
    assert.deepEqual(created[0].data, { channel: 'voice', apiKeyId: created[0].api_key_id, livemode: false });
  });

  test('recordLeadCreated: the data from the row (a source other than the API), written once', async () => {
    const leadId = await insertLead(db(), s.ws.workspaceId, { status: 'new' });
    await db().query(`UPDATE leads SET source = 'meta' WHERE id = $1`, [leadId]);
    await recordLeadCreated(db(), leadId);
    await recordLeadCreated(db(), leadId);
    const { rows } = await db().query(`SELECT type, data FROM lead_events WHERE lead_id = $1`, [leadId]);
    assert.deepEqual(rows, [{ type: 'lead.created', data: { channel: 'voice', apiKeyId: null, source: 'meta' } }]);
  });
});

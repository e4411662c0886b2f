import assert from 'node:assert/strict';
import { it } from 'node:test';
import { outboundWebhookSetup } from '../helpers/outbound-webhook-setup.ts';
import { drainWebhooks } from '../helpers/webhook-receiver.ts';

// A webhook-delivery job that starts before its delivery is due by the worker's clock: a new
// delivery's next_attempt_at is the database's clock, a retry's the scheduling process's, so a
// worker whose clock is behind sees it early. The job must leave a job for the delivery behind,
// never end with the delivery pending and nothing to send it (which also holds back the lead's
// later events to that endpoint). In a file of its own: the job it leaves runs seconds later.

let offsetMs = 0;
const s = outboundWebhookSetup(() => new Date(Date.now() + offsetMs));

it('a job early by this clock leaves a job for the delivery, due when the delivery is', async () => {
  const ws = await s.workspaceWithEndpoint('whatsapp');
  offsetMs = -2000;
  const leadId = await s.quietLead(ws);
  const results = await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
  assert.deepEqual(results, ['early']);
  assert.equal(s.ofLead(leadId).length, 0, 'not sent before it is due');
  const { rows } = await s.app.db.pool.query(
    `SELECT j.data->>'deliveryId' AS delivery, j.start_after > now() AS later
       FROM pgboss.job j WHERE j.name = 'webhook-delivery' AND j.state = 'created'`,
  );
  const { rows: pending } = await s.app.db.pool.query(
    `SELECT id::text FROM webhook_deliveries WHERE lead_id = $1 AND status = 'pending'`,
    [leadId],
  );
  assert.deepEqual(
    rows.map((r) => [r.delivery, r.later]),
    pending.map((p) => [p.id, true]),
  );
});

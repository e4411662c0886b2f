import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { recordAttempt, scheduleStep } from '../../src/contact-plan/contact-plan-queries.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { getLead } from '../helpers/http.ts';
import { outboundWebhookSetup } from '../helpers/outbound-webhook-setup.ts';
import { drainWebhooks } from '../helpers/webhook-receiver.ts';

// The contact plan's outbound webhooks (docs/OUTBOUND-WEBHOOKS.md; issue 36): every attempt is a
// `contact.attempted` (channel, attempt number, kind, outcome) and the end of the plan a
// `contact.plan_ended` (why, how many attempts, the attempt it cancelled). The database captures
// them from the timeline (migration 045); here they are delivered, signed, by the real delivery
// service to a receiver on 127.0.0.1, with the shapes the document gives.

const s = outboundWebhookSetup(() => new Date());

describe('contact plan webhooks', () => {
  it('an endpoint subscribed to contact.attempted and contact.plan_ended receives both, signed, in order', async () => {
    const ws = await s.workspaceWithEndpoint('whatsapp', s.receiver.url, ['contact.attempted', 'contact.plan_ended']);
    const leadId = await s.quietLead(ws);
    const first = await recordAttempt(s.app.db.pool, leadId, {
      channel: 'whatsapp',
      kind: 'first_contact',
      outcome: 'sent',
      // A channel's own detail on the timeline entry is not part of the webhook.
      data: { providerMessageId: 'SM-internal' },
    });
    const second = await recordAttempt(s.app.db.pool, leadId, {
      channel: 'whatsapp',
      kind: 'template',
      outcome: 'sent',
    });
    assert.deepEqual([first, second], [1, 2]);
    const nextAt = new Date('2050-01-02T10:00:00Z');
    await scheduleStep(s.app.db.pool, leadId, { kind: 'nudge', at: nextAt, reason: 'no reply' });
    // The lead books: the status change ends the plan and cancels the pending nudge (migration 045).
    const moved = await transitionLead(s.app.db.pool, {
      leadId,
      to: 'booked',
      actor: 'agent',
      event: { type: 'booking.created' },
    });
    assert.equal(moved.ok, true);
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });

    const events = s.ofLead(leadId);
    assert.deepEqual(
      events.map((e) => e.json.type),
      ['contact.attempted', 'contact.attempted', 'contact.plan_ended'],
      'only the subscribed types (no lead.status_changed), in the order they happened',
    );
    const got = await getLead(s.app.http, ws.sandboxKey, leadId);
    for (const e of events) {
      assert.ok(s.verified(e, ws.secret), 'signature verifies');
      assert.match(String(e.headers['webhook-id']), /^msg_[0-9a-f]{32}$/);
      assert.equal(e.json.livemode, false);
      assert.deepEqual(Object.keys(e.json.data.lead), Object.keys(got.body.lead));
      assert.equal(e.json.data.lead.id, leadId);
    }
    const { lead: _a1, ...attempt1 } = events[0]!.json.data;
    const { lead: _a2, ...attempt2 } = events[1]!.json.data;
    const { lead: _e, ...ended } = events[2]!.json.data;
    assert.deepEqual(attempt1, { channel: 'whatsapp', attempt: 1, kind: 'first_contact', outcome: 'sent' });
    assert.deepEqual(attempt2, { channel: 'whatsapp', attempt: 2, kind: 'template', outcome: 'sent' });
    assert.deepEqual(ended, {
      reason: 'booked',
      attempts: 2,
      cancelledAttempt: { kind: 'nudge', at: nextAt.toISOString() },
    });
    assert.equal(events[2]!.json.data.lead.status, 'booked');
  });

  it('a plan that ends with nothing pending says cancelledAttempt null', async () => {
    const ws = await s.workspaceWithEndpoint('whatsapp', s.receiver.url, ['contact.plan_ended']);
    const leadId = await s.quietLead(ws);
    await recordAttempt(s.app.db.pool, leadId, { channel: 'whatsapp', kind: 'first_contact', outcome: 'sent' });
    const moved = await transitionLead(s.app.db.pool, {
      leadId,
      to: 'needs_human',
      actor: 'agent',
      event: { type: 'conversation.escalated', data: { reason: 'not_reached' } },
    });
    assert.equal(moved.ok, true);
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    const events = s.ofLead(leadId);
    assert.deepEqual(
      events.map((e) => e.json.type),
      ['contact.plan_ended'],
    );
    const { lead: _l, ...ended } = events[0]!.json.data;
    assert.deepEqual(ended, { reason: 'needs_human', attempts: 1, cancelledAttempt: null });
  });

  it('the endpoint may subscribe to the two types by name (the list the CLI and the dashboard check)', async () => {
    const ws = await s.app.createWorkspace('whatsapp');
    for (const type of ['contact.attempted', 'contact.plan_ended']) {
      const added = await s.endpoints.add(ws.slug, s.receiver.url, [type]);
      assert.ok('secret' in added, JSON.stringify(added));
    }
  });
});

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { metricsRegistry } from '../../src/metrics/metrics-routes.ts';
import { verifyWebhook } from '../../src/webhooks/standard-webhooks-signature.ts';
import { isEndpointError, type EndpointView } from '../../src/webhooks/webhook-endpoint-service.ts';
import { postLead } from '../helpers/http.ts';
import { outboundWebhookSetup } from '../helpers/outbound-webhook-setup.ts';
import { drainWebhooks } from '../helpers/webhook-receiver.ts';

// Outbound webhooks' delivery: retries and order, secret rotation, endpoint health, safety and
// metrics, on sandbox leads whose events the tests make. Events are delivered to a receiver on
// 127.0.0.1 by the real delivery service, run here job by job (drainWebhooks). The retry schedule is
// shortened to zero delays; the clock is real time plus an offset the tests move. Every event type
// end to end is in test/api/outbound-webhook-events.test.ts.

let offsetMs = 0;
const clock = () => new Date(Date.now() + offsetMs);
const s = outboundWebhookSetup(clock);
const { deliveryService, phone, workspaceWithEndpoint, ofLead, verified, quietLead } = s;

async function attemptsOf(endpointId: string) {
  const log = await s.endpoints.deliveries(endpointId, 100);
  if (isEndpointError(log)) throw new Error('no endpoint');
  return log;
}

describe('retries and order', () => {
  it(
    'a receiver that fails 3 times then succeeds gets exactly one ' + 'successful delivery, same webhook-id each time',
    async () => {
      const ws = await workspaceWithEndpoint('whatsapp');
      const leadId = await quietLead(ws);
      s.receiver.answers.push(500, 503, 302);
      const results = await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
      assert.deepEqual(results, ['retrying', 'retrying', 'retrying', 'sent']);
      const got = ofLead(leadId);
      assert.deepEqual(
        got.map((r) => r.answered),
        [500, 503, 302, 200],
      );
      assert.equal(new Set(got.map((r) => r.headers['webhook-id'])).size, 1);
      const [log] = await attemptsOf(ws.endpointId);
      assert.equal(log!.status, 'succeeded');
      assert.deepEqual(
        log!.attempts.map((a) => a.statusCode),
        [500, 503, 302, 200],
      );
      // Our own line, never the receiver's answer ("receiver says 500").
      assert.equal(log!.attempts[0]!.response, 'answered HTTP 500');
      assert.ok(log!.attempts.every((a) => a.latencyMs >= 0));
    },
  );

  it('a later event of a lead waits until the earlier one of the same endpoint is delivered', async () => {
    const ws = await workspaceWithEndpoint('whatsapp');
    const leadId = await quietLead(ws);
    await s.app.relay.drain();
    await transitionLead(s.app.db.pool, {
      leadId,
      to: 'needs_human',
      actor: 'operator',
      event: { type: 'lead.taken_over' },
    });
    s.receiver.answers.push(500, 500);
    const results = await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    // The status change's job ran while lead.created was failing and waited instead of overtaking it.
    assert.ok(results.includes('waiting'), results.join(', '));
    const got = ofLead(leadId);
    assert.deepEqual(
      got.map((r) => `${r.json.type} ${r.answered}`),
      ['lead.created 500', 'lead.created 500', 'lead.created 200', 'lead.status_changed 200'],
    );
  });

  it('a delivery that fails every attempt is failed; replay sends it again', async () => {
    const ws = await workspaceWithEndpoint('whatsapp');
    const leadId = await quietLead(ws);
    s.receiver.answers.push(500, 500, 500);
    const short = deliveryService({ schedule: [0, 0] });
    assert.deepEqual(await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: short }), [
      'retrying',
      'retrying',
      'failed',
    ]);
    const [failed] = await attemptsOf(ws.endpointId);
    assert.equal(failed!.status, 'failed');
    assert.equal(await s.endpoints.replay(ws.endpointId, failed!.deliveryId), 1);
    assert.deepEqual(await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: short }), ['sent']);
    assert.equal(ofLead(leadId, 200).length, 1);
    assert.equal(await s.endpoints.replay(ws.endpointId), 0);
  });
});

describe('secrets and endpoint health', () => {
  it('after a rotation both secrets sign for 24 hours, then only the new one', async () => {
    const ws = await workspaceWithEndpoint('whatsapp');
    const rotated = await s.endpoints.rotateSecret(ws.endpointId);
    if (isEndpointError(rotated)) throw new Error('no endpoint');
    const leadId = await quietLead(ws);
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
    const [first] = ofLead(leadId);
    assert.equal(String(first!.headers['webhook-signature']).split(' ').length, 2);
    assert.ok(verified(first!, ws.secret) && verified(first!, rotated.secret));
    offsetMs += 24 * 3600 * 1000 + 1000;
    try {
      await transitionLead(s.app.db.pool, {
        leadId,
        to: 'needs_human',
        actor: 'operator',
        event: { type: 'lead.taken_over' },
      });
      await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: s.delivery });
      const later = ofLead(leadId).find((r) => r.json.type === 'lead.status_changed')!;
      assert.equal(String(later.headers['webhook-signature']).split(' ').length, 1);
      const h = {
        id: String(later.headers['webhook-id']),
        timestamp: String(later.headers['webhook-timestamp']),
        signature: String(later.headers['webhook-signature']),
      };
      const now = Math.floor(clock().getTime() / 1000);
      assert.equal(verifyWebhook(rotated.secret, h, later.body, now), true);
      assert.equal(verifyWebhook(ws.secret, h, later.body, now), false);
    } finally {
      offsetMs = 0;
    }
  });

  it('an endpoint failing every attempt for 5 days is disabled, says so, and logs a warning', async () => {
    const ws = await workspaceWithEndpoint('whatsapp');
    await quietLead(ws);
    s.receiver.answers.push(500);
    const single = deliveryService({ schedule: [] });
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: single });
    let [listed] = (await s.endpoints.list(ws.slug)) as EndpointView[];
    assert.equal(listed!.enabled, true);
    assert.ok(listed!.failingSince);
    offsetMs += 5 * 24 * 3600 * 1000;
    try {
      await quietLead(ws);
      s.receiver.answers.push(500);
      await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: single });
    } finally {
      offsetMs = 0;
    }
    [listed] = (await s.endpoints.list(ws.slug)) as EndpointView[];
    assert.equal(listed!.enabled, false);
    assert.match(listed!.disabledReason!, /failed for 5 days/);
    assert.ok(
      s.app.logs.some(
        (l) => l.includes('"level":40') && l.includes('webhook endpoint disabled') && l.includes(ws.endpointId),
      ),
    );
    // Disabled: new events are not captured for it; re-enabled, it receives again.
    const before = s.receiver.received.length;
    const leadId = await quietLead(ws);
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: single });
    assert.equal(s.receiver.received.length, before);
    assert.equal(await s.endpoints.enable(ws.endpointId), true);
    await transitionLead(s.app.db.pool, {
      leadId,
      to: 'needs_human',
      actor: 'operator',
      event: { type: 'lead.taken_over' },
    });
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: single });
    assert.deepEqual(
      ofLead(leadId).map((r) => r.json.type),
      ['lead.status_changed'],
    );
  });
});

describe('safety', () => {
  it(
    'live events are never sent to loopback, by literal address ' + 'or by a name that resolves to it, nor over http',
    async () => {
      for (const url of [
        s.receiver.url.replace('http:', 'https:'),
        s.receiver.url.replace('http://127.0.0.1', 'https://localhost'),
        s.receiver.url,
      ]) {
        const ws = await workspaceWithEndpoint('whatsapp', url);
        const before = s.receiver.received.length;
        const created = await postLead(s.app.http, ws.apiKey, {
          name: 'Live Lead',
          phone: phone('0001'),
          consent: true,
        });
        assert.equal(created.status, 201);
        await s.app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
        const results = await drainWebhooks({
          relay: s.app.relay,
          boss: s.app.boss,
          service: deliveryService({ schedule: [], allowPrivateNetworks: false }),
        });
        assert.deepEqual(results, ['failed'], url);
        assert.equal(s.receiver.received.length, before, `nothing reached the receiver for ${url}`);
        const [log] = await attemptsOf(ws.endpointId);
        assert.equal(log!.attempts[0]!.outcome, 'refused');
        assert.match(log!.attempts[0]!.response, /^refused: /);
      }
    },
  );

  it('with private networks allowed, a live event does go to the receiver', async () => {
    const ws = await workspaceWithEndpoint('whatsapp', s.receiver.url.replace('http://127.0.0.1', 'https://localhost'));
    await postLead(s.app.http, ws.apiKey, { name: 'Live Lead', phone: phone('0001'), consent: true });
    await s.app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
    const allowing = deliveryService({ schedule: [], allowPrivateNetworks: true });
    await drainWebhooks({ relay: s.app.relay, boss: s.app.boss, service: allowing });
    const [log] = await attemptsOf(ws.endpointId);
    // It connected (the receiver speaks http, so the TLS handshake fails): a failure, not a refusal.
    assert.equal(log!.attempts[0]!.outcome, 'failed');
    assert.doesNotMatch(log!.attempts[0]!.response, /refused: /);
  });

  it('add refuses a non-https URL and an unknown event type', async () => {
    const ws = await s.app.createWorkspace('whatsapp');
    assert.deepEqual(await s.endpoints.add(ws.slug, 'http://hooks.example.com/x', []), {
      error: 'bad_url',
      problem:
        'must be https (http only for a receiver on this machine, ' +
        '127.0.0.1 or localhost, which gets sandbox events only)',
    });
    assert.deepEqual(await s.endpoints.add(ws.slug, 'https://hooks.example.com/x', ['lead.deleted']), {
      error: 'bad_event_type',
      type: 'lead.deleted',
    });
    assert.deepEqual(await s.endpoints.add('no-such-workspace', 'https://hooks.example.com/x', []), {
      error: 'no_workspace',
    });
  });
});

describe('metrics', () => {
  it('attempts by outcome and mode, endpoints by state', async () => {
    const text = await metricsRegistry(s.app.db.pool, s.app.log).metrics();
    const value = (name: string, labels: string) =>
      Number(
        text
          .split('\n')
          .find((l) => l.startsWith(`${name}{${labels}} `))
          ?.split(' ')[1] ?? 0,
      );
    assert.ok(value('leadintake_webhook_deliveries_total', 'outcome="succeeded",mode="sandbox"') >= 1);
    assert.ok(value('leadintake_webhook_deliveries_total', 'outcome="failed",mode="sandbox"') >= 1);
    assert.ok(value('leadintake_webhook_deliveries_total', 'outcome="refused",mode="live"') >= 1);
    assert.ok(value('leadintake_webhook_endpoints', 'state="enabled"') >= 1);
    assert.ok(value('leadintake_leads_created_total', 'channel="whatsapp",mode="sandbox"') >= 1);
    assert.ok(value('leadintake_leads_created_total', 'channel="whatsapp",mode="live"') >= 1);
  });
});

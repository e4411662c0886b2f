import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { freePort } from '../../src/db/embedded.ts';
import { verifyWebhook } from '../../src/webhooks/standard-webhooks-signature.ts';
import { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery-service.ts';
import { WebhookEndpointService, isEndpointError } from '../../src/webhooks/webhook-endpoint-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { SOLAR_AGENT } from './agent-harness.ts';
import { postLead } from './http.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from './test-app.ts';
import { startWebhookReceiver, type ReceivedWebhook, type WebhookReceiver } from './webhook-receiver.ts';

// The outbound-webhook tests' setup: the real app listening on 127.0.0.1, a receiver on 127.0.0.1,
// the endpoint service and a delivery service with the retry schedule shortened to zero delays.
// Each test file that calls outboundWebhookSetup gets its own app and receiver (its before/after).

export interface OutboundWebhookSetup {
  app: TestApp;
  receiver: WebhookReceiver;
  endpoints: WebhookEndpointService;
  delivery: WebhookDeliveryService;
  deliveryService(o?: { schedule?: number[]; allowPrivateNetworks?: boolean }): WebhookDeliveryService;
  /** A phone number of its own for each lead, ending in the sandbox's outcome suffix. */
  phone(suffix: string): string;
  workspaceWithEndpoint(
    channel: 'whatsapp' | 'voice',
    url?: string,
    events?: string[],
  ): Promise<Awaited<ReturnType<TestApp['createWorkspace']>> & { endpointId: string; secret: string }>;
  ofLead(leadId: string, answered?: number): ReceivedWebhook[];
  verified(r: ReceivedWebhook, secret: string): boolean;
  /** A sandbox WhatsApp lead whose turns are not run: its only events are the ones the test makes. */
  quietLead(ws: { sandboxKey: string }): Promise<string>;
}

/**
 * Registers the calling file's before/after; the fields are set once its before has run. What the
 * file builds on the app goes in `started`: a before of the file's own may run before this one ends.
 */
export function outboundWebhookSetup(
  clock: () => Date,
  started: (app: TestApp) => void | Promise<void> = () => {},
): OutboundWebhookSetup {
  const secrets = new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));
  let n = 0;
  const s = {
    // The receiver is on 127.0.0.1: as in the demo, the operator allows private networks, except
    // where a test shows what happens without.
    deliveryService(o: { schedule?: number[]; allowPrivateNetworks?: boolean } = {}) {
      return new WebhookDeliveryService({
        pool: s.app.db.pool,
        boss: s.app.boss,
        log: s.app.log,
        clock,
        secrets,
        timeoutMs: 5000,
        allowPrivateNetworks: o.allowPrivateNetworks ?? true,
        retryScheduleSeconds: o.schedule ?? [0, 0, 0, 0, 0, 0, 0],
        jitter: () => 1,
      });
    },
    phone: (suffix: string) => `+1 555 ${String(200 + ++n).padStart(3, '0')} ${suffix}`,
    async workspaceWithEndpoint(channel: 'whatsapp' | 'voice', url = s.receiver.url, events: string[] = []) {
      const ws = await s.app.createWorkspace(channel, { agent: SOLAR_AGENT });
      const added = await s.endpoints.add(ws.slug, url, events);
      if (isEndpointError(added)) throw new Error(JSON.stringify(added));
      return { ...ws, endpointId: added.endpoint.id, secret: added.secret };
    },
    ofLead: (leadId: string, answered?: number): ReceivedWebhook[] =>
      s.receiver.received.filter(
        (r) => r.json.data.lead.id === leadId && (answered === undefined || r.answered === answered),
      ),
    verified(r: ReceivedWebhook, secret: string): boolean {
      const h = {
        id: String(r.headers['webhook-id']),
        timestamp: String(r.headers['webhook-timestamp']),
        signature: String(r.headers['webhook-signature']),
      };
      return verifyWebhook(secret, h, r.body, Math.floor(clock().getTime() / 1000));
    },
    async quietLead(ws: { sandboxKey: string }) {
      const created = await postLead(s.app.http, ws.sandboxKey, {
        name: 'Quiet Lead',
        phone: s.phone('0004'),
        consent: true,
      });
      assert.equal(created.status, 201);
      // The first turn's outbox row is dropped: the lead stays `new` and sends nothing by itself.
      await s.app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn' AND payload->>'leadId' = $1`, [
        created.body.leadId,
      ]);
      return created.body.leadId as string;
    },
  } as OutboundWebhookSetup;

  before(async () => {
    const port = await freePort();
    s.app = await startTestApp({ env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
    await s.app.http.listen({ port, host: '127.0.0.1' });
    await started(s.app);
    s.receiver = await startWebhookReceiver();
    s.endpoints = new WebhookEndpointService(s.app.db.pool, secrets, clock, { allowPrivateNetworks: true });
    s.delivery = s.deliveryService();
  });

  after(async () => {
    if (process.env.WEBHOOK_TEST_LOGS) console.log(s.app.logs.filter((l) => /"level":(40|50)/.test(l)).join(''));
    await s.app?.close();
    await s.receiver?.close();
  });

  return s;
}

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Role } from '../../src/operators/roles.ts';
import { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { admin, makeOperator, signIn, type AdminSession } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';
import { drainWebhooks, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';

// The Webhooks page's admin API (docs/DASHBOARD.md, "Webhooks"): owners and admins manage the
// workspace's outbound webhook endpoints; agents and viewers get 403; another workspace's
// endpoint is 404; deliveries are made by the real delivery service, run here job by job.

let app: TestApp;
let receiver: WebhookReceiver;
let delivery: WebhookDeliveryService;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let other: Awaited<ReturnType<TestApp['createWorkspace']>>;
const sessions = {} as Record<Role, AdminSession>;
let otherOwner: AdminSession;
const base = () => `/api/admin/workspaces/${ws.slug}/webhooks`;

before(async () => {
  // The receiver is on 127.0.0.1: the operator allows private networks, as the demo does.
  app = await startTestApp({ env: { EGRESS_ALLOW_PRIVATE_NETWORKS: 'true' } });
  receiver = await startWebhookReceiver();
  delivery = new WebhookDeliveryService({
    pool: app.db.pool,
    boss: app.boss,
    log: app.log,
    clock: () => new Date(),
    secrets: new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)),
    timeoutMs: 5000,
    allowPrivateNetworks: true,
    retryScheduleSeconds: [],
    jitter: () => 1,
  });
  ws = await app.createWorkspace('voice');
  other = await app.createWorkspace('voice');
  for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role }]);
    sessions[role] = (await signIn(app.http, op.email, op.password)).session!;
  }
  const op = await makeOperator(app, [{ workspaceId: other.workspaceId, role: 'owner' }]);
  otherOwner = (await signIn(app.http, op.email, op.password)).session!;
});

after(async () => {
  await app?.close();
  await receiver?.close();
});

describe('webhook endpoints in the admin API', () => {
  it('an owner adds an endpoint and sees its secret once; the list never shows it', async () => {
    const added = await admin(app.http, sessions.owner, 'POST', base(), {
      url: receiver.url,
      eventTypes: ['lead.created'],
    });
    assert.equal(added.status, 200, JSON.stringify(added.body));
    assert.match(added.body.secret, /^whsec_/);
    assert.deepEqual(added.body.endpoint.eventTypes, ['lead.created']);
    const list = await admin(app.http, sessions.owner, 'GET', base());
    assert.equal(list.status, 200);
    assert.equal(list.body.endpoints.length, 1);
    assert.ok(!JSON.stringify(list.body).includes(added.body.secret));
    assert.ok(list.body.eventTypes.includes('lead.status_changed'));
  });

  it('refuses a bad URL and an unknown event type with a message that says what to fix', async () => {
    const http = await admin(app.http, sessions.admin, 'POST', base(), { url: 'http://hooks.example.com/x' });
    assert.equal(http.status, 400);
    assert.deepEqual(http.body.issues[0].path, ['url']);
    assert.match(http.body.issues[0].message, /must be https/);
    const notUrl = await admin(app.http, sessions.admin, 'POST', base(), { url: 'not a url' });
    assert.equal(notUrl.status, 400);
    assert.match(notUrl.body.issues[0].message, /is not a URL/);
    const event = await admin(app.http, sessions.admin, 'POST', base(), {
      url: 'https://hooks.example.com/x',
      eventTypes: ['lead.exploded'],
    });
    assert.equal(event.status, 400);
    assert.deepEqual(event.body.issues[0].path, ['eventTypes', '0']);
  });

  it('agents and viewers get 403 on every route; a missing CSRF token is 403', async () => {
    const id = (await admin(app.http, sessions.owner, 'GET', base())).body.endpoints[0].id;
    for (const role of ['agent', 'viewer'] as const) {
      const s = sessions[role];
      for (const [method, url] of [
        ['GET', base()],
        ['POST', base()],
        ['DELETE', `${base()}/${id}`],
        ['POST', `${base()}/${id}/enable`],
        ['POST', `${base()}/${id}/rotate-secret`],
        ['GET', `${base()}/${id}/deliveries`],
        ['POST', `${base()}/${id}/replay`],
      ] as const) {
        const r = await admin(
          app.http,
          s,
          method,
          url,
          method === 'POST' ? { url: 'https://hooks.example.com/x' } : undefined,
        );
        assert.equal(r.status, 403, `${role} ${method} ${url}`);
        assert.equal(r.body.error, 'Your role in this workspace does not allow this.');
      }
    }
    const noCsrf = await admin(app.http, sessions.owner, 'POST', `${base()}/${id}/rotate-secret`, {}, { csrf: false });
    assert.equal(noCsrf.status, 403);
    assert.equal(noCsrf.body.error, 'Missing or invalid CSRF token.');
    const anonymous = await admin(app.http, null, 'GET', base());
    assert.equal(anonymous.status, 401);
  });

  it("another workspace's endpoint is 404, even to that workspace's owner through this workspace's URL", async () => {
    const foreign = await admin(app.http, otherOwner, 'POST', `/api/admin/workspaces/${other.slug}/webhooks`, {
      url: 'https://hooks.example.com/other',
    });
    assert.equal(foreign.status, 200);
    const fid = foreign.body.endpoint.id;
    for (const [method, path] of [
      ['DELETE', ''],
      ['POST', '/enable'],
      ['POST', '/rotate-secret'],
      ['GET', '/deliveries'],
      ['POST', '/replay'],
    ] as const) {
      const r = await admin(app.http, sessions.owner, method, `${base()}/${fid}${path}`);
      assert.equal(r.status, 404, `${method} ${path}`);
      assert.equal(r.body.error, 'Webhook endpoint not found in this workspace.');
    }
    const notMine = await admin(app.http, otherOwner, 'GET', base());
    assert.equal(notMine.status, 404);
    assert.equal((await admin(app.http, sessions.owner, 'DELETE', `${base()}/not-a-uuid`)).status, 404);
  });

  it(
    'lists deliveries with their attempts, replays a failed ' + 'one, rotates the secret, enables and removes',
    async () => {
      const id = (await admin(app.http, sessions.owner, 'GET', base())).body.endpoints[0].id;
      receiver.answers.push(500);
      const lead = await postLead(app.http, ws.sandboxKey, validLead({ phone: '+1 555 301 0001' }));
      assert.equal(lead.status, 201, JSON.stringify(lead.body));
      await drainWebhooks({ relay: app.relay, boss: app.boss, service: delivery });
      const log = await admin(app.http, sessions.admin, 'GET', `${base()}/${id}/deliveries`);
      assert.equal(log.status, 200, JSON.stringify(log.body));
      const failed = log.body.deliveries.find((d: any) => d.eventType === 'lead.created');
      assert.equal(failed.status, 'failed');
      assert.equal(failed.attempts[0].statusCode, 500);

      const replay = await admin(app.http, sessions.admin, 'POST', `${base()}/${id}/replay`, {
        deliveryId: failed.deliveryId,
      });
      assert.equal(replay.status, 200, JSON.stringify(replay.body));
      assert.equal(replay.body.replayed, 1);
      await drainWebhooks({ relay: app.relay, boss: app.boss, service: delivery });
      const after = (await admin(app.http, sessions.admin, 'GET', `${base()}/${id}/deliveries`)).body.deliveries.find(
        (d: any) => d.deliveryId === failed.deliveryId,
      );
      assert.equal(after.status, 'succeeded');
      assert.deepEqual(
        after.attempts.map((a: any) => a.statusCode),
        [500, 200],
      );
      assert.equal((await admin(app.http, sessions.admin, 'POST', `${base()}/${id}/replay`, {})).body.replayed, 0);

      const rotated = await admin(app.http, sessions.admin, 'POST', `${base()}/${id}/rotate-secret`, {});
      assert.equal(rotated.status, 200);
      assert.match(rotated.body.secret, /^whsec_/);
      assert.equal((await admin(app.http, sessions.admin, 'POST', `${base()}/${id}/enable`, {})).status, 200);
      assert.equal((await admin(app.http, sessions.owner, 'DELETE', `${base()}/${id}`)).status, 200);
      assert.equal((await admin(app.http, sessions.owner, 'GET', base())).body.endpoints.length, 0);
      assert.equal((await admin(app.http, sessions.owner, 'DELETE', `${base()}/${id}`)).status, 404);
    },
  );
});

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';
import { drainWebhooks, startWebhookReceiver, type WebhookReceiver } from '../helpers/webhook-receiver.ts';
import { assertAccessible, launchChromium, WAIT, watchedPage, signInAs } from '../helpers/browser.ts';

// The dashboard's Webhooks page in Debian's Chromium, offline, against the real service: an owner
// adds an endpoint on a local receiver, sees its secret once, a sandbox lead's event is delivered
// (by the real delivery service, run here job by job), fails, is replayed and succeeds; axe-core
// on the page; a viewer has no Webhooks link and the API refuses them.

let app: TestApp;
let browser: Browser;
let base: string;
let receiver: WebhookReceiver;
let delivery: WebhookDeliveryService;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp({ env: { EGRESS_ALLOW_PRIVATE_NETWORKS: 'true' } }));
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
  ws = await app.createWorkspace('voice', undefined, 'hooks');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
  await receiver?.close();
});

const newPage = () => watchedPage(browser, base, problems);
const accessible = assertAccessible;

test('an owner adds an endpoint, sees the secret once, sees a delivery and replays it', async () => {
  const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
  const page = await newPage();
  await signInAs(page, base, owner.email, owner.password);
  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Webhooks' }).click();
  await page.getByRole('heading', { name: 'Webhooks', level: 1 }).waitFor(WAIT);
  await page.getByText('No endpoints yet.').waitFor(WAIT);
  await accessible(page, 'empty Webhooks page');

  await page.getByLabel('URL').fill(receiver.url);
  await page.getByRole('checkbox', { name: 'lead.created' }).check();
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const dialog = page.getByRole('dialog', { name: 'Signing secret' });
  await dialog.waitFor(WAIT);
  const secret = await dialog.getByLabel('Secret').inputValue();
  assert.match(secret, /^whsec_/);
  await accessible(page, 'secret dialog');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  const endpoint = page.getByRole('article', { name: receiver.url });
  await endpoint.getByText('Enabled').waitFor(WAIT);
  assert.equal(await page.getByText(secret).count(), 0, 'the secret is not shown again');

  // The receiver fails the first delivery (no retries in this test's schedule), then accepts the replay.
  receiver.answers.push(500);
  const lead = await postLead(app.http, ws.sandboxKey, validLead({ phone: '+1 555 401 0001' }));
  assert.equal(lead.status, 201);
  await drainWebhooks({ relay: app.relay, boss: app.boss, service: delivery });
  await endpoint.getByRole('button', { name: 'Refresh deliveries' }).click();
  const deliveryRow = endpoint.getByRole('row').filter({ hasText: 'lead.created' });
  await deliveryRow.getByText('failed', { exact: true }).waitFor(WAIT);
  await deliveryRow.getByText(/500 · \d+ ms/).waitFor(WAIT);
  await accessible(page, 'Webhooks page with a delivery');

  await deliveryRow.getByRole('button', { name: /^Replay delivery/ }).click();
  await page.waitForResponse((r) => r.url().endsWith('/deliveries'), WAIT);
  await drainWebhooks({ relay: app.relay, boss: app.boss, service: delivery });
  await endpoint.getByRole('button', { name: 'Refresh deliveries' }).click();
  await deliveryRow.getByText('succeeded', { exact: true }).waitFor(WAIT);
  await deliveryRow.getByText(/200 · \d+ ms/).waitFor(WAIT);
  assert.deepEqual(
    receiver.received.map((r) => r.answered),
    [500, 200],
  );

  await endpoint.getByRole('button', { name: 'Rotate secret' }).click();
  const rotated = await dialog.getByLabel('Secret').inputValue();
  assert.ok(rotated.startsWith('whsec_') && rotated !== secret);
  await dialog.getByRole('button', { name: 'Done' }).click();
  await endpoint.getByRole('button', { name: 'Remove' }).click();
  await page.getByText('No endpoints yet.').waitFor(WAIT);
  await page.close();
  assert.deepEqual(problems, []);
});

test('a viewer has no Webhooks link, and the API answers them 403', async () => {
  const viewer = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }], 'Vera Viewer');
  const page = await newPage();
  await signInAs(page, base, viewer.email, viewer.password);
  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Leads' }).waitFor(WAIT);
  assert.equal(await page.getByRole('link', { name: 'Webhooks' }).count(), 0);
  await page.close();
  const session = (await signIn(app.http, viewer.email, viewer.password)).session;
  assert.equal((await admin(app.http, session, 'GET', `/api/admin/workspaces/${ws.slug}/webhooks`)).status, 403);
  assert.deepEqual(problems, []);
});

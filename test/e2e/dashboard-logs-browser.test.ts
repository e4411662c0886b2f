import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { recordIntegrationEvent } from '../../src/integration-log/integration-log.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { uniquePhone } from '../helpers/http.ts';
import { assertAccessible, launchChromium, WAIT, watchedPage, signInAs } from '../helpers/browser.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// The dashboard's Logs page in Debian's Chromium against the real service and the WhatsApp
// simulators: the integration log shows provider traffic, filters to errors only and shows a new
// entry live; a dead-lettered turn is retried with a click and its message is sent; the audit log
// lists the retry. axe-core on each tab.

let h: WhatsappHarness;
let browser: Browser;
let ws: { slug: string; apiKey: string; workspaceId: string };
const problems: string[] = [];

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

test(
  'integration log with errors only and live rows; ' +
    'Retry of a dead letter sends the message; the audit log lists it',
  async () => {
    // One lead whose first contact Twilio refuses until it is dead-lettered, one that is sent.
    h.twilio.failNextSends(6, { status: 401, code: 20003 });
    const dead = await h.submit(ws.apiKey, { phone: uniquePhone(), name: 'Dana Deadletter' });
    await h.settle({ ignoreBackoff: true });
    await h.submit(ws.apiKey, { phone: uniquePhone(), name: 'Sam Sent' });
    await h.settle({ ignoreBackoff: true });
    assert.equal(h.twilio.messages.filter((m) => m.to === dead.phone).length, 0);

    const owner = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
    const page = await watchedPage(browser, h.baseUrl, problems);
    await signInAs(page, h.baseUrl, owner.email, owner.password);
    await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Logs' }).click();
    await page.getByRole('heading', { name: 'Integration log' }).waitFor(WAIT);
    const rows = page.locator('table.integration-log tbody tr');
    await rows.filter({ hasText: 'accepted' }).first().waitFor(WAIT);
    await rows.filter({ hasText: '401' }).first().waitFor(WAIT);
    await accessible(page, 'integration log');

    await page.getByLabel('Errors only').check();
    // Every row left is a failed one (evaluated in the page).
    await page.waitForFunction(
      "(() => { const trs = [...document.querySelectorAll('table.integration-log tbody tr')]; " +
        "return trs.length > 0 && trs.every((tr) => tr.classList.contains('row-failed')); })()",
      undefined,
      WAIT,
    );
    assert.equal(await rows.filter({ hasText: 'accepted' }).count(), 0);
    assert.ok((await rows.filter({ hasText: '401' }).count()) >= 6);

    // An answer overtaken by a later request is dropped: the unfiltered list, asked for when the box
    // is unticked, answers only after the filtered one asked for when it is ticked again.
    const late = (url: URL) => url.pathname.endsWith('/integration-log') && !url.searchParams.has('errors');
    await page.route(late, async (route) => {
      await new Promise((r) => setTimeout(r, 1_000)); // orders the answers; nothing is timed
      await route.continue();
    });
    const lateAnswer = page.waitForResponse((res) => late(new URL(res.url())));
    await page.getByLabel('Errors only').uncheck();
    await page.getByLabel('Errors only').check();
    await lateAnswer;
    await page.unroute(late);
    // Two frames: the late answer would have been parsed and rendered by then.
    await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
    assert.equal(await rows.filter({ hasText: 'accepted' }).count(), 0, 'the overtaken unfiltered answer is not shown');

    // Live: an entry written now (by whatever process) appears without a reload.
    await recordIntegrationEvent(h.app.db.pool, {
      provider: 'vapi',
      workspaceId: ws.workspaceId,
      leadId: dead.leadId,
      direction: 'out',
      kind: 'POST /call',
      httpStatus: 502,
      error: 'Bad gateway from Vapi',
      payload: {},
    });
    await rows.filter({ hasText: 'Bad gateway from Vapi' }).waitFor(WAIT);

    await page.getByRole('navigation', { name: 'Logs' }).getByRole('link', { name: 'Dead letters' }).click();
    const deadRow = page.getByRole('row').filter({ hasText: 'Dana Deadletter' });
    await deadRow.waitFor(WAIT);
    await deadRow.getByText("The provider refused the workspace's settings", { exact: false }).waitFor(WAIT);
    await accessible(page, 'dead letters');
    await deadRow.getByRole('button', { name: 'Retry the turn of Dana Deadletter' }).click();
    await page.getByText('No dead-lettered turns.').waitFor(WAIT);
    await h.settle({ ignoreBackoff: true });
    assert.equal(h.twilio.messages.filter((m) => m.to === dead.phone).length, 1);

    await page.getByRole('navigation', { name: 'Logs' }).getByRole('link', { name: 'Audit log' }).click();
    const auditRow = page.getByRole('row').filter({ hasText: 'Dead-lettered turn retried' });
    await auditRow.waitFor(WAIT);
    await auditRow.getByText('Olivia Owner').waitFor(WAIT);
    await accessible(page, 'audit log');
    await page.close();
    assert.deepEqual(problems, []);
  },
);

test('a viewer has no Logs link; an agent sees the log but no Retry and no audit log', async () => {
  const viewer = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'viewer' }], 'Vera Viewer');
  const agent = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Andy Agent');
  const page = await watchedPage(browser, h.baseUrl, problems);
  await signInAs(page, h.baseUrl, viewer.email, viewer.password);
  assert.equal(await page.getByRole('link', { name: 'Logs' }).count(), 0);
  await page.close();
  const session = (await signIn(h.app.http, viewer.email, viewer.password)).session;
  assert.equal(
    (await admin(h.app.http, session, 'GET', `/api/admin/workspaces/${ws.slug}/integration-log`)).status,
    403,
  );

  h.twilio.failNextSends(6, { status: 401, code: 20003 });
  await h.submit(ws.apiKey, { phone: uniquePhone(), name: 'Abe Again' });
  await h.settle({ ignoreBackoff: true });
  const agentPage = await watchedPage(browser, h.baseUrl, problems);
  await signInAs(agentPage, h.baseUrl, agent.email, agent.password);
  await agentPage.goto(`${h.baseUrl}/admin/${ws.slug}/logs/dead-letters`);
  await agentPage.getByRole('row').filter({ hasText: 'Abe Again' }).waitFor(WAIT);
  assert.equal(await agentPage.getByRole('button', { name: /Retry/ }).count(), 0);
  assert.equal(
    await agentPage.getByRole('navigation', { name: 'Logs' }).getByRole('link', { name: 'Audit log' }).count(),
    0,
  );
  await accessible(agentPage, "an agent's dead letters");
  await agentPage.close();
  assert.deepEqual(problems, []);
});

const accessible = assertAccessible;

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The dashboard's first hour in Debian's Chromium: a workspace with only sandbox leads (the demo's)
// lists them with the Sandbox switch shown on; a phone number typed without its country code finds
// its lead; a search that finds nothing says so and offers to clear it; the Providers page says
// the providers are simulated. At 390 px and 1440 px, axe-core clean.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: { email: string; password: string };
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, `first-hour-${process.pid}`);
  // Like the demo's workspaces: sandbox keys only.
  await app.db.pool.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [ws.apiKeyId]);
  for (const [phone, name] of [
    ['+1 555 010 0001', 'Sandy One'],
    ['+1 555 010 0002', 'Sandy Two'],
  ] as const) {
    const r = await postLead(app.http, ws.sandboxKey, validLead({ phone, name }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
  }
  owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function inbox(width: number): Promise<Page> {
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width, height: 900 });
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/leads`);
  await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor(WAIT);
  return page;
}

for (const width of [390, 1440]) {
  const what = 'sandbox leads shown by default, a national number finds its lead, an empty search says so';
  test(`${width} px: ${what}`, async () => {
    const page = await inbox(width);
    await page.getByRole('link', { name: 'Sandy One' }).waitFor(WAIT);
    await page.getByRole('link', { name: 'Sandy Two' }).waitFor(WAIT);
    assert.equal(await page.getByRole('checkbox', { name: 'Sandbox' }).isChecked(), true);
    assert.equal(await page.getByText('No leads yet.').count(), 0);
    await assertAccessible(page, `inbox with sandbox leads at ${width} px`);

    const search = page.getByRole('searchbox', { name: 'Search leads' });
    await search.fill('555 010 0002');
    await page.getByRole('link', { name: 'Sandy One' }).waitFor({ ...WAIT, state: 'detached' });
    await page.getByRole('link', { name: 'Sandy Two' }).waitFor(WAIT);

    await search.fill('Nobody Here');
    await page.getByText('No leads match “Nobody Here”.').waitFor(WAIT);
    assert.equal(await page.getByText('No leads yet.').count(), 0);
    await assertAccessible(page, `empty search at ${width} px`);
    await page.getByRole('button', { name: 'Clear search' }).click();
    await page.getByRole('link', { name: 'Sandy One' }).waitFor(WAIT);
    assert.equal(await search.inputValue(), '');

    // The switch still decides once touched: off shows live leads only (none here).
    await page.getByRole('checkbox', { name: 'Sandbox' }).uncheck();
    await page.getByText('No leads yet.').waitFor(WAIT);
    await page.close();
  });
}

test('the Providers page of a sandbox-only workspace says its providers are simulated', async () => {
  const page = await inbox(1440);
  await page.goto(`${base}/admin/${ws.slug}/providers`);
  await page.getByRole('heading', { name: 'Providers', level: 1 }).waitFor(WAIT);
  await page.getByText('Sandbox: simulated providers.').waitFor(WAIT);
  const scheduling = page.getByRole('region', { name: 'Scheduling (Cal.com)' });
  await scheduling.getByText('Sandbox: simulated provider. Set it here for live leads.').waitFor(WAIT);
  await assertAccessible(page, 'Providers page of a sandbox-only workspace');
  await page.close();
  assert.deepEqual(problems, []);
});

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { HISTORY_FROM, HISTORY_TO, seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// Each figure of the Analytics page links to the leads behind it: the inbox, filtered to them in
// its address, says what it shows, exports the same leads as CSV, and goes back to all leads.
// The seeded history (test/helpers/analytics-history.ts) with a take-over on the booked lead F.
// Debian's Chromium at 1440 px and 390 px; axe-core clean.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, 'analytics-links');
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  await app.db.pool.query(
    `INSERT INTO lead_events (lead_id, type, data, at)
     SELECT id, 'operator.took_over', '{"from":"in_conversation","to":"needs_human","actor":"operator"}',
            created_at + interval '10 minutes'
       FROM leads WHERE workspace_id = $1 AND name = 'History F'`,
    [ws.workspaceId],
  );
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function openPeriod(page: Page): Promise<void> {
  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Analytics' }).click();
  await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor(WAIT);
  await page.getByLabel('Period', { exact: true }).selectOption('custom');
  await page.getByLabel('From', { exact: true }).fill(HISTORY_FROM);
  await page.getByLabel('To', { exact: true }).fill(HISTORY_TO);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText(`Leads created from ${HISTORY_FROM} to ${HISTORY_TO}`).waitFor(WAIT);
}

const leadNames = async (page: Page) =>
  (
    await page
      .getByRole('table', { name: /^Leads/ })
      .locator('tbody td:first-child a')
      .allTextContents()
  ).sort();

for (const width of [1440, 390]) {
  test(`a figure's link opens the inbox filtered to its leads (${width} px)`, async () => {
    const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
    const page = await watchedPage(browser, base, problems);
    await page.setViewportSize({ width, height: 900 });
    await signInAs(page, base, owner.email, owner.password);
    await openPeriod(page);

    // The funnel's "Booked" count: the period's booked leads.
    await page.getByRole('link', { name: '2 leads: Booked' }).click();
    await page.getByRole('heading', { name: 'Leads', level: 1 }).waitFor(WAIT);
    await page.getByText(`Showing leads created ${HISTORY_FROM} to ${HISTORY_TO}.`).waitFor(WAIT);
    const url = new URL(page.url());
    assert.equal(url.pathname, `/admin/${ws.slug}/leads`);
    // The Sandbox switch is off: the link says so (sandbox=false), as it counted live leads only.
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      status: 'booked',
      from: HISTORY_FROM,
      to: HISTORY_TO,
      sandbox: 'false',
    });
    assert.equal(await page.getByRole('button', { name: /^Booked/ }).getAttribute('aria-pressed'), 'true');
    await page.getByRole('link', { name: 'History A' }).waitFor(WAIT);
    assert.deepEqual(await leadNames(page), ['History A', 'History F']);
    // The CSV export sends the same filter.
    const csv = new URL((await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')) ?? '', base);
    assert.equal(csv.pathname, `/api/admin/workspaces/${ws.slug}/leads.csv`);
    const sent = ['status', 'from', 'to'].map((k) => csv.searchParams.get(k));
    assert.deepEqual(sent, ['booked', HISTORY_FROM, HISTORY_TO]);
    const file = await page.evaluate(async (href) => (await fetch(href)).text(), csv.toString());
    const exported = file
      .split('\r\n')
      .slice(1, -1)
      .map((l) => l.split(',')[0])
      .sort();
    assert.deepEqual(exported, ['"History A"', '"History F"']);
    await assertAccessible(page, `filtered inbox, ${width} px`);

    // The split: booked after a person stepped in is F alone.
    await openPeriod(page);
    await page.getByRole('link', { name: '1 booked after a person stepped in' }).click();
    await page.getByText('a person stepped in.', { exact: false }).waitFor(WAIT);
    await page.getByRole('link', { name: 'History F' }).waitFor(WAIT);
    assert.deepEqual(await leadNames(page), ['History F']);

    // The conversation step: the leads that answered.
    await openPeriod(page);
    await page.getByRole('link', { name: '4 leads: Conversation' }).click();
    await page.getByText('had a conversation', { exact: false }).waitFor(WAIT);
    await page.getByRole('link', { name: 'History D' }).waitFor(WAIT);
    assert.deepEqual(await leadNames(page), ['History A', 'History B', 'History D', 'History F']);

    // Back to every lead.
    await page.getByRole('button', { name: 'Show all leads' }).click();
    await page.getByRole('link', { name: 'History E' }).waitFor(WAIT);
    // The filters are gone; the Sandbox switch the link carried stays (it is no filter).
    assert.equal(new URL(page.url()).search, '?sandbox=false');
    await assertAccessible(page, `inbox after clearing the filter, ${width} px`);
    await page.close();
    assert.deepEqual(problems, []);
  });
}

test('in a workspace with sandbox leads only, a link keeps the Sandbox switch it counted with', async () => {
  // Without `sandbox` in its address the inbox would show this workspace's sandbox leads (it has
  // no live one), while the figure with the switch off counted live leads only: none.
  const only = await app.createWorkspace('whatsapp', undefined, 'analytics-sandbox-only');
  await app.db.pool.query(
    `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, status, livemode, created_at)
     VALUES ($1, 'Sandbox Sam', '+15577009001', '+15577009001', $2, 'new', false, $2)`,
    [only.workspaceId, `${HISTORY_FROM}T12:00:00Z`],
  );
  const owner = await makeOperator(app, [{ workspaceId: only.workspaceId, role: 'owner' }]);
  const page = await watchedPage(browser, base, problems);
  await signInAs(page, base, owner.email, owner.password);
  await openPeriod(page);

  await page.getByRole('link', { name: '0 leads: Leads' }).click();
  await page.getByText('No leads with these filters.').waitFor(WAIT);
  assert.equal(new URL(page.url()).searchParams.get('sandbox'), 'false');
  assert.equal(await page.getByRole('checkbox', { name: 'Sandbox' }).isChecked(), false);
  assert.deepEqual(await leadNames(page), []);

  // With the switch on, the same link counts and lists the sandbox lead.
  await openPeriod(page);
  await page.getByRole('checkbox', { name: 'Sandbox' }).check();
  await page.getByRole('link', { name: '1 leads: Leads' }).click();
  await page.getByRole('link', { name: 'Sandbox Sam' }).waitFor(WAIT);
  assert.equal(new URL(page.url()).searchParams.get('sandbox'), 'true');
  assert.deepEqual(await leadNames(page), ['Sandbox Sam']);
  await page.close();
  assert.deepEqual(problems, []);
});

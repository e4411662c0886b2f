import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The inbox's tabs count what the operator looks at (docs/DASHBOARD.md, "Inbox"): with a source
// filter or a search, each tab's number is the leads that tab lists, and an empty list says the
// filters hold none rather than "No leads yet.". The seeded history
// (test/helpers/analytics-history.ts): B (unqualified) and C (in conversation) came by Meta.
// Debian's Chromium, offline.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, `inbox-counts-${process.pid}`);
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  await app.db.pool.query(`UPDATE leads SET source = 'meta' WHERE workspace_id = $1 AND name = ANY($2)`, [
    ws.workspaceId,
    ['History B', 'History C'],
  ]);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

/** Each tab's label and number, as the page shows them ("Booked 0"). */
const tabs = async (page: Page) =>
  (await page.getByRole('navigation', { name: 'Lead status' }).getByRole('button').allTextContents()).map((t) =>
    t.replace(/\s+/g, ' ').trim(),
  );

/** Waits until the tabs read `want` (the page refetches after each change of the view). */
async function expectTabs(page: Page, want: string[]): Promise<void> {
  // A string: the test's TypeScript knows no DOM; the page runs it.
  await page
    .waitForFunction(
      `JSON.stringify([...document.querySelectorAll('nav[aria-label="Lead status"] button')]
        .map((b) => b.textContent.replace(/\\s+/g, ' ').trim())) === ${JSON.stringify(JSON.stringify(want))}`,
      undefined,
      WAIT,
    )
    .catch(async () => assert.deepEqual(await tabs(page), want));
}

test('the tab counts follow the source filter and the search; an empty filtered list says so', async () => {
  const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  const page = await watchedPage(browser, base, problems);
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/leads`);
  await expectTabs(page, ['New 3', 'In conversation 1', 'Needs human 1', 'Booked 2', 'Unqualified 1', 'All 8']);

  await page.getByLabel('Source').selectOption('meta');
  await expectTabs(page, ['New 0', 'In conversation 1', 'Needs human 0', 'Booked 0', 'Unqualified 1', 'All 2']);
  await page.getByRole('link', { name: 'History C' }).waitFor(WAIT);

  await page.getByRole('searchbox', { name: 'Search leads' }).pressSequentially('History B');
  await expectTabs(page, ['New 0', 'In conversation 0', 'Needs human 0', 'Booked 0', 'Unqualified 1', 'All 1']);

  await page.getByRole('searchbox', { name: 'Search leads' }).fill('');
  await page.getByLabel('Source').selectOption('google');
  await expectTabs(page, ['New 0', 'In conversation 0', 'Needs human 0', 'Booked 0', 'Unqualified 0', 'All 0']);
  await page.getByText('No leads with these filters.').waitFor(WAIT);
  assert.equal(await page.getByText('No leads yet.').count(), 0);
  await page.getByRole('button', { name: /^Booked/ }).click();
  await page.getByText('No leads with this status and these filters.').waitFor(WAIT);
  await page.close();
  assert.deepEqual(problems, []);
});

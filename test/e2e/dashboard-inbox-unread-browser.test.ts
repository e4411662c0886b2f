import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The inbox's Unread filter on a phone (docs/DASHBOARD.md, "Inbox"): a booked lead that wrote
// raises no alert, so the operator finds it with *Unread* (counted once it is on); the
// filter is kept in the address (a reload keeps it). The seeded history
// (test/helpers/analytics-history.ts) with History A (booked) having written, and History D
// (needs human) having written but been read already. Debian's Chromium at 390 px; axe-core clean.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: { email: string; password: string };
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, `inbox-unread-${process.pid}`);
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  await app.db.pool.query(
    `UPDATE leads SET last_inbound_at = now() WHERE workspace_id = $1 AND name IN ('History A', 'History D')`,
    [ws.workspaceId],
  );
  const made = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  owner = made;
  const { rows } = await app.db.pool.query('SELECT id FROM operators WHERE email = $1', [made.email]);
  await app.db.pool.query(
    `INSERT INTO lead_reads (lead_id, operator_id, read_through)
     SELECT id, $2, last_inbound_at FROM leads WHERE workspace_id = $1 AND name = 'History D'`,
    [ws.workspaceId, rows[0].id],
  );
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

test('Unread lists the booked lead that wrote, counted, kept in the address (390 px, axe-core clean)', async () => {
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width: 390, height: 844 });
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/leads`);
  const unread = page.getByRole('button', { name: /^Unread/ });
  await page.getByRole('button', { name: 'Unread', exact: true }).waitFor(WAIT);
  assert.equal(await unread.getAttribute('aria-pressed'), 'false');
  await page.getByRole('link', { name: 'History E' }).waitFor(WAIT);

  await unread.click();
  await page.waitForURL((u) => u.searchParams.get('unread') === 'true', WAIT);
  await page.getByRole('link', { name: 'History E' }).waitFor({ ...WAIT, state: 'detached' });
  const names = async () => (await page.locator('table.leads tbody td:first-child a').allTextContents()).sort();
  assert.deepEqual(await names(), ['History A']);
  assert.equal(await unread.getAttribute('aria-pressed'), 'true');
  // The tabs count the unread leads too (the booked one), and the button their number.
  await page.getByRole('button', { name: 'Unread 1' }).waitFor(WAIT);
  await page.getByRole('button', { name: 'Booked 1' }).waitFor(WAIT);
  await page.getByRole('button', { name: 'All 1' }).waitFor(WAIT);
  await assertAccessible(page, 'the inbox filtered to unread leads at 390 px');
  const box = await unread.boundingBox();
  assert.ok(box && box.height >= 44 && box.x >= 0 && box.x + box.width <= 390, `Unread is in reach: ${box}`);

  // A reload (or the link shared) opens the same view.
  await page.reload();
  await page.getByRole('link', { name: 'History A' }).waitFor(WAIT);
  assert.equal(await page.getByRole('button', { name: /^Unread/ }).getAttribute('aria-pressed'), 'true');
  assert.deepEqual(await names(), ['History A']);
  await page.close();
  assert.deepEqual(problems, []);
});

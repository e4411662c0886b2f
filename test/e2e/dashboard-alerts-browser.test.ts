import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The hand-off alert in Debian's Chromium at 1440 px (docs/DASHBOARD.md, "The operator's day"):
// with the inbox open, a lead moving to needs_human puts "(1)" in the tab's title once nobody took
// it within the settle window; one taken within the window never rings. The page's clock is
// Playwright's, paused: the 5-second window passes when the test says, never by waiting. The inbox
// shows owner, waiting time at the workspace's thresholds and the unread mark, axe-core clean.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];
let phoneSeq = 0;

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app.close();
});

async function newLead(name: string): Promise<string> {
  const phone = `+4930${String(8_000_000 + ++phoneSeq).padStart(8, '0')}`;
  const r = await postLead(app.http, ws.apiKey, validLead({ name, phone }));
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.leadId;
}
/** The agent's hand-over as the turn engine makes it: the status changes, nobody owns the lead. */
const handOver = (id: string) => app.db.pool.query(`UPDATE leads SET status = 'needs_human' WHERE id = $1`, [id]);
const alerts = (page: Page) => page.locator('[data-alerts-rings]');
const waitFor = (page: Page, attr: string, value: number) =>
  page.locator(`[data-alerts-${attr}="${value}"]`).waitFor({ ...WAIT, state: 'attached' });

test('a hand-off nobody took in the settle window rings, one taken in it does not; owner, wait, unread', async () => {
  const ada = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Ada Lovelace');
  const bo = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Bo Claimer');
  const boSession = (await signIn(app.http, bo.email, bo.password)).session!;
  const amber = await newLead('Amber Wait');
  const red = await newLead('Red Wait');
  await handOver(amber);
  await handOver(red);
  await app.db.pool.query(
    `UPDATE leads SET needs_human_since = now() - interval '7 minutes', last_inbound_at = now() WHERE id = $1`,
    [amber],
  );
  await app.db.pool.query(`UPDATE leads SET needs_human_since = now() - interval '20 minutes' WHERE id = $1`, [red]);
  const takeOver = (id: string) =>
    admin(app.http, boSession, 'POST', `/api/admin/workspaces/${ws.slug}/leads/${id}/take-over`);
  await takeOver(red);

  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width: 1440, height: 900 });
  await page.clock.install();
  await signInAs(page, base, ada.email, ada.password);
  const row = (name: string) => page.getByRole('row').filter({ hasText: name });
  await row('Amber Wait').getByText('Nobody').waitFor(WAIT);
  await row('Amber Wait')
    .getByText('(over 5 min)')
    .waitFor({ ...WAIT, state: 'attached' });
  await row('Amber Wait')
    .getByText('Unread:')
    .waitFor({ ...WAIT, state: 'attached' });
  await row('Red Wait').getByText('Bo Claimer').waitFor(WAIT);
  await row('Red Wait')
    .getByText('(over 15 min)')
    .waitFor({ ...WAIT, state: 'attached' });
  await page.getByLabel('Sort').selectOption('waiting');
  await page.getByRole('row').nth(1).filter({ hasText: 'Red Wait' }).waitFor(WAIT);
  await assertAccessible(page, 'inbox with owners, waiting times and an unread lead');
  // On opening, the hand-off already waiting counts in the title without ringing.
  await waitFor(page, 'count', 1);
  assert.match(await page.title(), /^\(1\) leadintake/);
  assert.equal(await alerts(page).getAttribute('data-alerts-rings'), '0');

  // Time stands still from here: only runFor moves it.
  await page.clock.pauseAt(await page.evaluate<number>('Date.now() + 1000'));

  // A new hand-off: pending during the window, then the title counts it and it rings once.
  const ringing = await newLead('Ring Me');
  await handOver(ringing);
  await waitFor(page, 'pending', 1);
  assert.match(await page.title(), /^\(1\) /, 'not before the settle window has passed');
  await page.clock.runFor(5_100);
  await waitFor(page, 'count', 2);
  assert.match(await page.title(), /^\(2\) leadintake/);
  assert.equal(await alerts(page).getAttribute('data-alerts-rings'), '1');

  // A hand-off taken within the window never rings, and the title does not count it.
  const claimed = await newLead('Claimed Fast');
  await handOver(claimed);
  await waitFor(page, 'pending', 1);
  assert.equal((await takeOver(claimed)).status, 200);
  // The page has heard of the take-over (a change may still be in line behind the hand-off's own
  // changes) before the window's time passes.
  await waitFor(page, 'pending', 0);
  await page.clock.runFor(5_100);
  await waitFor(page, 'pending', 0);
  assert.equal(await alerts(page).getAttribute('data-alerts-rings'), '1');
  assert.match(await page.title(), /^\(2\) leadintake/);

  // Taking one over lowers the count on every open page.
  assert.equal((await takeOver(ringing)).status, 200);
  await waitFor(page, 'count', 1);
  assert.match(await page.title(), /^\(1\) leadintake/);
  assert.deepEqual(problems, []);
});

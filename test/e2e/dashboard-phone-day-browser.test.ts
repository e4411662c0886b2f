import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { seedLongHistory } from '../helpers/long-lead.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// An operator's day on a phone (390 px) and a desktop (1440 px): rows loaded with Load more stay
// when a lead arrives; "Offline — reconnecting…" is in view however far down the page is
// scrolled; the inbox's cards say which time is which; the lead page's buttons are tap-sized;
// Analytics follows new leads without a reload.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: { email: string; password: string };
let oldestId: string;
const problems: string[] = [];
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1440, height: 900 };

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, 'phone-day');
  // The oldest lead waits for a person, with a conversation long enough to put the composer far down.
  oldestId = (await postLead(app.http, ws.apiKey, validLead({ name: 'Oldest Waiting Lead' }))).body.leadId;
  await seedLongHistory(app.db.pool, oldestId, ws.workspaceId);
  await app.db.pool.query(`UPDATE leads SET status = 'needs_human', last_inbound_at = now() WHERE id = $1`, [oldestId]);
  await app.db.pool.query(`UPDATE leads SET needs_human_since = now() - interval '47 minutes' WHERE id = $1`, [
    oldestId,
  ]);
  for (let i = 1; i < 60; i++) await postLead(app.http, ws.apiKey, validLead({ name: `Day Lead ${i}` }));
  owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function pageAt(viewport: { width: number; height: number }, seen = problems): Promise<Page> {
  const page = await watchedPage(browser, base, seen);
  await page.setViewportSize(viewport);
  await signInAs(page, base, owner.email, owner.password);
  return page;
}
const rows = (page: Page) => page.locator('table.leads tbody tr');
const oldest = (page: Page) => page.getByRole('link', { name: 'Oldest Waiting Lead' });

test('after Load more, a new lead adds a row: the oldest rows stay listed', async () => {
  const page = await pageAt(DESKTOP);
  await page.getByRole('link', { name: 'Day Lead 59', exact: true }).waitFor(WAIT);
  assert.equal(await rows(page).count(), 50);
  await page.getByRole('button', { name: 'Load more' }).click();
  await oldest(page).waitFor(WAIT);
  assert.equal(await rows(page).count(), 60);
  await postLead(app.http, ws.apiKey, validLead({ name: 'Fresh Arrival' }));
  await page.getByRole('link', { name: 'Fresh Arrival' }).waitFor(WAIT);
  assert.equal(await oldest(page).count(), 1, 'the oldest lead is still listed');
  assert.equal(await rows(page).count(), 61);
  assert.deepEqual(problems, []);
  await page.close();
});

test('at 390 px each card says which time is which; the inbox is still a table to a screen reader', async () => {
  const page = await pageAt(PHONE);
  await page.goto(`${base}/admin/${ws.slug}/leads?status=needs_human`);
  await oldest(page).waitFor(WAIT);
  await page.locator('table.leads time.waiting').waitFor(WAIT);
  // A string: the test's TypeScript knows no DOM; the page runs it. The only waiting lead's time cell.
  const label = await page.evaluate<{ content: string; display: string; shown: boolean }>(`(() => {
    const td = document.querySelector('table.leads time.waiting').closest('td');
    const before = getComputedStyle(td, '::before');
    return { content: before.content, display: before.display, shown: td.getBoundingClientRect().width > 0 };
  })()`);
  assert.match(label.content, /Waiting/, `the card's waiting time is labelled: ${JSON.stringify(label)}`);
  assert.ok(label.display !== 'none' && label.shown);
  // Chromium's accessibility tree: column headers and cells, and the label is not said twice.
  const cdp = await page.context().newCDPSession(page);
  const { nodes } = (await cdp.send('Accessibility.getFullAXTree')) as {
    nodes: Array<{ role?: { value: string }; name?: { value: string } }>;
  };
  const named = (role: string) => nodes.filter((n) => n.role?.value === role).map((n) => n.name?.value ?? '');
  assert.ok(named('columnheader').includes('Waiting'), `headers: ${named('columnheader').join(', ')}`);
  const cells = named('cell');
  assert.ok(
    cells.some((c) => /^47 min/.test(c)),
    `a cell reads "47 min…": ${cells.slice(0, 12).join(' | ')}`,
  );
  assert.ok(!cells.some((c) => c.startsWith('Waiting')), 'the visual label is not read out');
  await assertAccessible(page, 'inbox at 390 px');
  assert.deepEqual(problems, []);
  await page.close();
});

test('on the phone lead page the buttons are tap-sized, and Offline shows scrolled down at the composer', async () => {
  const seen: string[] = [];
  const page = await pageAt(PHONE, seen);
  await page.goto(`${base}/admin/${ws.slug}/leads/${oldestId}`);
  const composer = page.locator('form.reply textarea').first();
  await composer.waitFor(WAIT);
  const actions = page.getByRole('region', { name: 'Actions' }).getByRole('button');
  assert.ok((await actions.count()) >= 2);
  for (const button of await actions.all()) {
    const box = (await button.boundingBox())!;
    assert.ok(box.height >= 40, `${await button.textContent()} is ${box.height} px high`);
  }
  const nav = await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link').first().boundingBox();
  assert.ok(nav && nav.height >= 40, `a navigation link is ${nav?.height} px high`);
  await assertAccessible(page, 'lead page at 390 px');

  await composer.scrollIntoViewIfNeeded();
  assert.ok((await page.evaluate<number>('scrollY')) > PHONE.height, 'the composer is below the first screen');
  await page.context().setOffline(true);
  const banner = page.getByRole('status').filter({ hasText: 'Offline — reconnecting…' });
  await banner.waitFor(WAIT);
  const box = (await banner.boundingBox())!;
  assert.ok(box.y >= 0 && box.y + box.height <= PHONE.height, `the banner is at ${box.y} px`);
  await assertAccessible(page, 'lead page offline, scrolled');
  await page.context().setOffline(false);
  await banner.waitFor({ state: 'detached', ...WAIT });
  await page.close();
});

test('Analytics counts a new lead without a reload, and says as of when', async () => {
  const page = await pageAt(PHONE);
  // Sandbox included: the figures count the test's leads whichever mode its key has.
  await page.goto(`${base}/admin/${ws.slug}/analytics?sandbox=true`);
  const leads = (n: number) => page.getByRole('link', { name: `${n} leads: Leads`, exact: true });
  await page.getByRole('heading', { name: 'Funnel' }).waitFor(WAIT);
  const before = Number(await page.getByRole('link', { name: /^\d+ leads: Leads$/ }).textContent());
  assert.ok(before >= 60, `${before} leads`);
  await page.getByText(/As of/).waitFor(WAIT);
  await postLead(app.http, ws.apiKey, validLead({ name: 'Counted Live' }));
  await leads(before + 1).waitFor(WAIT);
  const width = await page.evaluate<number>('document.scrollingElement.scrollWidth');
  assert.ok(width <= PHONE.width, `Analytics is ${width} px wide`);
  await assertAccessible(page, 'analytics at 390 px');
  assert.deepEqual(problems, []);
  await page.close();
});

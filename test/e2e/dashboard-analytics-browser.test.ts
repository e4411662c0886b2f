import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { HISTORY_FROM, HISTORY_TO, seedAnalyticsHistory } from '../helpers/analytics-history.ts';
import { assertAccessible, launchChromium, WAIT, watchedPage, signInAs, screenshotPath } from '../helpers/browser.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The Analytics page in Debian's Chromium, offline, against the real service: a viewer opens it,
// chooses the seeded history's period (test/helpers/analytics-history.ts, Europe/Berlin) and
// reads its funnel in the accessible table; axe-core in light and dark; the docs' screenshot.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, 'analytics');
  await seedAnalyticsHistory(app.db.pool, ws.workspaceId);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const cells = async (page: Page, table: string, step: string) =>
  page
    .getByRole('table', { name: table })
    .getByRole('row', { name: new RegExp(`^${step.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} `) })
    .getByRole('cell')
    .allTextContents();

test("a viewer sees the seeded history's funnel, speed to lead and bookings", async () => {
  const viewer = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }], 'Vera Viewer');
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width: 1280, height: 900 });
  await signInAs(page, base, viewer.email, viewer.password);
  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: 'Analytics' }).click();
  await page.getByRole('heading', { name: 'Analytics', level: 1 }).waitFor(WAIT);
  await page.getByText('Channel: WhatsApp').waitFor(WAIT);

  await page.getByLabel('Period', { exact: true }).selectOption('custom');
  await page.getByLabel('From', { exact: true }).fill(HISTORY_FROM);
  await page.getByLabel('To', { exact: true }).fill(HISTORY_TO);
  await page.getByRole('button', { name: 'Apply' }).click();
  await page
    .getByText(`Leads created from ${HISTORY_FROM} to ${HISTORY_TO} (days in Europe/Berlin), live leads only.`)
    .waitFor(WAIT);

  const funnel = 'Funnel of the period: leads at each step, as a share of all leads and of the step before';
  assert.deepEqual(await cells(page, funnel, 'Leads'), ['6', '100.0 %', '—']);
  assert.deepEqual(await cells(page, funnel, 'Contacted'), ['5', '83.3 %', '83.3 %']);
  assert.deepEqual(await cells(page, funnel, 'Conversation'), ['4', '66.7 %', '80.0 %']);
  assert.deepEqual(await cells(page, funnel, 'Booked'), ['2', '33.3 %', '—']);
  assert.deepEqual(await cells(page, funnel, 'Unqualified'), ['1', '16.7 %', '—']);
  assert.deepEqual(await cells(page, funnel, 'Needs human'), ['1', '16.7 %', '—']);
  // The per-day tables: the lead of 23:30 UTC on the 28th is on Berlin's 29th.
  assert.deepEqual(await cells(page, 'Leads per day by outcome', '2026-03-29'), ['0', '1', '0', '1', '0', '2']);
  assert.deepEqual(await cells(page, 'Speed to lead, leads per bucket', '10 s – 30 s'), ['2']);
  await page.getByText('20 s', { exact: true }).first().waitFor(WAIT); // p50 of 5, 10, 20, 30 and 120 s
  await page.getByText('1.5 h').waitFor(WAIT); // median time to booking: 1 h and 2 h
  // Four charts, and the reach by attempt number (docs/DASHBOARD.md, "Reaching leads").
  assert.equal(await page.locator('canvas[role="img"]').count(), 5);

  // "Show as table" shows the chart's numbers to everyone (screen readers read them either way).
  const figure = page.getByRole('figure', { name: 'Booking rate per day' });
  await figure.getByRole('button', { name: 'Show as table' }).click();
  await figure
    .getByRole('table', { name: 'Booking rate per day' })
    .getByRole('cell', { name: '100.0 %' })
    .first()
    .waitFor(WAIT);
  await assertAccessible(page, 'Analytics page');
  await page.screenshot({ path: screenshotPath('dashboard-analytics.png'), fullPage: true });
  await page.emulateMedia({ colorScheme: 'dark' });
  await assertAccessible(page, 'Analytics page, dark');

  await page.getByLabel('Sandbox', { exact: true }).check();
  await page.getByText(', sandbox leads included.').waitFor(WAIT);
  assert.deepEqual(await cells(page, funnel, 'Leads'), ['7', '100.0 %', '—']);
  assert.deepEqual(problems, []);
});

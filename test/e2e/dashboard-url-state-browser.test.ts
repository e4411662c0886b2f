import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// What a page shows is in its address (web/src/nav.ts): the inbox's tab, search, Sandbox switch,
// sort and filters survive a reload, open the same view from a link in a fresh page (after
// sign-in), and back steps through the views. Links are followed in the page, but a modifier-click
// opens a new tab; a redirect replaces the address it left. Debian's Chromium, offline.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: { email: string; password: string };
const problems: string[] = [];

// name, status, created (UTC noon: the same local day in any workspace time zone), sandbox
const LEADS = [
  ['Ada Booked', 'booked', '2026-05-10', false],
  ['Ada Sandbox', 'booked', '2026-05-11', true],
  ['Ben Booked', 'booked', '2026-05-12', false],
  ['Ada Human', 'needs_human', '2026-05-13', false],
  ['Ada Old', 'booked', '2026-04-01', false],
] as const;

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, `url-state-${process.pid}`);
  for (const [name, status, day, sandbox] of LEADS) {
    const r = await postLead(app.http, sandbox ? ws.sandboxKey : ws.apiKey, validLead({ name }));
    assert.equal(r.status, 201, JSON.stringify(r.body));
    const at = `${day}T12:00:00Z`;
    await app.db.pool.query('UPDATE leads SET status = $2, created_at = $3, updated_at = $3 WHERE id = $1', [
      r.body.leadId,
      status,
      at,
    ]);
  }
  owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const leadNames = async (page: Page) =>
  (
    await page
      .getByRole('table', { name: /^Leads/ })
      .locator('tbody td:first-child a')
      .allTextContents()
  ).sort();

/** Waits until the list shows exactly `names` (it refetches after each change of the view). */
async function expectLeads(page: Page, names: string[]): Promise<void> {
  const want = JSON.stringify([...names].sort());
  // A string: the test's TypeScript knows no DOM; the page runs it.
  await page
    .waitForFunction(
      "JSON.stringify([...document.querySelectorAll('main table tbody td:first-child a')]" +
        `.map((a) => a.textContent).sort()) === ${JSON.stringify(want)}`,
      undefined,
      WAIT,
    )
    .catch(async () => assert.deepEqual(await leadNames(page), [...names].sort()));
}

/** The view's controls: tab pressed, search, Sandbox switch, sort, the filter summary. */
async function view(page: Page) {
  return {
    tab: (await page.getByRole('navigation', { name: 'Lead status' }).locator('[aria-pressed="true"]').textContent())
      ?.replace(/\s*\d+\+?$/, '')
      .trim(),
    search: await page.getByRole('searchbox', { name: 'Search leads' }).inputValue(),
    sandbox: await page.getByRole('checkbox', { name: 'Sandbox' }).isChecked(),
    sort: await page.getByLabel('Sort').inputValue(),
    summary: (await page.locator('.filter-summary').count())
      ? await page.locator('.filter-summary').textContent()
      : null,
  };
}

const MAY = 'from=2026-05-01&to=2026-05-31';
const FILTERED = {
  tab: 'Booked',
  search: 'Ada',
  sandbox: true,
  sort: 'activity',
  summary: 'Showing leads created 2026-05-01 to 2026-05-31. Show all leads',
};

test(
  'the inbox view survives a reload, ' + 'opens from its link in a fresh page, and back restores the views before',
  async () => {
    const page = await watchedPage(browser, base, problems);
    await signInAs(page, base, owner.email, owner.password);
    // The filters as a link from the Analytics page brings them.
    await page.goto(`${base}/admin/${ws.slug}/leads?${MAY}`);
    await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Human']);
    await page.getByRole('button', { name: /^Booked/ }).click();
    await expectLeads(page, ['Ada Booked', 'Ben Booked']);
    const search = page.getByRole('searchbox', { name: 'Search leads' });
    await search.pressSequentially('Ada');
    await expectLeads(page, ['Ada Booked']);
    await page.getByRole('checkbox', { name: 'Sandbox' }).check();
    await expectLeads(page, ['Ada Booked', 'Ada Sandbox']);
    await page.getByLabel('Sort').selectOption('activity');
    await page.waitForURL(/sort=activity/, WAIT);
    const url = new URL(page.url());
    assert.deepEqual(Object.fromEntries(url.searchParams), {
      from: '2026-05-01',
      to: '2026-05-31',
      status: 'booked',
      q: 'Ada',
      sandbox: 'true',
      sort: 'activity',
    });

    await page.reload();
    await expectLeads(page, ['Ada Booked', 'Ada Sandbox']);
    assert.deepEqual(await view(page), FILTERED);

    // A teammate opening the link signs in first and sees the same view.
    const fresh = await watchedPage(browser, base, problems);
    await fresh.goto(url.toString());
    await fresh.getByLabel('E-mail').fill(owner.email);
    await fresh.getByLabel('Password').fill(owner.password);
    await fresh.getByRole('button', { name: 'Sign in' }).click();
    await expectLeads(fresh, ['Ada Booked', 'Ada Sandbox']);
    assert.deepEqual(await view(fresh), FILTERED);
    assert.equal(fresh.url(), url.toString());
    await fresh.close();

    // Back: one step per choice, and the whole search as one step.
    await page.goBack();
    await page.waitForURL((u) => !u.searchParams.has('sort'), WAIT);
    assert.deepEqual(await view(page), { ...FILTERED, sort: 'newest' });
    await page.goBack();
    await expectLeads(page, ['Ada Booked']);
    assert.deepEqual(await view(page), { ...FILTERED, sort: 'newest', sandbox: false });
    await page.goBack();
    await expectLeads(page, ['Ada Booked', 'Ben Booked']);
    assert.deepEqual(await view(page), { ...FILTERED, sort: 'newest', sandbox: false, search: '' });
    await page.goBack();
    await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Human']);
    assert.equal((await view(page)).tab, 'All');
    // Forward again, then "Show all leads" is a step of its own too.
    await page.goForward();
    await expectLeads(page, ['Ada Booked', 'Ben Booked']);
    await page.getByRole('button', { name: 'Show all leads' }).click();
    await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Old']);
    assert.equal(new URL(page.url()).search, '?status=booked');
    await page.goBack();
    await expectLeads(page, ['Ada Booked', 'Ben Booked']);
    await page.close();
    assert.deepEqual(problems, []);
  },
);

test('a lead link opens in the page; with Ctrl or Cmd it opens a new tab and the inbox stays', async () => {
  const page = await watchedPage(browser, base, problems);
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/leads?status=needs_human`);
  const link = page.getByRole('link', { name: 'Ada Human' });
  await link.waitFor(WAIT);
  const [tab] = await Promise.all([
    page.context().waitForEvent('page', WAIT),
    link.click({ modifiers: ['ControlOrMeta'] }),
  ]);
  await tab.waitForLoadState();
  assert.match(tab.url(), new RegExp(`/admin/${ws.slug}/leads/[0-9a-f-]{36}$`));
  assert.equal(new URL(page.url()).search, '?status=needs_human');
  await tab.close();

  // A plain click: the lead's page without a reload (the marker set on the window survives).
  await page.evaluate('window.sameDocument = true');
  await link.click();
  await page.getByRole('heading', { name: /Ada Human/, level: 1 }).waitFor(WAIT);
  assert.equal(await page.evaluate('window.sameDocument'), true);
  await page.goBack();
  await expectLeads(page, ['Ada Human']);
  await page.close();
  assert.deepEqual(problems, []);
});

test('an address the operator cannot open is replaced by the inbox: back returns to the view before it', async () => {
  const page = await watchedPage(browser, base, problems);
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/leads?status=booked`);
  await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Old']);
  await page.goto(`${base}/admin/${ws.slug}/no-such-page`);
  await page.waitForURL(`${base}/admin/${ws.slug}/leads`, WAIT);
  await page.goBack();
  await page.waitForURL(`${base}/admin/${ws.slug}/leads?status=booked`, WAIT);
  await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Old']);
  await page.close();
  assert.deepEqual(problems, []);
});

test('the Analytics period and the Logs filters are in the address too', async () => {
  const page = await watchedPage(browser, base, problems);
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/analytics`);
  await page.getByLabel('Period', { exact: true }).selectOption('custom');
  await page.getByLabel('From', { exact: true }).fill('2026-05-01');
  await page.getByLabel('To', { exact: true }).fill('2026-05-31');
  await page.getByRole('button', { name: 'Apply' }).click();
  await page.getByText('Leads created from 2026-05-01 to 2026-05-31').waitFor(WAIT);
  await page.getByRole('checkbox', { name: 'Sandbox' }).check();
  await page.getByText('sandbox leads included').waitFor(WAIT);
  await page.reload();
  await page.getByText('Leads created from 2026-05-01 to 2026-05-31 (days in').waitFor(WAIT);
  await page.getByText('sandbox leads included').waitFor(WAIT);
  assert.equal(await page.getByLabel('Period', { exact: true }).inputValue(), 'custom');
  assert.equal(await page.getByLabel('From', { exact: true }).inputValue(), '2026-05-01');
  await page.goBack();
  await page.getByText('live leads only').waitFor(WAIT);

  await page.goto(`${base}/admin/${ws.slug}/logs`);
  await page.getByLabel('Provider').selectOption('twilio');
  await page.getByRole('checkbox', { name: 'Errors only' }).check();
  await page.waitForURL(/errors=true/, WAIT);
  await page.reload();
  await page.getByRole('heading', { name: 'Integration log' }).waitFor(WAIT);
  assert.equal(await page.getByLabel('Provider').inputValue(), 'twilio');
  assert.equal(await page.getByRole('checkbox', { name: 'Errors only' }).isChecked(), true);
  await page.close();
  assert.deepEqual(problems, []);
});

test('the Source select is kept in the address, reaches the CSV link, and the lead page says the source', async () => {
  await app.db.pool.query(
    `UPDATE leads SET source = 'meta', source_detail = '{"adId": "123", "formId": "456"}'
      WHERE workspace_id = $1 AND name = 'Ben Booked'`,
    [ws.workspaceId],
  );
  const page = await watchedPage(browser, base, problems);
  await signInAs(page, base, owner.email, owner.password);
  await page.goto(`${base}/admin/${ws.slug}/leads?status=booked`);
  await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Old']);
  await page.getByLabel('Source').selectOption('meta');
  await expectLeads(page, ['Ben Booked']);
  assert.equal(new URL(page.url()).search, '?status=booked&source=meta');
  await page.reload();
  await expectLeads(page, ['Ben Booked']);
  assert.equal(await page.getByLabel('Source').inputValue(), 'meta');
  assert.match((await page.getByRole('link', { name: 'Export CSV' }).getAttribute('href')) ?? '', /source=meta/);
  await page.getByRole('link', { name: 'Ben Booked' }).click();
  await page.getByText('Meta Lead Ads (ad 123, form 456)').waitFor(WAIT);
  await page.goBack();
  await page.getByRole('button', { name: 'Show all leads' }).click();
  await expectLeads(page, ['Ada Booked', 'Ben Booked', 'Ada Old']);
  assert.equal(await page.getByLabel('Source').inputValue(), '');
  await page.close();
  assert.deepEqual(problems, []);
});

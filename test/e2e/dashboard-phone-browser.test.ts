import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { seedLongHistory } from '../helpers/long-lead.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The dashboard on a phone (390 px) and on a desktop (1440 px): every page of an owner fits the
// screen's width at 390 px with navigation and Sign out in reach and axe-core clean; the lead
// page of a conversation of a thousand messages keeps its composer in reach — in view without
// scrolling at 1440 px — and loads older messages on demand.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: { email: string; password: string };
let leadId: string;
const problems: string[] = [];
const PHONE = { width: 390, height: 844 };
const DESKTOP = { width: 1440, height: 900 };

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, 'phone-shop');
  const created = await postLead(
    app.http,
    ws.apiKey,
    validLead({ name: 'Wolfeschlegelsteinhausenbergerdorff Maximiliana Long', email: 'maximiliana.long@example.com' }),
  );
  leadId = created.body.leadId;
  await seedLongHistory(app.db.pool, leadId, ws.workspaceId);
  // Waiting for a person: the composer is offered.
  await app.db.pool.query(`UPDATE leads SET status = 'needs_human', last_inbound_at = now() WHERE id = $1`, [leadId]);
  for (let i = 0; i < 3; i++) await postLead(app.http, ws.apiKey, validLead({ name: `Short Lead ${i}` }));
  owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function pageAt(viewport: { width: number; height: number }): Promise<Page> {
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize(viewport);
  await signInAs(page, base, owner.email, owner.password);
  return page;
}

const scrollWidth = (page: Page) => page.evaluate<number>('document.scrollingElement.scrollWidth');
/** The innermost elements that reach past the window's right edge, for the failure message. */
const widest = (page: Page) =>
  page.evaluate<string[]>(`[...document.querySelectorAll('body *')]
  .filter((e) => e.getBoundingClientRect().right > innerWidth + 0.5
    && ![...e.children].some((c) => c.getBoundingClientRect().right > innerWidth + 0.5))
  .slice(0, 8).map((e) => e.tagName.toLowerCase() + (e.className ? '.' + String(e.className).split(' ').join('.') : '')
    + ' ' + Math.round(e.getBoundingClientRect().right))`);
/** The composer: the reply form's text field. */
const composer = (page: Page) => page.locator('form.reply textarea').first();

test('at 390 px every dashboard page fits the screen, navigation and Sign out in reach, axe-core clean', async () => {
  const page = await pageAt(PHONE);
  await page.getByRole('link', { name: 'Wolfeschlegelsteinhausenbergerdorff' }).waitFor(WAIT);
  const paths = [
    'leads',
    'analytics',
    'logs',
    'form',
    'agent',
    'providers',
    'keys',
    'webhooks',
    'team',
    `leads/${leadId}`,
  ];
  const nav = page.getByRole('navigation', { name: 'Workspace' });
  const tooWide: string[] = [];
  for (const path of paths) {
    await page.goto(`${base}/admin/${ws.slug}/${path}`);
    await page.getByRole('heading', { level: 1 }).first().waitFor(WAIT);
    // Each page says Loading… until its data is in (the event stream never lets the network idle).
    await page
      .waitForFunction('!document.querySelector(".loading")', undefined, WAIT)
      .catch((e: Error) => assert.fail(`/${path} still loading: ${e.message}`));
    const width = await scrollWidth(page);
    if (width > PHONE.width) tooWide.push(`/${path} is ${width} px wide: ${await widest(page)}`);
    for (const link of ['Leads', 'Team']) {
      const box = await nav.getByRole('link', { name: link, exact: true }).boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, `${link} on screen on /${path}`);
    }
    const signOut = await page.getByRole('button', { name: 'Sign out' }).boundingBox();
    assert.ok(signOut && signOut.x + signOut.width <= PHONE.width, `Sign out on screen on /${path}`);
    await assertAccessible(page, `/${path} at 390 px`);
  }
  assert.deepEqual(tooWide, []);
  // The inbox at 390 px: each lead's status is on screen.
  await page.goto(`${base}/admin/${ws.slug}/leads`);
  const row = page.getByRole('row').filter({ hasText: 'Wolfeschlegelsteinhausenbergerdorff' });
  const badge = await row.getByText('Needs a person').or(row.locator('.badge-needs_human')).first().boundingBox();
  assert.ok(badge && badge.x >= 0 && badge.x + badge.width <= PHONE.width, 'the Status is on screen');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a thousand messages: composer in view at 1440 px, in reach at 390 px, older messages on demand', async () => {
  const desktop = await pageAt(DESKTOP);
  await desktop.goto(`${base}/admin/${ws.slug}/leads/${leadId}`);
  await composer(desktop)
    .waitFor(WAIT)
    .catch(async (e: Error) =>
      assert.fail(
        `no composer (${e.message}); problems: ${problems.join(', ')}; ` +
          `page: ${(await desktop.textContent('main'))?.slice(0, 600)}`,
      ),
    );
  const box = await composer(desktop).boundingBox();
  assert.ok(
    box && box.y >= 0 && box.y + box.height <= DESKTOP.height,
    `the composer is at ${box?.y} px in a ${DESKTOP.height} px window`,
  );
  assert.ok((await scrollWidth(desktop)) <= DESKTOP.width);
  const thread = desktop.getByRole('region', { name: 'Messages' });
  assert.equal(await thread.getByRole('listitem').count(), 50);
  await thread.getByText('The latest 50 messages.').waitFor(WAIT);
  await thread.getByRole('button', { name: 'Load older messages' }).click();
  await thread.getByText('The latest 100 messages.').waitFor(WAIT);
  assert.equal(await thread.getByRole('listitem').count(), 100);
  await assertAccessible(desktop, 'long lead page at 1440 px');
  // The provider traffic is fetched when its section is opened.
  await desktop.getByText('Provider traffic').click();
  await desktop.getByRole('button', { name: 'Load older traffic' }).waitFor(WAIT);
  await assertAccessible(desktop, 'provider traffic opened');
  await desktop.close();

  const phone = await pageAt(PHONE);
  await phone.goto(`${base}/admin/${ws.slug}/leads/${leadId}`);
  await composer(phone).waitFor(WAIT);
  // The page has not scrolled: the box's top is the composer's distance from the top of the page.
  const top = (await composer(phone).boundingBox())!.y + (await phone.evaluate<number>('scrollY'));
  assert.ok(top < 4 * PHONE.height, `the composer is ${top} px down the page at 390 px`);
  await composer(phone).scrollIntoViewIfNeeded();
  await composer(phone).fill('On my way');
  assert.ok((await scrollWidth(phone)) <= PHONE.width);
  assert.deepEqual(problems, []);
  await phone.close();
});

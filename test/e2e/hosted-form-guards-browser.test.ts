import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { HONEYPOT_FIELD } from '../../src/forms/form-abuse.ts';
import { FormSettingsService } from '../../src/forms/form-settings-service.ts';
import { DEMO_AGENT } from '../../src/sandbox/demo-workspaces.ts';
import { assertAccessible, launchChromium, WAIT } from '../helpers/browser.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startListeningApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The hosted form's abuse guards in Debian's Chromium (the API tests are test/api/hosted-form-abuse.test.ts):
// the honeypot is out of a person's reach and a bot that fills it is thanked with nothing stored; over
// the workspace's hourly limit the next submission is the friendly 429 page, axe-core clean. The
// minimum fill time is passed by moving the app's clock, never by waiting.

let app: TestApp;
let browser: Browser;
let base: string;
const clock = new TestClock();

before(async () => {
  ({ app, base } = await startListeningApp({ clock }));
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const leadCount = async (workspaceId: string) =>
  (await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1', [workspaceId])).rows[0].n;

async function fill(page: Page): Promise<void> {
  await page.getByLabel('Your name').fill('Ada Lovelace');
  await page.getByLabel('Phone number').fill(uniquePhone());
  await page.getByLabel('Do you own the property?').selectOption('Yes');
  await page.getByLabel('Monthly electricity bill (EUR)').fill('120');
  await page.getByRole('checkbox').check();
}

/** Opens the form, fills it as a person would, moves the clock past the minimum fill time. */
async function openAndFill(page: Page, slug: string): Promise<void> {
  await page.goto(`${base}/forms/${slug}`);
  await page.locator('form[novalidate]').waitFor(WAIT);
  await fill(page);
  clock.advance(5_000);
}

/** Sends the form; the status of the POST's answer. */
async function send(page: Page): Promise<number> {
  const answer = page.waitForResponse((r) => r.request().method() === 'POST', WAIT);
  await page.getByRole('button', { name: 'Send' }).click();
  return (await answer).status();
}

test(
  'the honeypot is off-screen, out of the tab order and the accessibility tree; ' +
    'a bot filling it is thanked, nothing stored',
  async () => {
    const { slug, workspaceId } = await app.createWorkspace('whatsapp', { agent: DEMO_AGENT });
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(`${base}/forms/${slug}`);
    await page.getByRole('button', { name: 'Send' }).waitFor(WAIT);
    const trap = page.locator(`#f-${HONEYPOT_FIELD}`);
    assert.equal(await trap.count(), 1);
    // Off-screen (not display:none, which some bots skip): wholly left of the page.
    const box = await trap.boundingBox();
    assert.ok(box && box.x + box.width <= 0, `honeypot box ${JSON.stringify(box)}`);
    assert.equal(await trap.getAttribute('tabindex'), '-1');
    assert.equal(await page.locator('.hp').getAttribute('aria-hidden'), 'true');
    // getByRole reads the accessibility tree: the trap's label is not in it.
    assert.equal(await page.getByRole('textbox', { name: 'Leave this field empty' }).count(), 0);
    // Tab from the top of the page to the Send button: every stop but the honeypot.
    const stops: string[] = [];
    for (let i = 0; i < 20; i++) {
      await page.keyboard.press('Tab');
      const stop = await page.evaluate<string>('document.activeElement.id || document.activeElement.tagName');
      stops.push(stop);
      if (stop === 'BUTTON') break;
    }
    assert.equal(stops.at(-1), 'BUTTON', `tab stops: ${stops.join(', ')}`);
    assert.ok(stops.includes('f-name') && stops.includes('f-consent'), `tab stops: ${stops.join(', ')}`);
    assert.ok(!stops.includes(`f-${HONEYPOT_FIELD}`), `tab stops: ${stops.join(', ')}`);

    // A bot: everything valid, and the hidden field filled by script.
    await fill(page);
    await page.evaluate(`document.getElementById('f-${HONEYPOT_FIELD}').value = 'http://spam.example'`);
    clock.advance(5_000);
    assert.equal(await send(page), 200);
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor(WAIT);
    assert.equal(await leadCount(workspaceId), 0);
    await page.close();
  },
);

test("over the workspace's hourly limit: the friendly 429 page, axe-core clean", async () => {
  const { slug, workspaceId } = await app.createWorkspace('whatsapp', { agent: DEMO_AGENT });
  const forms = new FormSettingsService(app.db.pool, app.secrets);
  await forms.save((await app.workspaces.findBySlug(slug))!, { hourlyLimit: 2 });
  // bypassCSP: only so axe-core can be injected; the page's own code runs under the CSP regardless.
  const page = await browser.newPage({ viewport: { width: 390, height: 844 }, bypassCSP: true });
  for (let i = 0; i < 2; i++) {
    await openAndFill(page, slug);
    assert.equal(await send(page), 200, `submission ${i + 1}`);
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor(WAIT);
  }
  assert.equal(await leadCount(workspaceId), 2);
  await openAndFill(page, slug);
  assert.equal(await send(page), 429);
  await page.getByRole('heading', { name: 'Please try again later' }).waitFor(WAIT);
  assert.match((await page.getByRole('status').textContent()) ?? '', /many requests in the last hour/);
  assert.equal(await leadCount(workspaceId), 2);
  await assertAccessible(page, 'the 429 page');
  await page.close();
});

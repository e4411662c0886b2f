import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { DEMO_AGENT } from '../../src/sandbox/demo-workspaces.ts';
import { assertAccessible, launchChromium, WAIT, watchedPage } from '../helpers/browser.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startListeningApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The hosted form in Debian's Chromium: submitted with JavaScript (under the page's real CSP) and
// without; the errors next to their fields; consent required; axe-core clean; screenshots at
// 390 px and 1440 px in this test's temp folder.

let app: TestApp;
let browser: Browser;
let base: string;
let slug: string;
let workspaceId: string;
const clock = new TestClock();
const shots = fs.mkdtempSync(path.join(os.tmpdir(), 'hosted-form-'));
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp({ clock }));
  ({ slug, workspaceId } = await app.createWorkspace('whatsapp', { agent: DEMO_AGENT }));
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const leadCount = async () =>
  (await app.db.pool.query('SELECT count(*)::int AS n FROM leads WHERE workspace_id = $1', [workspaceId])).rows[0].n;

async function fill(page: Page, phone: string): Promise<void> {
  await page.getByLabel('Your name').fill('Ada Lovelace');
  await page.getByLabel('Phone number').fill(phone);
  await page.getByRole('textbox', { name: 'E-mail (optional)' }).fill('ada@example.com');
  await page.getByLabel('Do you own the property?').selectOption('Yes');
  await page.getByLabel('Monthly electricity bill (EUR)').fill('120');
}

test(
  'with JavaScript, under the CSP: ' + 'errors next to their fields before sending, consent required, then thanks',
  async () => {
    // No bypassCSP here: the page's own policy applies, so an inline script or style would fail.
    const context = await browser.newContext({ viewport: { width: 390, height: 844 } });
    const page = await context.newPage();
    const errors: string[] = [];
    // A CSP violation is a console error ("Refused to …"); a failed file, a response ≥ 400 (the
    // browser's own favicon request aside: the form has none).
    page.on('console', (m) => {
      if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) errors.push(m.text());
    });
    page.on('response', (r) => {
      if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`${r.status()} ${r.url()}`);
    });
    page.on('pageerror', (e) => errors.push(e.message));
    await page.goto(`${base}/forms/${slug}`);
    // form.js ran: it turns the browser's bubbles into our messages.
    await page.locator('form[novalidate]').waitFor(WAIT);
    await page.getByRole('button', { name: 'Send' }).click();
    const nameField = page.getByLabel('Your name');
    assert.equal(await nameField.getAttribute('aria-invalid'), 'true');
    assert.equal(await page.locator('#f-name-error').textContent(), 'This field is required.');
    assert.equal(
      await page.locator('#f-consent-error').textContent(),
      'Please agree to be contacted, so that we can answer you.',
    );
    assert.equal(await page.evaluate('document.activeElement.id'), 'f-name');
    await fill(page, uniquePhone());
    await page.getByRole('button', { name: 'Send' }).click();
    // Everything but consent: still not sent.
    assert.equal(
      await page.locator('#f-consent-error').textContent(),
      'Please agree to be contacted, so that we can answer you.',
    );
    assert.equal(await leadCount(), 0);
    await page.getByRole('checkbox').check();
    clock.advance(5_000);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor(WAIT);
    assert.equal(await leadCount(), 1);
    assert.deepEqual(errors, []);
    await context.close();
  },
);

test('without JavaScript: the server renders the errors next to their fields, then the thank-you page', async () => {
  const context = await browser.newContext({ javaScriptEnabled: false, viewport: { width: 390, height: 844 } });
  const page = await context.newPage();
  await page.goto(`${base}/forms/${slug}`);
  assert.equal(await page.locator('form[novalidate]').count(), 0);
  await fill(page, '12');
  await page.getByRole('checkbox').check();
  clock.advance(5_000);
  await page.getByRole('button', { name: 'Send' }).click();
  const phone = page.getByLabel('Phone number');
  await page.locator('#f-phone-error').waitFor(WAIT);
  assert.equal(await page.locator('#f-phone-error').textContent(), 'Phone must be a valid E.164-style number.');
  assert.match((await phone.getAttribute('aria-describedby')) ?? '', /f-phone-error/);
  assert.equal(await phone.inputValue(), '12');
  assert.equal(await page.getByLabel('Your name').inputValue(), 'Ada Lovelace');
  await phone.fill(uniquePhone());
  clock.advance(5_000);
  await page.getByRole('button', { name: 'Send' }).click();
  await page.getByRole('heading', { name: 'Thank you!' }).waitFor(WAIT);
  assert.equal(await leadCount(), 2);
  await context.close();
});

for (const width of [390, 1440]) {
  test(`${width} px: the form, its errors and the thank-you page are axe-core clean; screenshots`, async () => {
    const page = await watchedPage(browser, base, problems);
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${base}/forms/${slug}`);
    await page.getByRole('button', { name: 'Send' }).waitFor(WAIT);
    await assertAccessible(page, `form at ${width} px`);
    await page.screenshot({ path: path.join(shots, `form-${width}.png`), fullPage: true });
    await page.getByRole('button', { name: 'Send' }).click();
    await page.locator('#f-name-error:not(:empty)').waitFor(WAIT);
    await assertAccessible(page, `form with errors at ${width} px`);
    await page.screenshot({ path: path.join(shots, `form-errors-${width}.png`), fullPage: true });
    await fill(page, uniquePhone());
    await page.getByRole('checkbox').check();
    clock.advance(5_000);
    await page.getByRole('button', { name: 'Send' }).click();
    await page.getByRole('heading', { name: 'Thank you!' }).waitFor(WAIT);
    await assertAccessible(page, `thank-you page at ${width} px`);
    await page.screenshot({ path: path.join(shots, `thanks-${width}.png`), fullPage: true });
    assert.deepEqual(problems, []);
    assert.ok(fs.statSync(path.join(shots, `form-${width}.png`)).size > 0);
    await page.close();
  });
}

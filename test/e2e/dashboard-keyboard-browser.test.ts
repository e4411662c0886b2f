import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';
import { postLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The dashboard by keyboard alone, at 1440 px: the skip link, focus on the new page's heading
// after a navigation, and the shortcuts (j/k in the inbox, t and r on a lead's page, ? lists
// them), which never fire while typing, can be turned off, and whose list is a proper dialog.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, 'keys-co');
  const leads = [
    ['Kim First', '+1 555 020 0001'],
    ['Lee Second', '+1 555 020 0002'],
    ['Max Third', '+1 555 020 0003'],
  ];
  for (const [name, phone] of leads) {
    assert.equal((await postLead(app.http, ws.apiKey, { name, phone, consent: true })).status, 201);
  }
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

async function signedInPage(): Promise<Page> {
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'admin' }]);
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signInAs(page, base, op.email, op.password);
  await page.getByRole('link', { name: 'Max Third' }).waitFor(WAIT);
  return page;
}

/** The accessible name of the focused element (or its text). */
const focused = (page: Page) =>
  page.evaluate(`(() => {
  const el = document.activeElement;
  if (!el) return '';
  return (el.getAttribute('aria-label') || el.textContent || '').trim() + ' <' + el.tagName.toLowerCase() + '>';
})()`) as Promise<string>;

test('the skip link comes first and moves focus to the heading; a navigation focuses the new heading', async () => {
  const page = await signedInPage();
  // A page load starts at the top.
  await page.goto(`${base}/admin/keys-co/leads`);
  await page.getByRole('link', { name: 'Max Third' }).waitFor(WAIT);
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'Skip to content <a>');
  assert.ok(await page.getByRole('link', { name: 'Skip to content' }).isVisible(), 'visible when focused');
  await assertAccessible(page, 'inbox with the skip link focused');
  await page.keyboard.press('Enter');
  assert.equal(await focused(page), 'Leads <h1>');

  // The lead's link, by keyboard: its page opens with focus on its heading.
  await page.keyboard.press('j');
  assert.equal(await focused(page), 'Max Third <a>');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: /Max Third/ }).waitFor(WAIT);
  await page.waitForFunction(`document.activeElement && document.activeElement.tagName === 'H1'`, undefined, WAIT);
  assert.match(await focused(page), /^Max Third.*<h1>$/);
  // Back to the inbox by its link: the inbox's heading.
  await page.getByRole('link', { name: '← Leads' }).focus();
  await page.keyboard.press('Enter');
  await page.waitForFunction(`document.activeElement?.textContent === 'Leads'`, undefined, WAIT);
  assert.deepEqual(problems, []);
  await page.close();
});

test('j/k move through the inbox, ? opens the list as a modal dialog, and nothing fires while typing', async () => {
  const page = await signedInPage();
  // Newest first: Max, Lee, Kim.
  await page.keyboard.press('j');
  assert.equal(await focused(page), 'Max Third <a>');
  await page.keyboard.press('j');
  assert.equal(await focused(page), 'Lee Second <a>');
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  assert.equal(await focused(page), 'Kim First <a>', 'stops at the last lead');
  await page.keyboard.press('k');
  assert.equal(await focused(page), 'Lee Second <a>');

  // Typed into the search box, the keys are text, not shortcuts.
  await page.getByLabel('Search leads').focus();
  await page.keyboard.type('jk?');
  assert.equal(await page.getByLabel('Search leads').inputValue(), 'jk?');
  assert.equal(await page.getByRole('dialog').count(), 0);
  assert.equal(await focused(page), ' <input>');
  await page.getByLabel('Search leads').fill('');

  await page.getByRole('heading', { name: 'Leads' }).click();
  await page.keyboard.press('?');
  const dialog = page.getByRole('dialog', { name: 'Keyboard shortcuts' });
  await dialog.waitFor(WAIT);
  assert.equal(await focused(page), 'Close <button>', 'focus moves into the dialog');
  assert.ok(await dialog.getByText('Next lead (inbox)').isVisible());
  await assertAccessible(page, 'shortcuts dialog');
  // Modal: the inbox's keys do nothing while it is open.
  await page.keyboard.press('j');
  assert.equal(await focused(page), 'Close <button>');
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  // Focus goes back where it was (the dialog's close event comes a moment after it is hidden).
  await page.waitForFunction('document.activeElement?.textContent === "Leads"', undefined, WAIT);

  // Turned off in the dialog (opened from the footer's button), the single keys do nothing.
  await page.getByRole('button', { name: 'Keyboard shortcuts' }).focus();
  await page.keyboard.press('Enter');
  await dialog.getByLabel('Single-key shortcuts on').uncheck();
  await dialog.getByRole('button', { name: 'Close' }).press('Enter');
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  await page.getByRole('heading', { name: 'Leads' }).click();
  await page.keyboard.press('j');
  assert.notEqual(await focused(page), 'Max Third <a>');
  await page.keyboard.press('?');
  assert.equal(await dialog.isVisible(), false);
  // On again (the choice is kept for the next page).
  await page.getByRole('button', { name: 'Keyboard shortcuts' }).click();
  await dialog.getByLabel('Single-key shortcuts on').check();
  await page.keyboard.press('Escape');
  assert.deepEqual(problems, []);
  await page.close();
});

test("on a lead's page, t takes over and r goes to the reply box, where the keys are typed as text", async () => {
  const page = await signedInPage();
  await page.keyboard.press('j');
  await page.keyboard.press('j');
  assert.equal(await focused(page), 'Lee Second <a>');
  await page.keyboard.press('Enter');
  await page.getByRole('heading', { level: 1, name: /Lee Second/ }).waitFor(WAIT);
  await page.getByRole('button', { name: 'Take over' }).waitFor(WAIT);
  // Behind the open list of shortcuts, t does nothing.
  await page.keyboard.press('?');
  await page.getByRole('dialog', { name: 'Keyboard shortcuts' }).waitFor(WAIT);
  await page.keyboard.press('t');
  await page.keyboard.press('Escape');
  assert.equal(
    await page
      .getByRole('status')
      .filter({ hasText: /^Taken over/ })
      .count(),
    0,
  );
  await page.keyboard.press('t');
  await page
    .getByRole('status')
    .filter({ hasText: /^Taken over/ })
    .waitFor(WAIT);
  const box = page.getByRole('textbox', { name: 'Message' });
  await box.waitFor(WAIT);
  await page.getByRole('heading', { level: 1, name: /Lee Second/ }).click();
  await page.keyboard.press('r');
  assert.equal(await focused(page), ' <textarea>');
  assert.equal(await box.inputValue(), '', 'r only moves to the box');
  await page.keyboard.type('try this');
  assert.equal(await box.inputValue(), 'try this');
  await assertAccessible(page, 'lead page after t and r');
  assert.deepEqual(problems, []);
  await page.close();
});

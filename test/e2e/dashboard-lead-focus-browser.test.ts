import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Page } from 'playwright-core';
import { startLeadPageSetup, type LeadPageSetup } from '../helpers/lead-page-setup.ts';
import { assertAccessible, WAIT } from '../helpers/browser.ts';

// The lead page's actions by keyboard keep the focus (docs/DASHBOARD.md, "Accessibility"): the
// pressed button is gone once the page reloads (or disabled while busy), so focus moves to the
// action's notice, to the emptied reply box after Reply, or to the error when the action fails;
// never back to the top of the page.

let s: LeadPageSetup;
let base: string;
let problems: string[];

before(async () => {
  s = await startLeadPageSetup('focus');
  ({ base, problems } = s);
});
after(() => s.close());

const lead = (name: string, phone: string) => s.lead(name, phone);
const status = (id: string) => s.status(id);
const until = (check: () => Promise<boolean>) => s.until(check);
async function leadPage(id: string): Promise<Page> {
  const page = await s.signedIn();
  await page.goto(`${base}/admin/focus/leads/${id}`);
  return page;
}

/** The focused element: its role (or tag) and text, e.g. `status: Outcome set: booked.` */
const focused = (page: Page) =>
  page.evaluate(`(() => {
  const el = document.activeElement;
  if (!el || el === document.body) return 'BODY';
  const text = el.tagName === 'TEXTAREA' ? el.value : el.textContent;
  return (el.getAttribute('role') || el.tagName.toLowerCase()) + ': ' + text.trim();
})()`) as Promise<string>;

/** Presses Enter on `name`'s button, as a keyboard user does. */
async function press(page: Page, name: string): Promise<void> {
  const button = page.getByRole('button', { name, exact: true });
  await button.focus();
  await page.keyboard.press('Enter');
}

test('Take over, Reply, Resume AI and Set outcome by keyboard: focus on the notice or the reply box', async () => {
  problems.length = 0;
  const id = await lead('Ada Booker', '+1 555 016 0001');
  await until(async () => (await status(id)) === 'booked');
  const page = await leadPage(id);
  await page.locator('h1').getByText('Booked').waitFor(WAIT);

  await press(page, 'Take over');
  // Waited for until the page has reloaded: the button pressed is gone by then.
  await page.getByRole('button', { name: 'Resume AI' }).waitFor(WAIT);
  assert.equal(await focused(page), 'status: Taken over: the lead stays booked.');

  const box = page.getByRole('textbox', { name: 'Message' });
  await box.fill('Sam here: see you Tuesday.');
  await press(page, 'Reply');
  await page.locator('.bubble.outbound').filter({ hasText: 'Sam here: see you Tuesday.' }).waitFor(WAIT);
  await page.getByRole('status').filter({ hasText: 'Reply queued.' }).waitFor(WAIT);
  assert.equal(await focused(page), 'textarea: ', 'back in the emptied reply box');

  await press(page, 'Resume AI');
  await page.getByRole('button', { name: 'Take over' }).waitFor(WAIT);
  assert.equal(await focused(page), 'status: Handed back: the lead stays booked.');
  await assertAccessible(page, 'lead page after keyboard actions');

  const quiet = await lead('Quinn Quiet', '+1 555 016 0004');
  await until(async () => (await status(quiet)) === 'in_conversation');
  await page.goto(`${base}/admin/focus/leads/${quiet}`);
  await page.getByLabel('Outcome').selectOption('unqualified');
  await page.getByLabel('Note or reason').fill('Rents the house.');
  await press(page, 'Set outcome');
  await page.locator('h1').getByText('Unqualified').waitFor(WAIT);
  assert.equal(await focused(page), 'status: Outcome set: unqualified.');
  await assertAccessible(page, 'lead page after Set outcome');
  assert.deepEqual(problems, []);
});

test('a refused action by keyboard: focus on its error', async () => {
  problems.length = 0;
  const id = await lead('Bea Busy', '+1 555 017 0004');
  await until(async () => (await status(id)) === 'in_conversation');
  const page = await leadPage(id);
  await page.locator('h1').getByText('In conversation').waitFor(WAIT);
  // Someone else took the lead a moment before: the API's 409, as it says it.
  await page.route('**/take-over', (route) =>
    route.fulfill({
      status: 409,
      contentType: 'application/json',
      body: JSON.stringify({ error: 'Conflict', message: 'Taken over by Ada a moment ago.' }),
    }),
  );
  await press(page, 'Take over');
  await page.getByRole('alert').filter({ hasText: 'Taken over by Ada a moment ago.' }).waitFor(WAIT);
  assert.equal(await focused(page), 'alert: Taken over by Ada a moment ago.');
  await assertAccessible(page, 'lead page with a refused Take over');
  assert.deepEqual(
    problems.filter((p) => !p.endsWith('/take-over')),
    [],
  );
});

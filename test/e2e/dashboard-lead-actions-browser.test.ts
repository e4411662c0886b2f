import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import type { TestApp } from '../helpers/test-app.ts';
import { startLeadPageSetup, type LeadPageSetup } from '../helpers/lead-page-setup.ts';
import { assertAccessible, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';

// The lead page's actions in Debian's Chromium with axe-core (docs/DASHBOARD.md, "The operator's
// day"): Take over / Resume AI keep a booked lead booked; the composer outside the 24-hour window
// says so, shows the template and keeps the draft; a 120-character name widens nothing at 1440 px
// or 390 px; the agent's notes are shown; internal notes are written, shared and deleted.

let s: LeadPageSetup;
let app: TestApp;
let base: string;
let browser: Browser;
let ws: LeadPageSetup['ws'];
let agentOp: LeadPageSetup['agentOp'];
let problems: string[];

before(async () => {
  s = await startLeadPageSetup('acts');
  ({ app, base, browser, ws, agentOp, problems } = s);
});
after(() => s.close());

const lead = (name: string, phone: string) => s.lead(name, phone);
const status = (id: string) => s.status(id);
const until = (check: () => Promise<boolean>) => s.until(check);
const signedIn = (width = 1440, height = 900): Promise<Page> => s.signedIn(width, height);
/** How far the page scrolls sideways (0: not at all). */
const overflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

test('Take over and Resume AI on a booked lead: it stays booked', async () => {
  problems.length = 0;
  const id = await lead('Ada Booker', '+1 555 013 0001');
  await until(async () => (await status(id)) === 'booked');
  const page = await signedIn();
  await page.goto(`${base}/admin/acts/leads/${id}`);
  await page.locator('h1').getByText('Booked').waitFor(WAIT);
  await page.getByRole('button', { name: 'Take over' }).click();
  await page.getByText('Taken over: the lead stays booked.').waitFor(WAIT);
  await page.getByRole('button', { name: 'Resume AI' }).click();
  await page.getByText('Handed back: the lead stays booked.').waitFor(WAIT);
  await page.locator('h1').getByText('Booked').waitFor(WAIT);
  assert.equal(await status(id), 'booked');
  await assertAccessible(page, 'booked lead after take over and resume');
  assert.deepEqual(problems, []);
});

test('the composer outside the 24-hour window: says so, shows the template, keeps the draft', async () => {
  problems.length = 0;
  const id = await lead('Quinn Quiet', '+1 555 013 0004');
  await until(async () => (await status(id)) === 'in_conversation');
  const page = await signedIn();
  await page.goto(`${base}/admin/acts/leads/${id}`);
  await page.getByRole('button', { name: 'Take over' }).click();
  await page.locator('h1').getByText('Needs human').waitFor(WAIT);
  await page.getByText('The 24-hour window is closed.').waitFor(WAIT);
  const template = (await page.locator('.template-text').textContent()) ?? '';
  assert.match(template, /Quinn/, "the template with the lead's first name");
  const draft = 'Hi Quinn, Sam here: about your roof…';
  await page.getByRole('textbox', { name: 'Message' }).fill(draft);
  assert.equal(await page.getByRole('button', { name: 'Reply', exact: true }).isDisabled(), true);
  await assertAccessible(page, 'composer with the window closed');
  await page.getByRole('button', { name: 'Send template' }).click();
  await page.getByText('Template queued.').waitFor(WAIT);
  assert.equal(await page.getByRole('textbox', { name: 'Message' }).inputValue(), draft, 'the draft is kept');
  await page
    .locator('.bubble.outbound')
    .filter({ hasText: template.slice(0, 20) })
    .nth(1)
    .waitFor(WAIT);
  assert.deepEqual(problems, []);
});

test("a 120-character name widens nothing (1440 px and 390 px); the agent's notes and internal notes", async () => {
  problems.length = 0;
  const name = `Maximilian${'x'.repeat(100)}Longname`;
  assert.equal(name.length, 118);
  const id = await lead(name, '+1 555 014 0004');
  await app.db.pool.query(
    `UPDATE leads SET agent_notes = 'Prefers calls after 6 pm; roof faces south.' WHERE id = $1`,
    [id],
  );
  for (const width of [1440, 390]) {
    const page = await signedIn(width, 900);
    // A workspace with only sandbox leads shows them by default; else switch them on.
    const link = page.getByRole('link', { name });
    const shown = await link.waitFor({ timeout: 5000 }).then(
      () => true,
      () => false,
    );
    if (!shown) await page.getByLabel('Sandbox').check();
    await link.waitFor(WAIT);
    assert.equal(await link.getAttribute('title'), name, 'the full name is available');
    assert.ok((await overflow(page)) <= 0, `inbox at ${width} px scrolls sideways by ${await overflow(page)} px`);
    await page.goto(`${base}/admin/acts/leads/${id}`);
    await page.getByRole('heading', { name: /Maximilian/ }).waitFor(WAIT);
    assert.ok((await overflow(page)) <= 0, `lead page at ${width} px scrolls sideways by ${await overflow(page)} px`);
    await page.close();
  }

  const page = await signedIn();
  await page.goto(`${base}/admin/acts/leads/${id}`);
  await page.getByText('Prefers calls after 6 pm; roof faces south.').waitFor(WAIT);
  const notes = page.getByRole('region', { name: 'Internal notes' });
  await notes.getByText('No notes yet.').waitFor(WAIT);
  await notes.getByLabel('Note').fill('Wife decides; call back Thursday.');
  await notes.getByLabel('Share with the AI agent').check();
  await notes.getByRole('button', { name: 'Add note' }).click();
  await notes.getByText('Wife decides; call back Thursday.').waitFor(WAIT);
  await notes.getByText(/Sam Agent · .* · Shared with the AI agent/).waitFor(WAIT);
  const stored = (await app.db.pool.query('SELECT visible_to_agent FROM lead_notes WHERE lead_id = $1', [id])).rows;
  assert.deepEqual(stored, [{ visible_to_agent: true }]);
  await assertAccessible(page, 'lead page with a note');
  await notes.getByRole('button', { name: /Delete note/ }).click();
  await notes.getByText('No notes yet.').waitFor(WAIT);

  // A viewer reads notes but has no form.
  await app.db.pool.query(
    `INSERT INTO lead_notes (lead_id, operator_id, text) SELECT $1, id, 'Team only' FROM operators WHERE email = $2`,
    [id, agentOp.email],
  );
  const viewer = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }], 'Vic Viewer');
  const vpage = await watchedPage(browser, base, problems);
  await signInAs(vpage, base, viewer.email, viewer.password);
  await vpage.goto(`${base}/admin/acts/leads/${id}`);
  await vpage.getByText('Team only', { exact: true }).waitFor(WAIT);
  assert.equal(await vpage.getByRole('button', { name: 'Add note' }).count(), 0);
  assert.equal(await vpage.getByRole('button', { name: /Delete note/ }).count(), 0);
  await assertAccessible(vpage, 'viewer lead page with notes');
  assert.deepEqual(problems, []);
});

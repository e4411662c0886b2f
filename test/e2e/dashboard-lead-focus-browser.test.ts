import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { makeOperator } from '../helpers/admin.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { postLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';

// The lead page's actions by keyboard keep the focus (docs/DASHBOARD.md, "Accessibility"): the
// pressed button is gone once the page reloads (or disabled while busy), so focus moves to the
// action's notice, to the emptied reply box after Reply, or to the error when the action fails;
// never back to the top of the page.

let app: TestApp;
let browser: Browser;
let base: string;
let worker: TurnWorker;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let agentOp: { email: string; password: string };
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp({ startRelay: true, env: { JOB_POLL_SECONDS: '1' } }));
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: () => new Date(),
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
  });
  worker = new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 2, pollSeconds: 1 });
  await worker.start();
  ws = await app.createWorkspace('whatsapp', { agent: SOLAR_AGENT }, 'focus');
  agentOp = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Sam Agent');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app.boss.offWork('agent-turn').catch(() => {});
  await worker?.idle();
  await app.close();
});

async function lead(name: string, phone: string): Promise<string> {
  const r = await postLead(app.http, ws.sandboxKey, { name, phone, consent: true });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  return r.body.leadId;
}
const status = async (id: string) =>
  (await app.db.pool.query('SELECT status FROM leads WHERE id = $1', [id])).rows[0].status;
async function until(check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(await check(), 'condition not reached');
}
async function leadPage(id: string): Promise<Page> {
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width: 1440, height: 900 });
  await signInAs(page, base, agentOp.email, agentOp.password);
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

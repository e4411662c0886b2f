import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { makeOperator } from '../helpers/admin.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { postLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';
import { assertAccessible, launchChromium, WAIT, watchedPage } from '../helpers/browser.ts';

/**
 * The README's pictures: written to docs/ only with UPDATE_SCREENSHOTS=1 (so that a test run
 * leaves the checkout as it was), else to the temporary folder; taken either way.
 */
function screenshotPath(name: string): string {
  return process.env.UPDATE_SCREENSHOTS === '1'
    ? path.join('docs', name)
    : path.join(os.tmpdir(), `leadintake-${name}`);
}

// The dashboard in Debian's Chromium, offline, against the real service with its sandbox and a
// running worker: the flow from sign-in to Delete lead, live updates without reloads,
// axe-core on every page, a viewer without action buttons, and the README's screenshots.

let app: TestApp;
let browser: Browser;
let base: string;
let worker: TurnWorker;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
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
  ws = await app.createWorkspace('whatsapp', { agent: SOLAR_AGENT }, 'acme');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app.boss.offWork('agent-turn').catch(() => {});
  await worker?.idle();
  await app.close();
});

const newPage = () => watchedPage(browser, base, problems);
const accessible = assertAccessible;

async function signInAs(page: Page, email: string, password: string): Promise<void> {
  await page.goto(`${base}/admin`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
  await accessible(page, 'sign-in page');
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Leads' }).waitFor(WAIT);
}

const row = (page: Page, name: string) => page.getByRole('row').filter({ hasText: name });

test(
  'sign in → empty inbox → a sandbox lead appears and is booked live → ' +
    'its page → take over, reply, resume, delete on another lead',
  async () => {
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Sam Agent');
    await app.operators.addMembership(op.email, ws.workspaceId, 'admin');
    const page = await newPage();
    await signInAs(page, op.email, op.password);
    assert.equal(new URL(page.url()).pathname, '/admin/acme/leads');
    // A workspace with no live lead shows sandbox leads without the switch (its answer, not a click,
    // sets it: clicking while the first answer arrives could undo it).
    await page.getByText('No leads yet.').waitFor(WAIT);
    assert.equal(await page.getByLabel('Sandbox').isChecked(), true);
    await accessible(page, 'empty inbox');

    const booked = await postLead(app.http, ws.sandboxKey, {
      name: 'Ada Booker',
      phone: '+1 555 010 0001',
      email: 'ada@example.com',
      consent: true,
    });
    assert.equal(booked.status, 201);
    await row(page, 'Ada Booker').waitFor(WAIT);
    await row(page, 'Ada Booker').getByText('Booked').waitFor(WAIT);
    const quiet = await postLead(app.http, ws.sandboxKey, {
      name: 'Quinn Quiet',
      phone: '+1 555 011 0004',
      consent: true,
    });
    await row(page, 'Quinn Quiet').getByText('In conversation').waitFor(WAIT);
    await accessible(page, 'inbox');
    await page.screenshot({ path: screenshotPath('dashboard-inbox.png') });

    await row(page, 'Ada Booker').getByRole('link', { name: 'Ada Booker' }).click();
    await page.getByRole('heading', { name: /Ada Booker/ }).waitFor(WAIT);
    const thread = page.locator('.thread');
    await thread.getByText('Template').first().waitFor(WAIT);
    assert.ok((await page.locator('.bubble.inbound').count()) >= 2, "the lead's replies are in the thread");
    await page.getByText(/booking \S+/).waitFor(WAIT);
    await accessible(page, 'lead page');
    await page.screenshot({ path: screenshotPath('dashboard-lead.png'), fullPage: true });

    // Another lead: take over, reply, resume, delete.
    await page.goto(`${base}/admin/acme/leads/${quiet.body.leadId}`);
    await page.getByRole('button', { name: 'Take over' }).click();
    await page.locator('h1').getByText('Needs human').waitFor(WAIT);
    // Outside the 24-hour window (Quinn never wrote) only the approved template can go: the composer
    // keeps the text and offers the template.
    await page.getByRole('textbox', { name: 'Message' }).fill('Hi Quinn, Sam here from the team.');
    await page.getByRole('button', { name: 'Send template' }).click();
    await page
      .locator('.bubble.outbound')
      .last()
      .getByText(/delivered|read/)
      .waitFor(WAIT);
    await page.getByText('Sam Agent replied').waitFor(WAIT);
    await accessible(page, 'lead page after reply');
    await page.getByRole('button', { name: 'Resume AI' }).click();
    await page.locator('h1').getByText('In conversation').waitFor(WAIT);
    await page.getByRole('button', { name: 'Delete lead' }).click();
    await page.getByRole('heading', { name: 'Leads' }).waitFor(WAIT);
    await page.getByText('Quinn Quiet').waitFor({ state: 'detached', ...WAIT });
    assert.equal((await app.db.pool.query('SELECT 1 FROM leads WHERE id = $1', [quiet.body.leadId])).rowCount, 0);
    assert.deepEqual(problems, []);
  },
);

test('a viewer sees no action buttons; keyboard reaches the controls', async () => {
  problems.length = 0;
  const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }], 'Vic Viewer');
  const lead = await postLead(app.http, ws.sandboxKey, {
    name: 'Vera Viewed',
    phone: '+1 555 012 0004',
    consent: true,
  });
  const page = await newPage();
  await signInAs(page, op.email, op.password);
  await page.goto(`${base}/admin/acme/leads/${lead.body.leadId}`);
  await page.getByRole('heading', { name: /Vera Viewed/ }).waitFor(WAIT);
  for (const name of ['Take over', 'Resume AI', 'Reply', 'Delete lead', 'Set outcome']) {
    assert.equal(await page.getByRole('button', { name }).count(), 0, name);
  }
  await accessible(page, 'lead page (viewer)');
  await page.keyboard.press('Tab');
  const focused = await page.evaluate<string>(`document.activeElement ? document.activeElement.textContent : ''`);
  assert.ok(focused.length > 0);
  assert.deepEqual(problems, []);
});

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { makeOperator } from '../helpers/admin.ts';
import { assertAccessible, launchChromium, WAIT, watchedPage } from '../helpers/browser.ts';
import { getLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The Providers, API keys and Team pages in Debian's Chromium against the real service and the
// Vapi simulator: a wrong Vapi key fails Test connection by name; a new key is shown once and,
// revoked, is refused by the public API; an invitation link, opened in a fresh browser, creates
// the account with its role. axe-core on each page.

const CACHE_TTL_MS = 300;
let app: TestApp;
let sim: VapiSimulator;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let owner: { email: string; password: string };
const problems: string[] = [];

before(async () => {
  sim = await startVapiSimulator();
  ({ app, base } = await startListeningApp({
    env: { VAPI_BASE_URL: sim.url, API_KEY_CACHE_TTL_MS: String(CACHE_TTL_MS) },
  }));
  ws = await app.createWorkspace('voice', undefined, 'settings');
  owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
  await sim?.close();
});

async function signedIn(): Promise<Page> {
  const page = await watchedPage(browser, base, problems);
  await page.goto(`${base}/admin`);
  await page.getByLabel('E-mail').fill(owner.email);
  await page.getByLabel('Password').fill(owner.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Leads' }).waitFor(WAIT);
  return page;
}

async function open(page: Page, link: string, heading: string): Promise<void> {
  await page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name: link }).click();
  await page.getByRole('heading', { name: heading, level: 1 }).waitFor(WAIT);
}

test('a wrong Vapi key: saved write-only, and Test connection shows FAIL naming the key', async () => {
  const page = await signedIn();
  await open(page, 'Providers', 'Providers');
  await page.getByText(/PUBLIC_BASE_URL is http:\/\/127\.0\.0\.1:\d+, a local address/).waitFor(WAIT);
  await page.getByText(`${base}/api/vapi/${ws.slug}/events`).waitFor(WAIT);
  await assertAccessible(page, 'empty Providers page');

  const voice = page.getByRole('region', { name: 'Voice (Vapi)' });
  const wrongKey = 'wrong-vapi-key-4321';
  await voice.getByLabel('Vapi private API key').fill(wrongKey);
  await voice.getByLabel('Assistant id').fill(SIM_ASSISTANT_ID);
  await voice.getByLabel('Phone number id').fill(SIM_PHONE_NUMBER_ID);
  await voice.getByRole('button', { name: 'Save Voice (Vapi)' }).click();
  await voice.getByText('Saved.').waitFor(WAIT);
  await voice.getByText(/Set, ending …4321/).waitFor(WAIT);
  assert.equal(
    await voice.getByLabel('Vapi private API key').inputValue(),
    '',
    'the secret is not put back into the form',
  );
  assert.ok(!(await page.content()).includes(wrongKey));

  await voice.getByRole('button', { name: 'Test connection' }).click();
  const results = voice.getByRole('list', { name: 'Test connection: Voice (Vapi)' });
  await results.waitFor(WAIT);
  const keyLine = results.getByRole('listitem').filter({ hasText: 'Vapi API key:' });
  await keyLine.getByText('FAIL').waitFor(WAIT);
  assert.match(await keyLine.innerText(), /Vapi rejected the API key \(401\): check voice\.apiKey/);
  await assertAccessible(page, 'Providers page with a failed test');

  // Typing the right key replaces it (the assistant and number fields keep their values).
  await voice.getByLabel('Vapi private API key').fill(SIM_API_KEY);
  await voice.getByRole('button', { name: 'Save Voice (Vapi)' }).click();
  await voice.getByText(/Set, ending …(?!4321)/).waitFor(WAIT);
  await voice.getByRole('button', { name: 'Test connection' }).click();
  await results.getByRole('listitem').filter({ hasText: 'Vapi API key:' }).getByText('PASS').waitFor(WAIT);
  await page.close();
  assert.deepEqual(problems, []);
});

test('a new key is shown once; revoked, the public API answers 401 within the cache time', async () => {
  const page = await signedIn();
  await open(page, 'API keys', 'API keys');
  await page.getByText(`Revoked keys answer 401 on the public API within ${CACHE_TTL_MS / 1000} seconds`).waitFor(WAIT);
  await assertAccessible(page, 'API keys page');
  await page.getByLabel('Name').fill('Browser form');
  await page.getByRole('radio', { name: 'Sandbox' }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  const dialog = page.getByRole('dialog', { name: 'New API key' });
  await dialog.waitFor(WAIT);
  await dialog.getByText('it will not be shown again').waitFor(WAIT);
  const key = await dialog.getByRole('textbox', { name: 'Key' }).inputValue();
  assert.match(key, /^li_test_/);
  await assertAccessible(page, 'new key dialog');
  await dialog.getByRole('button', { name: 'Done' }).click();
  await dialog.waitFor({ state: 'hidden', ...WAIT });
  const row = page.getByRole('row').filter({ hasText: 'Browser form' });
  await row.getByText('Sandbox').waitFor(WAIT);
  await page.reload();
  await row.waitFor(WAIT);
  assert.ok(!(await page.content()).includes(key), 'not shown after a reload');

  assert.equal((await getLead(app.http, key, crypto.randomUUID())).status, 404, 'the key works');
  await row.getByRole('button', { name: /^Revoke Browser form/ }).click();
  const confirm = page.getByRole('dialog', { name: 'Revoke Browser form?' });
  await confirm.waitFor(WAIT);
  await assertAccessible(page, 'revoke confirmation');
  await confirm.getByRole('button', { name: 'Revoke key' }).click();
  await row.getByText(/^Revoked/).waitFor(WAIT);
  // Within the documented cache time (at once in this process): wait for the condition, bounded.
  const revokedAt = Date.now();
  while ((await getLead(app.http, key, crypto.randomUUID())).status !== 401) {
    assert.ok(Date.now() - revokedAt < CACHE_TTL_MS + 5_000, 'still accepted well after the cache time');
    await new Promise((r) => setImmediate(r));
  }
  await page.close();
  assert.deepEqual(problems, []);
});

test('an invitation link, opened in a fresh browser, creates the account and signs it in with its role', async () => {
  const page = await signedIn();
  await open(page, 'Team', 'Team');
  await page.getByRole('row').filter({ hasText: 'Olivia Owner (you)' }).waitFor(WAIT);
  await assertAccessible(page, 'Team page');
  await page.getByLabel('E-mail').fill('new.agent@example.com');
  await page.locator('select[name="role"]').selectOption('agent');
  await page.getByRole('button', { name: 'Invite' }).click();
  const link = await page.getByRole('textbox', { name: 'Link' }).inputValue();
  assert.ok(link.startsWith(`${base}/admin/invite#`), link);
  await page.getByRole('heading', { name: 'Pending invitations' }).waitFor(WAIT);
  await assertAccessible(page, 'Team page with an invitation');

  const invitee = await watchedPage(browser, base, problems); // a new context: no session
  await invitee.goto(link);
  await invitee.getByRole('heading', { name: 'Join Workspace settings' }).waitFor(WAIT);
  await invitee.getByText('You are invited as agent').waitFor(WAIT);
  await assertAccessible(invitee, 'invitation page');
  await invitee.getByLabel('Your name').fill('Nina New');
  await invitee.getByLabel('Password (12 characters or more)').fill('correct horse battery');
  await invitee.getByLabel('Password again').fill('correct horse battery');
  await invitee.getByRole('button', { name: 'Create account and join' }).click();
  await invitee.getByRole('heading', { name: 'Leads' }).waitFor(WAIT);
  await invitee.getByText('Nina New').waitFor(WAIT);
  const switcher = invitee.getByRole('combobox', { name: 'Workspace' });
  assert.equal(await switcher.inputValue(), 'settings');
  assert.match(await switcher.locator('option:checked').innerText(), /\(agent\)/);
  assert.equal(await invitee.getByRole('link', { name: 'Team' }).count(), 0, 'an agent has no Team page');
  await invitee.close();

  await page.reload();
  await page.getByRole('row').filter({ hasText: 'Nina New' }).waitFor(WAIT);
  assert.equal(await page.getByRole('heading', { name: 'Pending invitations' }).count(), 0);
  await page.close();
  assert.deepEqual(problems, []);
});

import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';
import { assertAccessible, launchChromium, screenshotPath, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';

// The Form page's intake sections and Analytics' "By source" in Debian's Chromium, offline,
// against the real service (docs/INTAKE.md, "The Form page"): an owner sees the hosted form's
// link, opens its preview and copies the embed snippet; changes the consent text (a new version);
// creates a publishable key (shown once) and connects a generic webhook (its URL and secret); a
// viewer sees the same page without edit controls; axe-core clean at 1440 and 390 px.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
const problems: string[] = [];

before(async () => {
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('voice', undefined, 'intake-form');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app?.close();
});

const nav = (page: Page, name: string) =>
  page.getByRole('navigation', { name: 'Workspace' }).getByRole('link', { name, exact: true });

test(
  'an owner links, previews and embeds the hosted form, ' +
    'edits its consent text, makes a publishable key and connects a webhook',
  async () => {
    const owner = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }], 'Olivia Owner');
    const page = await watchedPage(browser, base, problems);
    await page.setViewportSize({ width: 1440, height: 900 });
    await signInAs(page, base, owner.email, owner.password);
    await nav(page, 'Form').click();
    await page.getByRole('heading', { name: 'Hosted form', level: 2 }).waitFor(WAIT);
    await page.getByRole('link', { name: `${base}/forms/intake-form` }).waitFor(WAIT);
    const snippet = page.getByRole('region', { name: 'Embed it in your site' });
    assert.equal(
      await snippet.innerText(),
      '<div data-leadintake-form="intake-form"></div>\n' +
        `<script src="${base}/forms/intake-form/embed.js" async></script>`,
    );
    await page.getByText('Preview', { exact: true }).click();
    const preview = page.frameLocator('iframe[title="Preview of the hosted form"]');
    await preview.locator('form').first().waitFor(WAIT);

    // Consent text: the default is version 1; a changed text saves as version 2.
    await page.getByText('Shown now: version 1.').waitFor(WAIT);
    await page.getByLabel('Consent text').fill('I agree that Intake Form may call me about my enquiry.');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Form settings saved. The consent text is now version 2.').waitFor(WAIT);
    await page.getByLabel('Accent colour').waitFor(WAIT);

    await page.getByLabel('Allowed origins of the new key, one a line').fill('https://www.example.com');
    await page.getByRole('button', { name: 'Create publishable key' }).click();
    const shownKey = await page.locator('.once code').first().innerText();
    assert.match(shownKey, /^li_pub_live_/);

    await page.getByLabel('Name', { exact: true }).fill('Typeform');
    await page.getByRole('button', { name: 'Connect', exact: true }).click();
    await page.getByText('Connected Typeform.').waitFor(WAIT);
    await page.getByText('Waiting for the first lead').waitFor(WAIT);
    const stored = await app.db.pool.query('SELECT kind, name FROM lead_sources WHERE workspace_id = $1', [
      ws.workspaceId,
    ]);
    assert.deepEqual(stored.rows, [{ kind: 'webhook', name: 'Typeform' }]);

    await assertAccessible(page, 'Form page at 1440 px');
    await page.screenshot({ path: screenshotPath('dashboard-form-intake.png'), fullPage: true });
    await page.setViewportSize({ width: 390, height: 844 });
    await assertAccessible(page, 'Form page at 390 px');
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than a 390 px screen`);
    await page.screenshot({ path: screenshotPath('dashboard-form-intake-390.png'), fullPage: true });

    // Analytics: the sandbox lead counted under its source.
    assert.equal((await postLead(app.http, ws.sandboxKey, validLead())).status, 201);
    await page.setViewportSize({ width: 1440, height: 900 });
    await page.goto(`${base}/admin/intake-form/analytics?sandbox=true`);
    const bySource = page.getByRole('table', { name: /by where the leads came in/ });
    await bySource.getByRole('rowheader', { name: 'API (secret key)' }).waitFor(WAIT);
    await assertAccessible(page, 'Analytics with By source');
    assert.deepEqual(problems, []);
    await page.close();
  },
);

test('a viewer reads the Form page without edit controls', async () => {
  const viewer = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'viewer' }], 'Vic Viewer');
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width: 390, height: 844 });
  await signInAs(page, base, viewer.email, viewer.password);
  await nav(page, 'Form').click();
  await page.getByRole('heading', { name: 'Form settings', level: 2 }).waitFor(WAIT);
  await page.getByText('Owners and admins change these settings.').waitFor(WAIT);
  await page.getByText('I agree that Intake Form may call me about my enquiry.').waitFor(WAIT);
  await page.getByText('Typeform').waitFor(WAIT);
  assert.equal(await page.getByRole('textbox').count(), 0);
  for (const name of ['Save settings', 'Create publishable key', 'Connect', 'Disconnect'])
    assert.equal(await page.getByRole('button', { name, exact: true }).count(), 0, name);
  await assertAccessible(page, "a viewer's Form page at 390 px");
  assert.deepEqual(problems, []);
  await page.close();
});

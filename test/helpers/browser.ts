import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { createRequire } from 'node:module';
import { chromium, type Browser, type Page } from 'playwright-core';

// Debian's Chromium for the browser tests (never a downloaded browser), offline, and the checks
// every dashboard page gets: nothing fetched from elsewhere, no failed resource, no page error,
// and axe-core without a serious or critical violation.

const AXE = createRequire(import.meta.url).resolve('axe-core/axe.min.js');
export const WAIT = { timeout: 20_000 };

/** The background-networking flags keep Chromium from calling out, which this machine refuses. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
    ],
  });
}

/**
 * A page whose problems (a request outside `base`, a page error, a response ≥ 400, a console
 * error) are pushed to `problems` for the test to assert empty. The one expected failure: the
 * page's first question, GET /api/admin/session, is a 401 until someone signs in.
 */
export async function watchedPage(browser: Browser, base: string, problems: string[]): Promise<Page> {
  // bypassCSP: only so axe-core can be injected; the page's own code runs under the CSP regardless.
  const page = await browser.newPage({ viewport: { width: 1280, height: 800 }, bypassCSP: true });
  await page.route('**/*', (route) => {
    const url = route.request().url();
    if (url.startsWith(base) || url.startsWith('data:')) return route.continue();
    problems.push(`outside request: ${url}`);
    return route.abort();
  });
  page.on('pageerror', (err) => problems.push(`page error: ${err.message}`));
  page.on('response', (r) => {
    const url = new URL(r.url());
    if (r.status() >= 400 && !(r.status() === 401 && url.pathname === '/api/admin/session'))
      problems.push(`${r.status()} ${url.pathname}`);
  });
  page.on('console', (m) => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) problems.push(`console: ${m.text()}`);
  });
  page.on('dialog', (d) => void d.accept());
  return page;
}

/** axe-core in the page: no serious or critical violation. */
export async function assertAccessible(page: Page, what: string): Promise<void> {
  await page.addScriptTag({ path: AXE });
  // A string: the test's TypeScript knows no DOM; the page runs it.
  const violations = await page.evaluate<string[]>(`axe.run().then((r) => r.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => v.id + ' ' + v.nodes.map((n) => n.target.join(' ')).join(', ')))`);
  assert.deepEqual(violations, [], `${what}: ${violations.join(', ')}`);
}

/** Signs in on the dashboard at `base` and waits for the inbox. */
export async function signInAs(page: Page, base: string, email: string, password: string): Promise<void> {
  await page.goto(`${base}/admin`);
  await page.getByLabel('E-mail').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Leads' }).waitFor(WAIT);
}

/** Where a screenshot goes: docs/ only with UPDATE_SCREENSHOTS=1, so a test run leaves the checkout as it was. */
export function screenshotPath(name: string): string {
  return process.env.UPDATE_SCREENSHOTS === '1'
    ? path.join('docs', name)
    : path.join(os.tmpdir(), `leadintake-${name}`);
}

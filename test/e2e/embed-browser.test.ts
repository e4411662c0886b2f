import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { DEMO_AGENT } from '../../src/sandbox/demo-workspaces.ts';
import { launchChromium, WAIT } from '../helpers/browser.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startListeningApp, TestClock, type TestApp } from '../helpers/test-app.ts';

// The embed snippet in Debian's Chromium, on a page served from ANOTHER origin (a second local
// HTTP server): the iframe appears, takes the height the form posts (and no one else's), and a
// lead sent inside it is created as an embed lead that names the page (docs/INTAKE.md).

let app: TestApp;
let browser: Browser;
let base: string;
let slug: string;
let workspaceId: string;
let site: http.Server;
let siteOrigin: string;
const clock = new TestClock();

/** The business's own page: the documented snippet and nothing else of ours. */
const sitePage = () => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>A shop</title></head>
<body><h1>A shop</h1>
<div data-leadintake-form="${slug}"></div>
<script src="${base}/forms/${slug}/embed.js" async></script>
</body></html>`;

before(async () => {
  ({ app, base } = await startListeningApp({ clock }));
  ({ slug, workspaceId } = await app.createWorkspace('whatsapp', { agent: DEMO_AGENT }));
  site = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(sitePage());
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteOrigin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  assert.notEqual(siteOrigin, base);
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await app?.close();
});

const frameHeight = `document.querySelector('iframe[data-leadintake]').style.height`;

test('the snippet on another origin: the iframe appears, sizes itself, and a lead sent in it is created', async () => {
  const context = await browser.newContext({ viewport: { width: 390, height: 800 } });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('response', (r) => {
    if (r.status() >= 400 && !r.url().endsWith('/favicon.ico')) errors.push(`${r.status()} ${r.url()}`);
  });
  await page.goto(`${siteOrigin}/contact?email=ada@example.com`);

  const iframe = page.locator(`div[data-leadintake-form="${slug}"] > iframe[data-leadintake]`);
  await iframe.waitFor({ state: 'attached', ...WAIT });
  const src = new URL((await iframe.getAttribute('src'))!);
  assert.equal(src.origin, base);
  assert.equal(src.pathname, `/forms/${slug}`);
  assert.equal(src.searchParams.get('embed'), '1');
  // The page, without its query (which may carry a visitor's details).
  assert.equal(src.searchParams.get('page'), `${siteOrigin}/contact`);
  assert.equal(await iframe.getAttribute('title'), 'Contact form');

  // The form posts its height; the embed takes it (the form at 390 px is taller than the 640 px start).
  await page.waitForFunction(`${frameHeight} !== '640px'`, undefined, WAIT);
  const frame = page.frameLocator('iframe[data-leadintake]');
  const contentHeight = await frame.locator('html').evaluate((el) => el.scrollHeight);
  assert.equal(await page.evaluate(frameHeight), `${contentHeight}px`);

  // A message of the same shape from anywhere but the form's iframe is ignored.
  const before = await page.evaluate(frameHeight);
  await page.evaluate(`new Promise((resolve) => {
    window.addEventListener('message', () => setTimeout(resolve, 0), { once: true });
    window.postMessage({ type: 'leadintake:height', height: 5 }, '*');
  })`);
  assert.equal(await page.evaluate(frameHeight), before);

  const phone = uniquePhone();
  await frame.getByLabel('Your name').fill('Ada Lovelace');
  await frame.getByLabel('Phone number').fill(phone);
  await frame.getByLabel('Do you own the property?').selectOption('Yes');
  await frame.getByLabel('Monthly electricity bill (EUR)').fill('120');
  await frame.getByRole('checkbox').check();
  clock.advance(5_000);
  await frame.getByRole('button', { name: 'Send' }).click();
  await frame.getByRole('heading', { name: 'Thank you!' }).waitFor(WAIT);
  // The shorter thank-you page shrinks the frame again.
  const formHeight = Number.parseInt(String(before), 10);
  await page.waitForFunction(`Number.parseInt(${frameHeight}, 10) < ${formHeight}`, undefined, WAIT);

  const { rows } = await app.db.pool.query('SELECT source, source_detail FROM leads WHERE workspace_id = $1', [
    workspaceId,
  ]);
  assert.deepEqual(rows, [{ source: 'embed', source_detail: { page: `${siteOrigin}/contact` } }]);
  assert.deepEqual(errors, []);
  await context.close();
});

test('embed.js: JavaScript, cached briefly, loadable cross-origin; an unknown workspace is a 404', async () => {
  const res = await fetch(`${base}/forms/${slug}/embed.js`);
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'text/javascript; charset=utf-8');
  assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
  assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin');
  const etag = res.headers.get('etag')!;
  assert.match(await res.text(), /leadintake:height/);
  const again = await fetch(`${base}/forms/${slug}/embed.js`, { headers: { 'if-none-match': etag } });
  assert.equal(again.status, 304);
  assert.equal((await fetch(`${base}/forms/no-such-workspace/embed.js`)).status, 404);
});

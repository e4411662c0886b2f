import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';
import { launchChromium } from '../helpers/browser.ts';

// GET /docs in Debian's Chromium (never a downloaded browser), offline: any request that leaves
// the service is refused and fails the test.

let app: TestApp;
let browser: Browser;
let base: string;

before(async () => {
  app = await startTestApp();
  base = await app.http.listen({ host: '127.0.0.1', port: 0 });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app.close();
});

test(
  'the reference page shows both operations, ' +
    'their responses and an example request, with nothing fetched from elsewhere',
  async () => {
    const page = await browser.newPage();
    const outside: string[] = [];
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(base) || url.startsWith('data:')) return route.continue();
      outside.push(url);
      return route.abort();
    });
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    const res = await page.goto(`${base}/docs`);
    assert.equal(res?.status(), 200);
    // The public operations open by themselves (the admin ones stay collapsed).
    await page.locator('#operations-Leads-submitLead .opblock-body').waitFor();
    const post = page.locator('#operations-Leads-submitLead');
    const get = page.locator('#operations-Leads-getLead');
    assert.match(await post.locator('.opblock-summary').innerText(), /POST\s*\/api\/public\/leads\s*Submit a lead/);
    assert.match(await get.locator('.opblock-summary').innerText(), /GET\s*\/api\/public\/leads\/\{id\}\s*Read a lead/);
    const postText = await post.innerText();
    for (const status of ['201', '400', '401', '404', '409', '413', '429', '500', '502', '503']) {
      assert.ok(await post.locator(`tr.response[data-code="${status}"]`).count(), `POST response ${status}`);
    }
    for (const status of ['200', '401', '404', '429'])
      assert.ok(await get.locator(`tr.response[data-code="${status}"]`).count(), `GET response ${status}`);
    // The example request body and example answers, as the document gives them.
    assert.match(postText, /"phone": "\+44 20 7946 0958"/);
    assert.match(postText, /"consent": true/);
    assert.match(postText, /duplicate_phone/);
    assert.match(await get.innerText(), /"bookingStart": "2026-11-24T15:00:00.000Z"/);
    assert.deepEqual(outside, []);
    assert.deepEqual(errors, []);
  },
);

test('only the listed files of the renderer are served', async () => {
  const ok = await app.http.inject({ url: '/docs/assets/swagger-ui.css' });
  assert.equal(ok.statusCode, 200);
  assert.match(String(ok.headers['content-type']), /^text\/css/);
  for (const file of ['package.json', '..%2F..%2Fpackage.json', 'index.html']) {
    assert.equal((await app.http.inject({ url: `/docs/assets/${file}` })).statusCode, 404, file);
  }
});

import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { WEB_DIR } from '../../src/admin/web-routes.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { launchChromium } from '../helpers/browser.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startListeningApp, startTestApp, type TestApp } from '../helpers/test-app.ts';

// The security headers every response carries (src/http/security-headers.ts): a CSP suited to
// each kind of page, no framing, no sniffing, no referrer, no caching of API answers, and HSTS
// only where the public URL is https. The /docs page still renders under its CSP in Chromium.

let app: TestApp;
let base: string;
let https: TestApp;
let browser: Browser;

before(async () => {
  ({ app, base } = await startListeningApp());
  https = await startTestApp({ env: { PUBLIC_BASE_URL: 'https://leads.example.com' } });
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await https?.close();
  await app?.close();
});

type Headers = Record<string, unknown>;

function assertLocked(headers: Headers, what: string): void {
  assert.equal(headers['x-content-type-options'], 'nosniff', what);
  assert.equal(headers['x-frame-options'], 'DENY', what);
  assert.equal(headers['referrer-policy'], 'no-referrer', what);
  assert.match(String(headers['content-security-policy']), /frame-ancestors 'none'/, what);
}

function assertDataCsp(headers: Headers, what: string): void {
  assertLocked(headers, what);
  assert.match(String(headers['content-security-policy']), /^default-src 'none';/, what);
  assert.equal(headers['cache-control'], 'no-store', what);
}

describe('API answers', () => {
  test('the public API: no-store and a CSP that lets nothing run, on success and on error alike', async () => {
    const ws = await app.createWorkspace('whatsapp');
    const created = await postLead(app.http, ws.apiKey, validLead());
    assert.equal(created.status, 201);
    assertDataCsp(created.headers, 'POST 201');
    const read = await getLead(app.http, ws.apiKey, created.body.leadId);
    assert.equal(read.status, 200);
    assertDataCsp(read.headers, 'GET 200');
    assertDataCsp((await getLead(app.http, null, crypto.randomUUID())).headers, 'GET 401');
    assertDataCsp((await postLead(app.http, ws.apiKey, '{')).headers, 'POST 400');
  });

  test('the admin API, signed in or not', async () => {
    const ws = await app.createWorkspace('whatsapp');
    assertDataCsp((await admin(app.http, null, 'GET', '/api/admin/session')).headers, 'session 401');
    const op = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'owner' }]);
    const signed = await signIn(app.http, op.email, op.password);
    assert.equal(signed.status, 200);
    assertDataCsp(signed.headers, 'sign-in 200');
    const leads = await admin(app.http, signed.session, 'GET', `/api/admin/workspaces/${ws.slug}/leads`);
    assert.equal(leads.status, 200);
    assertDataCsp(leads.headers, 'leads 200');
  });

  test('a missing route, a path the router cannot decode, health, OpenAPI, a provider webhook', async () => {
    const urls = [
      '/no/such/route',
      '/%E0%A4%A',
      '/api/public/leads/%E0%A4%A',
      '/healthz',
      '/openapi.json',
      '/api/whatsapp/twilio/no-such-ws/status',
    ];
    for (const url of urls) {
      const res = await app.http.inject({ method: url.includes('whatsapp') ? 'POST' : 'GET', url });
      assertDataCsp(res.headers, url);
    }
  });

  test('no HSTS while the public URL is http', async () => {
    const res = await app.http.inject({ url: '/healthz' });
    assert.equal(res.headers['strict-transport-security'], undefined);
  });
});

describe('pages', () => {
  test('/docs: its own CSP (our scripts only), not frameable, not cached; its assets keep their cache', async () => {
    const page = await app.http.inject({ url: '/docs' });
    assert.equal(page.statusCode, 200);
    assertLocked(page.headers, '/docs');
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self';/);
    assert.doesNotMatch(csp, /script-src[^;]*unsafe-inline/);
    assert.equal(page.headers['cache-control'], 'no-store');
    const asset = await app.http.inject({ url: '/docs/assets/swagger-ui.css' });
    assertLocked(asset.headers, 'docs asset');
    assert.equal(asset.headers['cache-control'], 'public, max-age=86400');
  });

  test('/admin: the dashboard CSP; its hashed assets stay cached for good', async () => {
    const page = await app.http.inject({ url: '/admin/leads' });
    assert.equal(page.statusCode, 200);
    assertLocked(page.headers, '/admin');
    assert.match(String(page.headers['content-security-policy']), /^default-src 'self';/);
    assert.equal(page.headers['cache-control'], 'no-cache');
    const file = fs.readdirSync(path.join(WEB_DIR, 'assets')).find((f) => f.endsWith('.js'));
    assert.ok(file, 'the dashboard is built');
    const asset = await app.http.inject({ url: `/admin/assets/${file}` });
    assert.equal(asset.statusCode, 200);
    assert.equal(asset.headers['x-content-type-options'], 'nosniff');
    assert.match(String(asset.headers['cache-control']), /immutable/);
  });

  test('the reference page renders in Chromium under its CSP, with no violation reported', async () => {
    const page = await browser.newPage();
    const violations: string[] = [];
    page.on('console', (m) => {
      if (/Content.Security.Policy/i.test(m.text())) violations.push(m.text());
    });
    await page.addInitScript(`document.addEventListener('securitypolicyviolation',
      (e) => console.error('Content-Security-Policy: ' + e.violatedDirective + ' ' + e.blockedURI));`);
    const res = await page.goto(`${base}/docs`);
    assert.equal(res?.status(), 200);
    await page.locator('#operations-Leads-submitLead .opblock-body').waitFor();
    // "Try it out" fills the example body: Swagger UI's own scripts at work under the policy.
    await page.locator('#operations-Leads-submitLead button.try-out__btn').click();
    await page.locator('#operations-Leads-submitLead textarea.body-param__text').waitFor();
    assert.deepEqual(violations, []);
    await page.close();
  });

  test('another site cannot frame /docs or /admin', async () => {
    const page = await browser.newPage();
    const blocked: string[] = [];
    page.on('console', (m) => {
      if (/frame-ancestors|X-Frame-Options/i.test(m.text())) blocked.push(m.text());
    });
    // A page of another origin (about:blank's opener is not the service) framing both pages.
    const frames = `<iframe src="${base}/docs"></iframe><iframe src="${base}/admin"></iframe>`;
    await page.setContent(frames, { waitUntil: 'load' });
    for (const frame of page.frames().slice(1)) {
      const title = await frame.title().catch(() => '');
      assert.doesNotMatch(title, /leadintake/i, frame.url());
    }
    assert.ok(blocked.length >= 2, blocked.join('\n'));
    await page.close();
  });
});

describe('https installations', () => {
  test('HSTS on every kind of response, and "Try it out" may call the public URL', async () => {
    for (const url of ['/healthz', '/docs', '/admin', '/api/public/leads/x', '/nothing']) {
      const res = await https.http.inject({ url });
      assert.equal(res.headers['strict-transport-security'], 'max-age=31536000', url);
    }
    const docs = await https.http.inject({ url: '/docs' });
    assert.match(String(docs.headers['content-security-policy']), /connect-src 'self' https:\/\/leads\.example\.com;/);
  });
});

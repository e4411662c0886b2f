import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { loadConfig, type Config } from '../../src/config/config.ts';
import { freePort } from '../../src/db/embedded.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { serve, type RunningServer } from '../../src/serve.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { assertAccessible, launchChromium, signInAs, WAIT } from '../helpers/browser.ts';
import { retryWhilePortTaken, TEST_ENCRYPTION_KEY } from '../helpers/test-app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

// The dashboard is never stale in silence: the service restarts under an open inbox (the real
// `serve`, stopped, then a new one on the same port and database), and the next lead appears
// without a reload. Meanwhile the port answers 503, as a reverse proxy does while its upstream
// restarts (and as a closing service does on an open connection): a plain EventSource gave up
// for good on that answer. While the stream is down the page says so, in a live region, and
// says so again when it is back.

let db: TestDatabase;
let config: Config;
let server: RunningServer | null = null;
let browser: Browser;
let base: string;
let apiKey: string;
let workspaceId: string;
const log = createLogger('silent');

const start = () => serve(config, log, { worker: false, firstRunDemo: false });

before(async () => {
  db = await createTestDatabase();
  server = await retryWhilePortTaken(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    config = loadConfig({
      DATABASE_URL: db.url,
      LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      LOG_LEVEL: 'silent',
      PORT: String(port),
      HOST: '127.0.0.1',
      PUBLIC_BASE_URL: base,
      PASSWORD_SCRYPT_LOG2_N: '14',
      // Each heartbeat re-checks the session: a signed-out session's stream ends within a second.
      LIVE_HEARTBEAT_SECONDS: '1',
    });
    return start();
  });
  const created = await server.workspaces.create({ slug: 'acme', name: 'Acme', channel: 'whatsapp' });
  if (created.kind !== 'created') throw new Error('slug taken');
  apiKey = created.apiKey.key;
  workspaceId = created.workspace.id;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await server?.close();
  await db?.drop();
});

let n = 0;
async function operator(): Promise<{ email: string; password: string }> {
  const email = `live${++n}@example.com`;
  const made = await server!.operators.create(email, `Live ${n}`);
  assert.ok(made);
  await server!.operators.addMembership(email, workspaceId, 'admin');
  return made;
}

async function submitLead(name: string, phone: string): Promise<string> {
  const res = await fetch(`${base}/api/public/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name, phone, consent: true }),
  });
  const text = await res.text();
  assert.equal(res.status, 201, text);
  return (JSON.parse(text) as { leadId: string }).leadId;
}

/** What a reverse proxy answers on the port while the service is down; counts the page's stream attempts. */
async function unavailable(): Promise<{ streamAttempts: () => number; close: () => Promise<void> }> {
  let attempts = 0;
  const stub = http.createServer((req, res) => {
    if (req.url?.endsWith('/events')) attempts += 1;
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1', connection: 'close' });
    res.end('{"error":"Service is restarting."}');
  });
  await new Promise<void>((resolve, reject) => {
    stub.once('error', reject);
    stub.listen(config.PORT, '127.0.0.1', () => resolve());
  });
  return { streamAttempts: () => attempts, close: () => new Promise((resolve) => stub.close(() => resolve())) };
}

const banner = (page: Page) => page.getByRole('status').filter({ hasText: 'Offline — reconnecting…' });
const row = (page: Page, name: string) => page.getByRole('row').filter({ hasText: name });

async function until(what: string, check: () => boolean): Promise<void> {
  for (let i = 0; i < 400 && !check(); i++) await new Promise((r) => setTimeout(r, 50));
  assert.ok(check(), what);
}

test('a restart under an open inbox: "Offline — reconnecting…" while down, then the next lead shows live', async () => {
  const op = await operator();
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  const pageErrors: string[] = [];
  page.on('pageerror', (e) => pageErrors.push(e.message));
  await signInAs(page, base, op.email, op.password);
  await submitLead('Before Restart', '+1 555 010 0101');
  await row(page, 'Before Restart').waitFor(WAIT);
  assert.equal(await banner(page).count(), 0, 'no banner while live');

  // The service stops (its open streams end at once: a stream must not hold the shutdown), and
  // the port answers 503 for a while.
  await server!.close();
  server = null;
  const down = await unavailable();
  try {
    await banner(page).waitFor(WAIT);
    await until('the page keeps trying after a 503', () => down.streamAttempts() >= 2);
    assert.equal(await banner(page).isVisible(), true);
    await assertAccessible(page, 'inbox, offline');
  } finally {
    await down.close();
  }
  server = await start();
  // Coming back is said too, in the same live region: an emptied region announces nothing.
  await page.getByRole('status').filter({ hasText: 'Back online.' }).waitFor(WAIT);
  await submitLead('After Restart', '+1 555 010 0102');
  await row(page, 'After Restart').waitFor(WAIT);
  await banner(page).waitFor({ state: 'detached', ...WAIT });
  await assertAccessible(page, 'inbox, back online');
  assert.deepEqual(pageErrors, []);
  await page.close();
});

test('a session ended elsewhere ends the stream: the page goes to sign-in and says so, not retrying', async () => {
  const op = await operator();
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  await signInAs(page, base, op.email, op.password);
  // A new password ends every session of the operator.
  assert.ok(await server!.operators.resetPassword(op.email));
  await page.getByRole('heading', { name: 'Sign in' }).waitFor(WAIT);
  await page.getByText('You were signed out.').waitFor(WAIT);
  await assertAccessible(page, 'signed out');
  await page.close();
});

test('two changes a moment apart: the lead page shows the later one, whichever answer comes back last', async () => {
  const op = await operator();
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 }, bypassCSP: true });
  await signInAs(page, base, op.email, op.password);
  const leadId = await submitLead('Two Changes', '+1 555 010 0103');
  await page.goto(`${base}/admin/acme/leads/${leadId}`);
  await page.getByRole('heading', { name: 'Two Changes' }).waitFor(WAIT);
  // The first change's answer is held back until the second change's answer has been shown.
  let seen = 0;
  let secondShown: () => void = () => {};
  const second = new Promise<void>((resolve) => {
    secondShown = resolve;
  });
  await page.route(`**/api/admin/workspaces/acme/leads/${leadId}`, async (route) => {
    const n = ++seen;
    const response = await route.fetch();
    if (n === 1) await second;
    await route.fulfill({ response });
    if (n === 2) secondShown();
  });
  const move = (to: 'needs_human' | 'unqualified') =>
    transitionLead(server!.pool, { leadId, to, actor: 'operator', event: { type: 'operator.outcome_set' } });
  assert.ok((await move('needs_human')).ok);
  await until('the first change is being loaded', () => seen >= 1);
  assert.ok((await move('unqualified')).ok);
  await second;
  await until('the first answer has come back too', () => seen >= 2);
  const badge = page.locator('.badge');
  await badge.filter({ hasText: 'Unqualified' }).first().waitFor(WAIT);
  // Give the held answer its chance to be shown: it must not replace the later one.
  await page.evaluate('new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)))');
  assert.equal(await badge.filter({ hasText: 'Needs human' }).count(), 0);
  await page.close();
});

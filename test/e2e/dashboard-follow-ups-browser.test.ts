import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { makeOperator } from '../helpers/admin.ts';
import { postLead } from '../helpers/http.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';
import { assertAccessible, launchChromium, signInAs, WAIT, watchedPage } from '../helpers/browser.ts';

// The lead page's Follow-ups panel and the inbox's next attempt in Debian's Chromium with axe-core
// (docs/DASHBOARD.md, "Follow-ups"): a lead with a pending follow-up shows it in the inbox and on
// its page, at 1440 px and 390 px without widening the page; Stop follow-ups (confirmed) ends it.

let app: TestApp;
let browser: Browser;
let base: string;
let ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
let agentOp: { email: string; password: string };
const problems: string[] = [];

before(async () => {
  // No relay: the lead's first contact and the plan's job stay queued, so the page shows the plan as set here.
  ({ app, base } = await startListeningApp());
  ws = await app.createWorkspace('whatsapp', undefined, 'follow');
  agentOp = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Sam Agent');
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await app.close();
});

async function leadWithFollowUp(name: string, phone: string): Promise<string> {
  const r = await postLead(app.http, ws.apiKey, { name, phone, consent: true });
  assert.equal(r.status, 201, JSON.stringify(r.body));
  const at = new Date(Date.now() + 2 * 3_600_000);
  await app.db.pool.query(`SELECT contact_plan_schedule($1, 'template', $2, 'first follow-up', '{}'::jsonb)`, [
    r.body.leadId,
    at,
  ]);
  return r.body.leadId;
}
const plan = async (id: string) =>
  (await app.db.pool.query('SELECT ended_reason, next_kind FROM contact_plans WHERE lead_id = $1', [id])).rows[0];
const overflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth');

async function signedIn(width: number): Promise<Page> {
  const page = await watchedPage(browser, base, problems);
  await page.setViewportSize({ width, height: 900 });
  await signInAs(page, base, agentOp.email, agentOp.password);
  return page;
}

test('a pending follow-up in the inbox and on the lead page; Stop follow-ups ends it', async () => {
  problems.length = 0;
  const id = await leadWithFollowUp('Fay Follow', '+1 555 014 0001');
  for (const width of [1440, 390]) {
    const page = await signedIn(width);
    await page.goto(`${base}/admin/follow/leads?sandbox=false`);
    await page.getByText('Next attempt: follow-up message at').first().waitFor(WAIT);
    assert.equal(await overflow(page), 0, `inbox at ${width} px`);
    await assertAccessible(page, `inbox with a next attempt at ${width} px`);
    await page.goto(`${base}/admin/follow/leads/${id}`);
    const panel = page.getByRole('region', { name: 'Follow-ups' });
    await panel.getByText('Next attempt:').waitFor(WAIT);
    await panel.getByText('first follow-up').waitFor(WAIT);
    for (const name of ['Send now', 'Skip', 'Stop follow-ups', 'Do not contact'])
      await panel.getByRole('button', { name }).waitFor(WAIT);
    assert.equal(await overflow(page), 0, `lead page at ${width} px`);
    await assertAccessible(page, `lead page with a pending follow-up at ${width} px`);
    await page.close();
  }

  const page = await signedIn(1440);
  await page.goto(`${base}/admin/follow/leads/${id}`);
  const panel = page.getByRole('region', { name: 'Follow-ups' });
  await panel.getByRole('button', { name: 'Stop follow-ups' }).waitFor(WAIT);
  // It asks first (watchedPage accepts every dialog).
  let asked = '';
  page.once('dialog', (d) => {
    asked = d.message();
  });
  await panel.getByRole('button', { name: 'Stop follow-ups' }).click();
  await page.getByText('Follow-ups stopped.').waitFor(WAIT);
  assert.match(asked, /^Stop follow-ups for Fay Follow\?/);
  await panel.getByText('stopped by an operator').first().waitFor(WAIT);
  assert.deepEqual(await plan(id), { ended_reason: 'operator_stopped', next_kind: null });
  assert.equal(await panel.getByRole('button', { name: 'Stop follow-ups' }).count(), 0);
  // The timeline says it in words, with who.
  await page.getByText('Follow-ups ended: stopped by an operator (Sam Agent)').first().waitFor(WAIT);
  await assertAccessible(page, 'lead page after Stop follow-ups');
  assert.deepEqual(problems, []);
});

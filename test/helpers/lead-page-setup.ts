import assert from 'node:assert/strict';
import type { Browser, Page } from 'playwright-core';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { makeOperator } from './admin.ts';
import { SOLAR_AGENT } from './agent-harness.ts';
import { launchChromium, signInAs, watchedPage } from './browser.ts';
import { postLead } from './http.ts';
import { startListeningApp, type TestApp } from './test-app.ts';

/**
 * What the lead page's browser tests share: a listening app whose sandbox WhatsApp leads are run by
 * a started turn worker (the simulated lead answers), a workspace `slug` with an agent operator,
 * and Chromium. `problems` collects the pages' console errors and failed requests.
 */
export interface LeadPageSetup {
  app: TestApp;
  base: string;
  browser: Browser;
  ws: Awaited<ReturnType<TestApp['createWorkspace']>>;
  agentOp: { email: string; password: string };
  problems: string[];
  /** A sandbox lead; its id. */
  lead(name: string, phone: string): Promise<string>;
  status(id: string): Promise<string>;
  /** Polls `check` (every 50 ms, at most 20 s) until it holds. */
  until(check: () => Promise<boolean>): Promise<void>;
  /** A page signed in as the agent operator, at this size. */
  signedIn(width?: number, height?: number): Promise<Page>;
  close(): Promise<void>;
}

export async function startLeadPageSetup(slug: string): Promise<LeadPageSetup> {
  const { app, base } = await startListeningApp({ startRelay: true, env: { JOB_POLL_SECONDS: '1' } });
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: () => new Date(),
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
  });
  const worker = new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 2, pollSeconds: 1 });
  await worker.start();
  const ws = await app.createWorkspace('whatsapp', { agent: SOLAR_AGENT }, slug);
  const agentOp = await makeOperator(app, [{ workspaceId: ws.workspaceId, role: 'agent' }], 'Sam Agent');
  const browser = await launchChromium();
  const problems: string[] = [];
  const status = async (id: string) =>
    (await app.db.pool.query('SELECT status FROM leads WHERE id = $1', [id])).rows[0].status as string;
  return {
    app,
    base,
    browser,
    ws,
    agentOp,
    problems,
    status,
    async lead(name, phone) {
      const r = await postLead(app.http, ws.sandboxKey, { name, phone, consent: true });
      assert.equal(r.status, 201, JSON.stringify(r.body));
      return r.body.leadId as string;
    },
    async until(check) {
      for (let i = 0; i < 400 && !(await check()); i++) await new Promise((r) => setTimeout(r, 50));
      assert.ok(await check(), 'condition not reached');
    },
    async signedIn(width = 1440, height = 900) {
      const page = await watchedPage(browser, base, problems);
      await page.setViewportSize({ width, height });
      await signInAs(page, base, agentOp.email, agentOp.password);
      return page;
    },
    async close() {
      await browser.close();
      await app.boss.offWork('agent-turn').catch(() => {});
      await worker.idle();
      await app.close();
    },
  };
}

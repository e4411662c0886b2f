// The sandbox's follow-up row (docs/SANDBOX.md, 0011): a sandbox lead silent to the first template
// and the first follow-up answers the second follow-up and books, its plan run 60× faster
// (SANDBOX_PLAN_SPEED) through the sandbox's simulated Twilio and its first-contact template.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { freePort } from '../../src/db/embedded.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { pendingStep, runDueSteps, timeline } from '../helpers/contact-plan-harness.ts';
import { getLead, postLead } from '../helpers/http.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';
import { ALWAYS_OPEN } from '../helpers/whatsapp-follow-up-setup.ts';

let app: TestApp;
let worker: TurnWorker;
const clock = new TestClock(Date.now());

before(async () => {
  const port = await freePort();
  app = await startTestApp({ clock, env: { PORT: String(port), PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
  await app.http.listen({ port, host: '127.0.0.1' });
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: clock.read,
    workspaces: app.workspaces,
    providers: defaultConversationProviders(app.config, { scheduling: app.scheduling }),
    sandbox: app.sandbox,
  });
  worker = new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 2 });
});
after(() => app?.close());

/** Relays, runs turn jobs and waits for the simulators until nothing is left (bounded). */
async function settle(): Promise<void> {
  for (let round = 0; round < 100; round++) {
    await app.relay.drain();
    const ran = await worker.drainOnce({ ignoreBackoff: true });
    await app.sandbox.settled();
    const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM outbox');
    if (ran === 0 && rows[0].n === 0) return;
  }
  throw new Error('the sandbox did not settle within 100 rounds');
}

test('…0011 answers the second follow-up and books, its plan run by runDueSteps', async () => {
  const agent = { ...SOLAR_AGENT, contactPlan: { window: ALWAYS_OPEN } };
  const ws = await app.createWorkspace('whatsapp', { agent } as unknown as WorkspaceConfig);
  const created = await postLead(app.http, ws.sandboxKey, {
    name: 'Ada Sandbox',
    phone: '+1 555 205 0011',
    email: 'ada@example.com',
    consent: true,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  const leadId = created.body.leadId;
  await settle();
  // 24 h for a live lead: 24 minutes in the sandbox.
  const first = await pendingStep(app, leadId);
  assert.equal(first?.kind, 'template');
  assert.ok(first!.at.getTime() - clock.now <= 24 * 60_000 + 1000, String(first!.at));
  for (let i = 0; i < 2; i++) {
    clock.advance(60 * 60_000);
    assert.deepEqual(await runDueSteps(app, clock), ['attempted']);
    await settle();
  }
  const got = (await getLead(app.http, ws.sandboxKey, leadId)).body;
  assert.equal(got.lead.status, 'booked');
  const attempted = await timeline(app, leadId, ['contact.attempted', 'contact.reached']);
  assert.deepEqual(
    attempted.map((e) => [e.type, e.data.attempt]),
    [
      ['contact.attempted', 1],
      ['contact.attempted', 2],
      ['contact.attempted', 3],
      ['contact.reached', 3],
    ],
  );
});

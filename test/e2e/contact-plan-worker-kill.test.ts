import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { postLead } from '../helpers/http.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';
import { eventually, spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';

// A contact plan's step lives in PostgreSQL and pg-boss, not in a process: a `leadintake worker`
// killed (SIGKILL) once it has taken the step neither loses it nor makes it twice — the next worker
// carries it out, once (docs/FOLLOW-UP.md).

let app: TestApp;
let dir: string;
const children: WorkerProcess[] = [];

before(async () => {
  app = await startTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-plan-kill-'));
});

after(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await app?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const workerEnv = {
  LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  LOG_LEVEL: 'warn',
  DB_POOL_MAX: '4',
  JOB_HEARTBEAT_SECONDS: '10',
  JOB_MONITOR_SECONDS: '1',
  JOB_POLL_SECONDS: '1',
  WORKER_CONCURRENCY: '2',
};

describe('a contact plan and a killed worker', () => {
  it('the follow-up is sent once, by the next worker', { timeout: 180_000 }, async () => {
    const ws = await app.createWorkspace('whatsapp');
    // A sandbox lead that never replies (…0004); its plan's first follow-up is due in 2 seconds.
    const created = await postLead(app.http, ws.sandboxKey, {
      name: 'Kill Test',
      phone: '+1 555 302 0004',
      consent: true,
    });
    assert.equal(created.status, 201);
    const leadId = created.body.leadId as string;
    await app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
    // A calling window open around the clock: the test runs whatever the hour.
    await app.db.pool.query(
      `UPDATE workspaces SET agent = jsonb_build_object(
         'persona', jsonb_build_object('agentName', 'Alex', 'company', 'Acme',
         'offer', 'a consultation', 'tone', 'brief'), 'timeZone', 'UTC', 'questions', '[]'::jsonb, 'criteria', '',
         'contactPlan', jsonb_build_object('window', jsonb_build_object(
           'days', '["mon","tue","wed","thu","fri","sat","sun"]'::jsonb,
           'start', '00:00', 'end', '24:00'))) WHERE id = $1`,
      [ws.workspaceId],
    );
    await app.db.pool.query(
      `SELECT contact_plan_schedule($1, 'template', now() + interval '2 seconds', 'first follow-up',
         '{"followUp": 1}')`,
      [leadId],
    );
    await app.relay.drain();
    const env = { ...workerEnv, DATABASE_URL: app.db.url, LEADINTAKE_DATA_DIR: path.join(dir, 'data') };

    const first = spawnWorker(env);
    children.push(first);
    // Killed as soon as it has taken the step (or, if it was quicker, after it made it).
    await eventually(
      'the first worker to take the step',
      async () => {
        const { rows } = await app.db.pool.query(
          `SELECT 1 FROM contact_plans WHERE lead_id = $1 AND (in_flight_since IS NOT NULL OR next_kind IS NULL)`,
          [leadId],
        );
        return rows.length > 0 ? true : undefined;
      },
      60_000,
    );
    assert.equal(await first.kill('SIGKILL'), null);
    const second = spawnWorker(env);
    children.push(second);

    const attempted = await eventually(
      'the follow-up to be recorded',
      async () => {
        const { rows } = await app.db.pool.query(
          `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'contact.attempted'`,
          [leadId],
        );
        return rows.length > 0 ? rows : undefined;
      },
      150_000,
    );
    // Give a duplicate the chance to show itself: the next worker's poll, then its retries.
    await new Promise((r) => setTimeout(r, 3000));
    const { rows: again } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM lead_events WHERE lead_id = $1 AND type = 'contact.attempted'`,
      [leadId],
    );
    const { rows: sent } = await app.db.pool.query(
      `SELECT count(*)::int AS n FROM whatsapp_messages
        WHERE lead_id = $1 AND direction = 'outbound' AND kind = 'template'`,
      [leadId],
    );
    assert.equal(again[0].n, 1, second.output());
    assert.equal(sent[0].n, 1, second.output());
    assert.equal(attempted[0].data.kind, 'template');
  });
});

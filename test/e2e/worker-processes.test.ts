import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { freePort } from '../../src/db/embedded.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { eventually, spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';

// `leadintake serve` runs the job handlers in-process unless --no-worker; `leadintake worker`
// runs them alone; SIGTERM lets running turns finish, or releases them to another worker.

const BIN = fileURLToPath(new URL('../../bin/leadintake.js', import.meta.url));
// What `npm start` runs: the compiled build (scripts/run-tests.ts builds it before the suite).
const COMPILED = fileURLToPath(new URL('../../dist/cli/main.js', import.meta.url));

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };
const children: Array<{ kill(signal?: NodeJS.Signals): Promise<number | null> }> = [];

before(async () => {
  h = await startWhatsappHarness({ startRelay: true });
  ws = await h.workspace('twilio');
});
after(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await h.close();
});

/** Stops every child started so far, so the next test controls who runs turns. */
async function stopAll(): Promise<void> {
  await Promise.all(children.splice(0).map((c) => c.kill('SIGTERM')));
}

const query = async (sql: string, values: unknown[] = []) => (await h.app.db.pool.query(sql, values)).rows;
const sentTo = (phone: string) => h.twilio.messages.filter((m) => m.to === phone);

async function startServe(args: string[], entry = BIN): Promise<{ url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [entry, 'serve', '--port', String(port), ...args], {
    env: { PATH: process.env.PATH ?? '', ...h.workerEnv({ JOB_POLL_SECONDS: '1' }) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  children.push({ kill: async (signal = 'SIGKILL') => (child.exitCode === null && child.kill(signal), exited) });
  const url = `http://127.0.0.1:${port}`;
  await eventually(
    'serve to answer',
    async () =>
      (await fetch(`${url}/healthz`).then(
        (r) => r.ok,
        () => false,
      )) || undefined,
    30_000,
  );
  return { url };
}

async function postTo(url: string): Promise<{ leadId: string; phone: string }> {
  const body = validLead({ phone: uniquePhone() });
  const res = await fetch(`${url}/api/public/leads`, {
    method: 'POST',
    headers: { authorization: `Bearer ${ws.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 201);
  return {
    leadId: ((await res.json()) as { leadId: string }).leadId,
    phone: `+${String(body.phone).replace(/\D/g, '')}`,
  };
}

function worker(extra: Record<string, string> = {}): WorkerProcess {
  const w = spawnWorker(h.workerEnv({ JOB_POLL_SECONDS: '1', ...extra }));
  children.push(w);
  return w;
}

describe('where the job handlers run', { concurrency: false }, () => {
  it(
    'serve runs them in-process: ' +
      'a POST is followed by the first WhatsApp message (the compiled build npm start runs)',
    async () => {
      const { url } = await startServe([], COMPILED);
      const { phone } = await postTo(url);
      await eventually('the template', async () => (sentTo(phone).length === 1 ? true : undefined), 30_000);
      assert.equal(sentTo(phone)[0]!.kind, 'template');
    },
  );

  it('serve --no-worker leaves the turn to a worker process', async () => {
    await stopAll();
    const { url } = await startServe(['--no-worker']);
    const { leadId, phone } = await postTo(url);
    // Relayed into the queue, and nobody takes it: no process with job handlers is running.
    const relayed = await eventually('the job', async () => {
      const rows = await query(`SELECT state FROM pgboss.job WHERE name = 'agent-turn' AND data->>'leadId' = $1`, [
        leadId,
      ]);
      return rows.length ? rows : undefined;
    });
    assert.deepEqual(relayed, [{ state: 'created' }]);
    assert.equal(sentTo(phone).length, 0);
    worker();
    await eventually('the template', async () => (sentTo(phone).length === 1 ? true : undefined), 30_000);
  });
});

describe('shutdown', { concurrency: false }, () => {
  async function leadInTurn(): Promise<{ leadId: string; phone: string }> {
    const raw = uniquePhone();
    const phone = `+${raw.replace(/\D/g, '')}`;
    const res = await postLead(h.app.http, ws.apiKey, validLead({ phone: raw }));
    const leadId = res.body.leadId as string;
    await eventually('the template', async () => (sentTo(phone).length === 1 ? true : undefined), 30_000);
    await h.leadSays('twilio', ws.slug, phone, PERSONA_PHRASES.answer);
    await eventually('the turn to be generating', async () =>
      (await query(`SELECT 1 FROM agent_turns WHERE lead_id = $1 AND state = 'generating'`, [leadId])).length
        ? true
        : undefined,
    );
    return { leadId, phone };
  }

  it('SIGTERM lets a running turn finish before the process exits', async () => {
    await stopAll();
    h.chat.setDelay(1_500);
    const w = worker({ SHUTDOWN_GRACE_SECONDS: '30' });
    try {
      const { leadId, phone } = await leadInTurn();
      const code = await w.kill('SIGTERM');
      assert.equal(code, 0, w.output());
      // Finished by the stopping process itself: sent, on the job's first attempt.
      assert.equal(sentTo(phone).length, 2);
      const jobs = await query(
        `SELECT state, retry_count FROM pgboss.job WHERE name = 'agent-turn'
          AND data->>'leadId' = $1 ORDER BY created_on DESC LIMIT 1`,
        [leadId],
      );
      assert.deepEqual(jobs[0], { state: 'completed', retry_count: 0 });
    } finally {
      h.chat.setDelay(0);
    }
  });

  it('SIGTERM past the grace period releases the turn: another worker finishes it, sent once', async () => {
    await stopAll();
    h.chat.setDelay(4_000);
    const first = worker({ SHUTDOWN_GRACE_SECONDS: '1' });
    let leadId = '';
    let phone = '';
    try {
      ({ leadId, phone } = await leadInTurn());
      const code = await first.kill('SIGTERM');
      assert.equal(code, 0, first.output());
      assert.equal(sentTo(phone).length, 1, 'not sent by the stopping worker');
    } finally {
      h.chat.setDelay(0);
    }
    worker();
    await eventually(
      'the answer from the other worker',
      async () => (sentTo(phone).length === 2 ? true : undefined),
      30_000,
    );
    // The send lands before the worker records it and completes the job: wait for that too. The
    // lead has two jobs (the POST's and the inbound message's); which of them was running the reply
    // when the first worker stopped depends on timing, and both were released. Every job of the
    // lead ends completed, and the reply's was run again (retry_count 1).
    const jobs = await eventually(
      'every turn job of the lead to complete',
      async () => {
        const rows = await query(
          `SELECT state, retry_count FROM pgboss.job WHERE name = 'agent-turn' AND data->>'leadId' = $1`,
          [leadId],
        );
        return rows.every((j) => j.state === 'completed') ? rows : undefined;
      },
      60_000,
    );
    assert.ok(
      jobs.some((j) => j.retry_count === 1),
      JSON.stringify(jobs),
    );
    assert.equal(sentTo(phone).length, 2, 'sent once by the second worker');
  });
});

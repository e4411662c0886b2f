import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CHAT_FAILURES } from '../../src/simulators/chat-model/chat-simulator.ts';
import { scriptedReply } from '../../src/simulators/chat-model/scripted-policy.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { eventually, runCli, spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';

// Agent turns run by real `leadintake worker` processes on real PostgreSQL, killed with SIGKILL
// at random moments. The API (with its outbox relay) and the simulators run in this process.
// Heartbeats of 10 s (pg-boss's minimum) and a monitor pass every second bound how long a killed
// worker's turns wait before another worker picks them up.

// Each lead has two turns: the first contact and the answer to the lead's reply.
const LEADS = Number(process.env.DURABILITY_LEADS ?? 250);
const KILLS = Number(process.env.DURABILITY_KILLS ?? 10);

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };
const workers: WorkerProcess[] = [];

function startWorker(extra: Record<string, string> = {}): WorkerProcess {
  const w = spawnWorker(
    h.workerEnv({ JOB_HEARTBEAT_SECONDS: '10', JOB_MONITOR_SECONDS: '1', WORKER_CONCURRENCY: '8', ...extra }),
  );
  workers.push(w);
  return w;
}

before(async () => {
  h = await startWhatsappHarness({ startRelay: true, chatDelayMs: 40 });
  ws = await h.workspace('twilio');
});
after(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  await h.close();
});

const query = async (sql: string, values: unknown[] = []) => (await h.app.db.pool.query(sql, values)).rows;

async function lead(persona: 'not-a-fit' | null): Promise<{ leadId: string; phone: string }> {
  const raw = uniquePhone();
  const phone = `+${raw.replace(/\D/g, '')}`;
  if (persona) h.persona('twilio', ws.slug, phone, persona);
  const { leadId } = await h.submit(ws.apiKey, { phone: raw });
  return { leadId, phone };
}

/** Jobs of the agent-turn queue not yet finished, and dead letters. */
async function queueState(): Promise<{ open: number; dead: number }> {
  const [r] = await query(`SELECT count(*) FILTER (WHERE name = 'agent-turn'
      AND state IN ('created', 'retry', 'active'))::int AS open,
                                  count(*) FILTER (WHERE name = 'agent-turn-dead')::int AS dead FROM pgboss.job`);
  return r;
}

describe('worker processes', { concurrency: false }, () => {
  it(`${LEADS * 2} turns with the worker SIGKILLed ${KILLS} times: every turn finishes once`, async () => {
    // The leads go in first and the worker starts after, so there is work for the first kill.
    const ids: string[] = [];
    for (let i = 0; i < LEADS; i++) ids.push((await lead('not-a-fit')).leadId);
    let current = startWorker();
    let since = (await query(`SELECT now() AS t`))[0].t as Date;
    for (let k = 0; k < KILLS; k++) {
      await new Promise((r) => setTimeout(r, 150 + Math.floor(Math.random() * 600)));
      // Kill only while this worker holds turns: a kill while it is still starting up (seen on a
      // fast machine, every time) interrupts nothing, and the test would prove nothing.
      const held = await eventually(
        'the worker to hold a turn',
        async () => {
          const [r] = await query(
            `SELECT count(*) FILTER (WHERE state = 'active' AND started_on >= $1)::int AS held,
                                        count(*) FILTER (WHERE state IN ('created', 'retry', 'active'))::int AS open
                                   FROM pgboss.job WHERE name = 'agent-turn'`,
            [since],
          );
          return r.held > 0 || r.open === 0 ? r : undefined;
        },
        30_000,
      );
      if (held.open === 0) break;
      await current.kill('SIGKILL');
      current = startWorker();
      since = (await query(`SELECT now() AS t`))[0].t as Date;
    }
    const done = await eventually(
      'every turn to finish',
      async () => {
        const [r] = await query(
          `SELECT count(*) FILTER (WHERE state = 'sent')::int AS sent, count(*)::int AS total FROM agent_turns`,
        );
        const q = await queueState();
        return r.sent === LEADS * 2 && q.open === 0 ? { ...r, ...q } : undefined;
      },
      90_000,
    ).catch(async (err) => {
      const turns = await query(`SELECT state, kind, count(*)::int AS n FROM agent_turns GROUP BY 1, 2`);
      const jobs = await query(`SELECT name, state, retry_count, count(*)::int AS n FROM pgboss.job GROUP BY 1, 2, 3`);
      const outbox = await query(`SELECT count(*)::int AS n FROM outbox`);
      return assert.fail(`${(err as Error).message}\n${JSON.stringify({ turns, jobs, outbox })}\n${current.output()}`);
    });
    assert.deepEqual(done, { sent: LEADS * 2, total: LEADS * 2, open: 0, dead: 0 });

    const leads = await query(
      `SELECT status, count(*)::int AS n FROM leads WHERE id = ANY($1::uuid[]) GROUP BY status`,
      [ids],
    );
    assert.deepEqual(leads, [{ status: 'unqualified', n: LEADS }]);
    // Sent once: one provider message per deterministic key, except copies sent in the window
    // between the provider's acceptance and our commit, which the delivery callbacks record.
    const byKey = new Map<string, number>();
    for (const m of h.twilio.messages) {
      const key = new URL(m.params.StatusCallback!).searchParams.get('outboundKey')!;
      byKey.set(key, (byKey.get(key) ?? 0) + 1);
    }
    assert.equal(byKey.size, LEADS * 2);
    const copies = [...byKey.values()].reduce((a, n) => a + n - 1, 0);
    const [recorded] = await query(`SELECT count(*)::int AS n FROM lead_events WHERE type = 'message.duplicate_send'`);
    assert.ok(copies <= KILLS * 8, `${copies} duplicate sends`);
    if (copies > 0) assert.ok(recorded.n > 0, 'duplicates are recorded by the delivery callbacks');
    // The kills did land on running turns (else this test proves nothing).
    const [retried] = await query(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'agent-turn' AND retry_count > 0`,
    );
    assert.ok(retried.n > 0, 'no turn was interrupted by a kill');
    // The last sends' delivery callbacks may still be on their way to the app.
    await h.twilio.idle();
    const [outbound] = await query(
      `SELECT count(*)::int AS n FROM whatsapp_messages
        WHERE direction = 'outbound' AND status NOT IN ('delivered', 'read')`,
    );
    assert.equal(outbound.n, 0);
  });

  it('10 messages within 100 ms: the turns run one at a time, in order, and answer all of them', async () => {
    const worker2 = startWorker();
    const { leadId, phone } = await lead(null);
    await eventually('the first contact', async () =>
      (await query(`SELECT 1 FROM agent_turns WHERE lead_id = $1 AND state = 'sent'`, [leadId])).length
        ? true
        : undefined,
    );
    h.chat.setDelay(100);
    try {
      // Ten messages spread over about 100 ms: the first turn starts while the rest still arrive.
      const posted: Promise<void>[] = [];
      for (let i = 0; i < 10; i++) {
        posted.push(h.leadSays('twilio', ws.slug, phone, `Message ${i + 1}`));
        await new Promise((r) => setTimeout(r, 10));
      }
      await Promise.all(posted);
      await eventually('every message answered', async () => {
        const [r] = await query(
          `SELECT count(*) FILTER (WHERE turn_id IS NULL)::int AS open
            FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound'`,
          [leadId],
        );
        const busy = await query(`SELECT 1 FROM agent_turns WHERE lead_id = $1 AND state IN ('generating', 'ready')`, [
          leadId,
        ]);
        const q = await queueState();
        return r.open === 0 && busy.length === 0 && q.open === 0 ? true : undefined;
      });
    } finally {
      h.chat.setDelay(40);
      await worker2.kill('SIGTERM');
    }
    const turns = await query(
      `SELECT t.id, t.created_at, t.updated_at, t.state, array_agg(m.id::int ORDER BY m.id) AS inbound
         FROM agent_turns t JOIN whatsapp_messages m ON m.turn_id = t.id AND m.direction = 'inbound'
        WHERE t.lead_id = $1 AND t.kind = 'reply' GROUP BY t.id ORDER BY t.id`,
      [leadId],
    );
    assert.ok(turns.length >= 1 && turns.length <= 10);
    for (let i = 1; i < turns.length; i++) {
      // One at a time: each turn began after the previous one had finished (both times from PostgreSQL).
      assert.ok(
        turns[i].created_at >= turns[i - 1].updated_at,
        `turn ${turns[i].id} overlapped turn ${turns[i - 1].id}`,
      );
      // In order: a turn answers only messages that came after those of the turn before.
      assert.ok(Math.min(...turns[i].inbound) > Math.max(...turns[i - 1].inbound));
    }
    assert.equal(turns.flatMap((t) => t.inbound).length, 10);
    const answers = h.twilio.messages.filter((m) => m.to === phone);
    assert.equal(answers.length, 1 + turns.filter((t) => t.state === 'sent').length);
  });

  it('a model failing 3 times then answering: the answer is sent once, on the 4th attempt', async () => {
    const { leadId, phone } = await lead(null);
    await eventually('the first contact', async () =>
      (await query(`SELECT 1 FROM agent_turns WHERE lead_id = $1 AND state = 'sent'`, [leadId])).length
        ? true
        : undefined,
    );
    // Answers only from the 4th request on (the client's own two retries use up three).
    let calls = 0;
    h.chat.setPolicy(() => {
      calls++;
      return { content: 'Thanks! Do you own the property?' };
    });
    h.chat.failNext(CHAT_FAILURES.overloaded(), 3);
    try {
      await h.leadSays('twilio', ws.slug, phone, 'Hello there');
      await eventually(
        'the answer',
        async () => (h.twilio.messages.filter((m) => m.to === phone).length === 2 ? true : undefined),
        30_000,
      );
    } finally {
      h.chat.setPolicy(scriptedReply);
    }
    assert.equal(calls, 1, 'the model answered once: failed attempts are not billed twice');
    // The job is marked completed after its handler returns, so just after the message arrives
    // it may still read `active` (seen on a loaded machine).
    const job = await eventually('the turn job completed', async () => {
      const jobs = await query(
        `SELECT state, retry_count FROM pgboss.job
          WHERE name = 'agent-turn' AND data->>'leadId' = $1 ORDER BY created_on`,
        [leadId],
      );
      return jobs.at(-1)?.state === 'active' ? undefined : jobs.at(-1);
    });
    assert.deepEqual(job, { state: 'completed', retry_count: 1 });
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 2);
  });

  it('a permanent failure goes to the dead-letter queue; `jobs retry` runs it again once fixed', async () => {
    const { leadId, phone } = await lead(null);
    await eventually('the first contact', async () =>
      (await query(`SELECT 1 FROM agent_turns WHERE lead_id = $1 AND state = 'sent'`, [leadId])).length
        ? true
        : undefined,
    );
    // Twilio refuses the workspace's credentials for the answer (a model failure would hand the
    // lead to a person instead: docs/WHATSAPP.md, "When the agent cannot answer").
    h.twilio.failNextSends(1, { status: 401, code: 20003 });
    await h.leadSays('twilio', ws.slug, phone, PERSONA_PHRASES.answer);
    const env = h.workerEnv();
    const dead = await eventually(
      'a dead letter',
      async () => {
        const r = await runCli(['jobs', 'dead', '--json'], env);
        const list = JSON.parse(r.stdout || '[]') as Array<{ id: string; leadId: string; reason: string }>;
        return list.find((d) => d.leadId === leadId);
      },
      30_000,
    );
    assert.match(dead.reason, /refused the workspace's settings/);
    assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 1);
    const retried = await runCli(['jobs', 'retry', dead.id], env);
    assert.equal(retried.code, 0, retried.stderr);
    await eventually(
      'the answer after the retry',
      async () => (h.twilio.messages.filter((m) => m.to === phone).length === 2 ? true : undefined),
      30_000,
    );
    const after = await runCli(['jobs', 'dead'], env);
    assert.match(after.stdout, /No dead-lettered agent turns/);
  });
});

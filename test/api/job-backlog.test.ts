import assert from 'node:assert/strict';
import { after, before, describe as suite, it } from 'node:test';
import type { Job } from 'pg-boss';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { postLead, uniquePhone, validLead } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// A backlog must not wait on the poll. pg-boss workers sleep for the poll
// interval after each fetch once NOTIFY wake-ups stop; with one job per fetch a backlog then
// drained at concurrency / poll interval. Here the jobs exist before the workers start (their
// NOTIFYs went to nobody) and the poll interval is an hour, far beyond this test's time limit (five
// minutes, for a busy machine): only workers that keep fetching while jobs are ready can finish
// (before the change, eight turns ran and the test timed out). No timing is asserted.

const describe = suite;

const LEADS = 200;
let h: WhatsappHarness;

before(async () => {
  h = await startWhatsappHarness();
});
after(() => h.close());

async function drainBacklog(opts: {
  concurrency: number;
  batchSize: number;
  agentOff?: boolean;
}): Promise<{ mostAtOnce: number; batches: number }> {
  const ws = await h.workspace('twilio');
  // With the agent off, no job is a first contact: every job of a batch runs as a turn of its own.
  if (opts.agentOff)
    await h.app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [ws.workspaceId]);
  const phones: string[] = [];
  for (let i = 0; i < LEADS; i += 50) {
    const answers = await Promise.all(
      Array.from({ length: Math.min(50, LEADS - i) }, () => {
        const phone = uniquePhone();
        phones.push(`+${phone.replace(/\D/g, '')}`);
        return postLead(h.app.http, ws.apiKey, validLead({ phone }));
      }),
    );
    for (const a of answers) assert.equal(a.status, 201);
  }
  assert.equal(await h.app.relay.drain(), LEADS);

  const inner = new TurnEngine({
    integrationLog: h.app.integrationLog,
    pool: h.app.db.pool,
    log: h.app.log,
    clock: h.clock.read,
    workspaces: h.app.workspaces,
    providers: defaultConversationProviders(h.app.config, { scheduling: h.app.scheduling }),
  });
  // Counts the turns running at once: never more than the concurrency, however they are fetched.
  let running = 0;
  let mostAtOnce = 0;
  // A batch of first contacts runs on one connection: it counts as one.
  let batches = 0;
  const counted = async <T>(work: () => Promise<T>): Promise<T> => {
    mostAtOnce = Math.max(mostAtOnce, ++running);
    try {
      return await work();
    } finally {
      running -= 1;
    }
  };
  const engine = {
    run: (leadId: string, signal?: AbortSignal) => counted(() => inner.run(leadId, signal)),
    runFirstContacts: (leadIds: string[], signal?: AbortSignal) =>
      counted(() => (batches++, inner.runFirstContacts(leadIds, signal))),
  } as TurnEngine;
  let started = 0;
  let allStarted!: () => void;
  const done = new Promise<void>((resolve) => (allStarted = resolve));
  const onJobStart = (_job: Job<unknown>) => {
    if (++started === LEADS) allStarted();
  };
  const worker = new TurnWorker({
    boss: h.app.boss,
    engine,
    log: h.app.log,
    concurrency: opts.concurrency,
    batchSize: opts.batchSize,
    pollSeconds: 3600,
    onJobStart,
  });
  await worker.start();
  await done;
  await worker.idle();
  await h.app.boss.offWork('agent-turn');

  // The first contacts scheduled their follow-ups (outbox rows): relayed here, so the next drain counts only its leads.
  await h.app.relay.drain();
  const { rows } = await h.app.db.pool.query(
    `SELECT count(*) FILTER (WHERE status = 'in_conversation')::int AS reached,
      count(*)::int AS n FROM leads WHERE workspace_id = $1`,
    [ws.workspaceId],
  );
  assert.deepEqual(rows[0], { reached: opts.agentOff ? 0 : LEADS, n: LEADS });
  const sends = new Map<string, number>();
  for (const m of h.twilio.messages) sends.set(m.to, (sends.get(m.to) ?? 0) + 1);
  for (const phone of phones)
    assert.equal(sends.get(phone), opts.agentOff ? undefined : 1, 'each lead gets its first message once');
  return { mostAtOnce, batches };
}

describe('a backlog of ready turns', () => {
  it(`is drained without waiting for the poll: ${LEADS} first contacts with an hour's poll interval and no NOTIFY`, {
    timeout: 300_000,
  }, async () => {
    const { mostAtOnce } = await drainBacklog({ concurrency: 8, batchSize: 1 });
    assert.ok(mostAtOnce <= 8, `${mostAtOnce} turns at once`);
  });

  it('is drained the same way when each fetch takes a batch ' +
    '(WORKER_BATCH_SIZE): in batches, never more turns at once than the ' +
    'concurrency', {
    timeout: 300_000,
  }, async () => {
    // Five pollers of up to four jobs: up to 20 jobs held, at most 5 turns (or batches) running.
    const { mostAtOnce, batches } = await drainBacklog({ concurrency: 5, batchSize: 4 });
    assert.ok(mostAtOnce > 1 && mostAtOnce <= 5, `${mostAtOnce} turns at once`);
    assert.ok(batches > 0, 'first contacts ran in batches');
  });

  it('in batches whose jobs are not first contacts: each runs as its ' +
    'own turn, never more at once than the concurrency', {
    timeout: 300_000,
  }, async () => {
    // Two pollers of up to eight jobs: up to 16 held, at most 2 running.
    const { mostAtOnce } = await drainBacklog({ concurrency: 2, batchSize: 8, agentOff: true });
    assert.ok(mostAtOnce <= 2, `${mostAtOnce} turns at once`);
  });
});

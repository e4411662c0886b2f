import assert from 'node:assert/strict';
import { after, before, describe as suite, it } from 'node:test';
import type { Job } from 'pg-boss';
import { TurnEngine } from '../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../src/whatsapp/turn-providers.ts';
import { pollerBatches, TurnWorker } from '../src/whatsapp/turn-worker.ts';
import { postLead, uniquePhone, validLead } from './helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from './helpers/whatsapp-harness.ts';

// Issue 18, point 5: a backlog must not wait on the poll. pg-boss workers sleep for the poll
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

async function drainBacklog(opts: { concurrency: number; batchSize?: number }): Promise<{ mostAtOnce: number }> {
  const ws = await h.workspace('twilio');
  const phones: string[] = [];
  for (let i = 0; i < LEADS; i += 50) {
    const answers = await Promise.all(Array.from({ length: Math.min(50, LEADS - i) }, () => {
      const phone = uniquePhone();
      phones.push(`+${phone.replace(/\D/g, '')}`);
      return postLead(h.app.http, ws.apiKey, validLead({ phone }));
    }));
    for (const a of answers) assert.equal(a.status, 201);
  }
  assert.equal(await h.app.relay.drain(), LEADS);

  const inner = new TurnEngine({
    pool: h.app.db.pool, log: h.app.log, clock: h.clock.read, workspaces: h.app.workspaces,
    providers: defaultConversationProviders(h.app.config),
  });
  // Counts the turns running at once: never more than the concurrency, however they are fetched.
  let running = 0;
  let mostAtOnce = 0;
  const engine = {
    run: async (leadId: string, signal?: AbortSignal) => {
      mostAtOnce = Math.max(mostAtOnce, ++running);
      try {
        return await inner.run(leadId, signal);
      } finally {
        running -= 1;
      }
    },
  } as TurnEngine;
  let started = 0;
  let allStarted!: () => void;
  const done = new Promise<void>((resolve) => (allStarted = resolve));
  const onJobStart = (_job: Job<unknown>) => {
    if (++started === LEADS) allStarted();
  };
  const worker = new TurnWorker({ boss: h.app.boss, engine, log: h.app.log, ...opts, pollSeconds: 3600, onJobStart });
  await worker.start();
  await done;
  await worker.idle();
  await h.app.boss.offWork('agent-turn');

  const { rows } = await h.app.db.pool.query(
    `SELECT count(*) FILTER (WHERE status = 'in_conversation')::int AS reached, count(*)::int AS n FROM leads WHERE workspace_id = $1`,
    [ws.workspaceId],
  );
  assert.deepEqual(rows[0], { reached: LEADS, n: LEADS });
  const sends = new Map<string, number>();
  for (const m of h.twilio.messages) sends.set(m.to, (sends.get(m.to) ?? 0) + 1);
  for (const phone of phones) assert.equal(sends.get(phone), 1, 'each lead gets its first message once');
  return { mostAtOnce };
}

describe('a backlog of ready turns', () => {
  it(`is drained without waiting for the poll: ${LEADS} first contacts with an hour's poll interval and no NOTIFY`, { timeout: 300_000 }, async () => {
    const { mostAtOnce } = await drainBacklog({ concurrency: 8 });
    assert.ok(mostAtOnce <= 8, `${mostAtOnce} turns at once`);
  });

  it('is drained the same way when each fetch takes a batch (WORKER_BATCH_SIZE): never more turns at once than the concurrency', { timeout: 300_000 }, async () => {
    // Three pollers: two of batches of 2 and one of 1.
    const { mostAtOnce } = await drainBacklog({ concurrency: 5, batchSize: 2 });
    assert.ok(mostAtOnce > 1 && mostAtOnce <= 5, `${mostAtOnce} turns at once`);
  });
});

describe('pollerBatches', () => {
  it('splits the concurrency into batches of at most the batch size, the last one the remainder', () => {
    assert.deepEqual(pollerBatches(8, 1), [1, 1, 1, 1, 1, 1, 1, 1]);
    assert.deepEqual(pollerBatches(8, 2), [2, 2, 2, 2]);
    assert.deepEqual(pollerBatches(5, 2), [2, 2, 1]);
    assert.deepEqual(pollerBatches(8, 3), [3, 3, 2]);
    assert.deepEqual(pollerBatches(2, 10), [2], 'never a batch larger than the concurrency');
  });
});

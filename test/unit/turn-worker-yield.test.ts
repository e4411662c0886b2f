// Requests first (docs/RELIABILITY.md, "Overload"): while `serve`'s public API is under pressure,
// its in-process turns run one at a time instead of WORKER_CONCURRENCY at once, and all of them
// again once the pressure is gone. The engine here is a stand-in that records how many turns run
// at once; what a turn does is tested elsewhere. No timing: the test waits for states, not for time.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { test } from 'node:test';
import type { Job, PgBoss } from 'pg-boss';
import { createLogger } from '../../src/shared/logger.ts';
import type { TurnJobResult } from '../../src/whatsapp/turn-context.ts';
import type { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';

function harness(underPressure: () => boolean) {
  let running = 0;
  let most = 0;
  const release: Array<() => void> = [];
  const engine = {
    run: async (): Promise<TurnJobResult> => {
      running += 1;
      most = Math.max(most, running);
      await new Promise<void>((r) => release.push(r));
      running -= 1;
      return { kind: 'done', outcome: 'sent' };
    },
  } as unknown as TurnEngine;
  const worker = new TurnWorker({
    boss: {} as PgBoss,
    engine,
    log: createLogger('silent'),
    concurrency: 4,
    yieldToApi: underPressure,
  });
  const job = (controller = new AbortController()) =>
    ({
      id: crypto.randomUUID(),
      data: { leadId: crypto.randomUUID() },
      retryCount: 0,
      signal: controller.signal,
    }) as unknown as Job<unknown>;
  const until = async (cond: () => boolean) => {
    for (let i = 0; i < 1000 && !cond(); i++) await new Promise((r) => setTimeout(r, 5));
    assert.ok(cond(), 'state reached');
  };
  return { worker, job, release, until, stats: () => ({ running, most }) };
}

test('under pressure one turn runs at a time; when it ends the pressure the waiting ones all run', async () => {
  let pressure = true;
  const h = harness(() => pressure);
  const results = [h.worker.runJob(h.job()), h.worker.runJob(h.job()), h.worker.runJob(h.job())];
  await h.until(() => h.stats().running === 1);
  h.release.shift()!();
  await h.until(() => h.release.length === 1 && h.stats().running === 1);
  assert.equal(h.stats().most, 1, 'never two at once under pressure');
  pressure = false;
  await h.until(() => h.stats().running === 2);
  h.release.splice(0).forEach((r) => r());
  await h.until(() => h.release.length === 0 && h.stats().running === 0);
  assert.deepEqual(
    (await Promise.all(results)).map((r) => r.status),
    ['completed', 'completed', 'completed'],
  );
});

test('without pressure the turns run side by side', async () => {
  const h = harness(() => false);
  const results = [h.worker.runJob(h.job()), h.worker.runJob(h.job()), h.worker.runJob(h.job())];
  await h.until(() => h.stats().running === 3);
  h.release.splice(0).forEach((r) => r());
  await Promise.all(results);
});

test('a turn stopped while it waits (shutdown) is handed back to the queue without running', async () => {
  const h = harness(() => true);
  const first = h.worker.runJob(h.job());
  await h.until(() => h.stats().running === 1);
  const stop = new AbortController();
  const waiting = h.worker.runJob(h.job(stop));
  stop.abort();
  assert.equal((await waiting).status, 'failed');
  assert.equal(h.stats().most, 1);
  h.release.shift()!();
  assert.equal((await first).status, 'completed');
});

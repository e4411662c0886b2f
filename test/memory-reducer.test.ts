// Giving memory back after a flood (src/http/memory-reducer.ts): when the reducer collects (its
// policy, on a made-up clock and RSS), what counts as quiet, and that the collection it runs is a
// real, full one. No timing: the policy is driven tick by tick.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import vm from 'node:vm';
import { MemoryReducer, memoryReducingCollection, quietEnough } from '../src/http/memory-reducer.ts';
import type { PressureReport } from '../src/http/overload-guard.ts';

const MB = 1024 * 1024;

function reducerOn(state: { rss: number; quiet: boolean; now: number }) {
  const collected: number[] = [];
  const reducer = new MemoryReducer({
    rss: () => state.rss,
    quiet: () => state.quiet,
    collect: () => {
      collected.push(state.now);
      state.rss -= 40 * MB; // what the collection gives back
    },
    growthBytes: 16 * MB,
    minIntervalMs: 20_000,
    now: () => state.now,
  });
  return { reducer, collected };
}

describe('memory reducer policy', () => {
  test('collects once RSS has grown past the threshold over its low point and the process is quiet', () => {
    const s = { rss: 110 * MB, quiet: true, now: 0 };
    const { reducer, collected } = reducerOn(s);
    s.rss = 125 * MB;
    assert.equal(reducer.tick(), false, '15 MB of growth is not enough');
    s.rss = 190 * MB;
    s.quiet = false;
    s.now = 5_000;
    assert.equal(reducer.tick(), false, 'never while the public API is busy');
    s.quiet = true;
    s.now = 10_000;
    assert.equal(reducer.tick(), true);
    assert.deepEqual(collected, [10_000]);
  });

  test('the low point is measured after the collection, so steady memory is not collected again', () => {
    const s = { rss: 110 * MB, quiet: true, now: 0 };
    const { reducer, collected } = reducerOn(s);
    s.rss = 190 * MB;
    assert.equal(reducer.tick(), true);
    assert.equal(s.rss, 150 * MB);
    for (s.now = 30_000; s.now < 300_000; s.now += 5_000) {
      s.rss = 150 * MB + (s.now % 10_000 === 0 ? 8 * MB : 0);
      assert.equal(reducer.tick(), false);
    }
    assert.equal(collected.length, 1);
  });

  test('a low point below the start lowers the bar; collections are at least the interval apart', () => {
    const s = { rss: 150 * MB, quiet: true, now: 0 };
    const { reducer, collected } = reducerOn(s);
    s.rss = 100 * MB;
    assert.equal(reducer.tick(), false);
    s.rss = 140 * MB; // 40 MB over the new low point, still under the start
    s.now = 1_000;
    assert.equal(reducer.tick(), true);
    s.rss = 200 * MB;
    s.now = 15_000;
    assert.equal(reducer.tick(), false, 'only 14 s after the last one');
    s.now = 21_000;
    assert.equal(reducer.tick(), true);
    assert.deepEqual(collected, [1_000, 21_000]);
  });
});

test('quiet: nothing refused, nothing waiting, at most two requests in flight, few arrived since the last look', () => {
  const report = (p: Partial<PressureReport>): PressureReport => ({
    underPressure: false, inFlight: 0, maxInFlight: 256, waiting: 0, shed: 0, arrived: 0, eventLoopDelayMs: 0, heapUsedBytes: 0, rssBytes: 0, ...p,
  });
  assert.equal(quietEnough(report({})), true);
  assert.equal(quietEnough(report({ inFlight: 2 })), true);
  assert.equal(quietEnough(report({ inFlight: 3 })), false);
  assert.equal(quietEnough(report({ waiting: 1 })), false);
  assert.equal(quietEnough(report({ underPressure: true })), false);
  assert.equal(quietEnough(report({}), 25), true);
  // A flood's first moment: nothing in flight yet, but its requests are arriving.
  assert.equal(quietEnough(report({}), 26), false);
});

test('the collection returns the pages an ordinary full collection keeps', () => {
  const collect = memoryReducingCollection();
  const ordinary = vm.runInNewContext('gc') as (o: object) => void;
  let garbage: object[] | null = Array.from({ length: 600_000 }, (_, i) => ({ i, text: `lead ${i}`, at: new Date(i) }));
  assert.ok(garbage.length > 0);
  const grown = process.memoryUsage();
  garbage = null;
  ordinary({ type: 'major', execution: 'sync' });
  const afterOrdinary = process.memoryUsage();
  collect();
  const afterReducing = process.memoryUsage();
  const mb = (n: number) => Math.round(n / MB);
  const seen = `RSS ${mb(grown.rss)} → ${mb(afterOrdinary.rss)} (ordinary) → ${mb(afterReducing.rss)} MB (reducing)`;
  assert.ok(afterOrdinary.heapUsed < grown.heapUsed - 20 * MB, seen);
  // The ordinary collection keeps the freed pages for reuse (resident); this one gives them back.
  assert.ok(afterReducing.rss < afterOrdinary.rss - 10 * MB, seen);
  assert.equal(typeof (globalThis as { gc?: unknown }).gc, 'undefined', 'no global gc for other code');
});

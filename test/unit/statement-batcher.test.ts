// The batching of small statements (src/db/statement-batcher.ts): what is submitted while a
// statement runs goes into the next one, outputs reach their own callers, an item the database
// refuses fails alone, and a failure no item caused (a lost connection) fails the batch at once.
// The run function stands in for the statement here; test/api/delivery-status-batch.test.ts runs the
// real ones against PostgreSQL.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { StatementBatcher } from '../../src/db/statement-batcher.ts';

const sqlError = (code: string) => Object.assign(new Error(`sqlstate ${code}`), { code });

test(
  'items submitted together go in one statement; ' + 'those submitted meanwhile in the next; outputs in order',
  async () => {
    const batches: number[][] = [];
    let release!: () => void;
    const first = new Promise<void>((r) => (release = r));
    const b = new StatementBatcher<number, number>({
      run: async (items) => {
        batches.push(items);
        if (batches.length === 1) await first;
        return items.map((i) => i * 10);
      },
    });
    const a = [1, 2, 3].map((i) => b.submit(i));
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    const later = [4, 5].map((i) => b.submit(i));
    assert.equal(b.waiting, 2, 'waiting for the statement in flight');
    release();
    assert.deepEqual(await Promise.all([...a, ...later]), [10, 20, 30, 40, 50]);
    assert.deepEqual(batches, [
      [1, 2, 3],
      [4, 5],
    ]);
  },
);

test('at most maxBatch items per statement', async () => {
  const sizes: number[] = [];
  const b = new StatementBatcher<number, number>({
    maxBatch: 4,
    run: async (items) => (sizes.push(items.length), items),
  });
  await Promise.all(Array.from({ length: 10 }, (_, i) => b.submit(i)));
  assert.deepEqual(sizes, [4, 4, 2]);
});

test('an item the database refuses fails alone: the batch is split until it runs by itself', async () => {
  const runs: number[][] = [];
  const b = new StatementBatcher<number, string>({
    run: async (items) => {
      runs.push(items);
      if (items.includes(3)) throw sqlError('22021');
      return items.map(String);
    },
  });
  const results = await Promise.allSettled([1, 2, 3, 4, 5].map((i) => b.submit(i)));
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'fulfilled', 'rejected', 'fulfilled', 'fulfilled'],
  );
  assert.equal(((results[2] as PromiseRejectedResult).reason as { code: string }).code, '22021');
  assert.deepEqual(runs[runs.length - 1], [4, 5]);
  assert.ok(runs.some((r) => r.length === 1 && r[0] === 3));
});

test('a deadlock PostgreSQL broke (40P01) is retried in smaller batches', async () => {
  let calls = 0;
  const b = new StatementBatcher<number, number>({
    run: async (items) => {
      calls++;
      if (items.length > 1) throw sqlError('40P01');
      return items;
    },
  });
  assert.deepEqual(await Promise.all([1, 2].map((i) => b.submit(i))), [1, 2]);
  assert.equal(calls, 3);
});

test('a failure no item caused (a lost connection, 57P01) fails the whole batch with one statement', async () => {
  let calls = 0;
  const b = new StatementBatcher<number, number>({
    run: async () => {
      calls++;
      throw sqlError('57P01');
    },
  });
  const results = await Promise.allSettled([1, 2, 3, 4].map((i) => b.submit(i)));
  assert.ok(results.every((r) => r.status === 'rejected'));
  assert.equal(calls, 1);
  // And the batcher goes on: the next submission gets a statement of its own.
  await assert.rejects(b.submit(5));
  assert.equal(calls, 2);
});

test('a statement that returns the wrong number of outputs fails its items instead of mixing them up', async () => {
  const b = new StatementBatcher<number, number>({ run: async (items) => items.slice(1) });
  const results = await Promise.allSettled([1, 2].map((i) => b.submit(i)));
  assert.ok(results.every((r) => r.status === 'rejected'));
});

test(
  'with maxInFlight 2: what arrives while one statement runs starts a second; ' + 'later items wait for either to end',
  async () => {
    const batches: number[][] = [];
    const gates: Array<() => void> = [];
    const b = new StatementBatcher<number, number>({
      maxInFlight: 2,
      run: async (items) => {
        batches.push(items);
        await new Promise<void>((open) => gates.push(open));
        return items;
      },
    });
    const pass = async () => {
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
    };
    const first = [1, 2].map((i) => b.submit(i));
    await pass();
    const second = [3].map((i) => b.submit(i));
    await pass();
    const third = [4, 5].map((i) => b.submit(i));
    await pass();
    assert.deepEqual(batches, [[1, 2], [3]], 'two statements in flight, the third batch waits');
    assert.equal(b.waiting, 2);
    gates.shift()!();
    assert.deepEqual(await Promise.all(first), [1, 2]);
    await pass();
    assert.deepEqual(batches, [[1, 2], [3], [4, 5]], 'the waiting items went in one statement once the first ended');
    gates.splice(0).forEach((open) => open());
    assert.deepEqual(await Promise.all([...second, ...third]), [3, 4, 5]);
  },
);

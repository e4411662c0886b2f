import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createPool, type Pool } from '../../src/db/pool.ts';
import { DatabaseReadiness } from '../../src/db/readiness.ts';
import { adminUrl } from '../helpers/test-db.ts';

// The probe behind /readyz (src/db/readiness.ts); the 503 and the recovery of a real restart are
// in test/e2e/database-faults.test.ts.

describe('database readiness', () => {
  let pool: Pool;
  before(() => {
    pool = createPool(adminUrl(), 1);
  });
  after(async () => {
    await pool.end();
  });

  it('answers every poll of one moment with one query', async () => {
    let queries = 0;
    const counted = { query: (text: string) => (queries++, pool.query(text)) } as unknown as Pool;
    const readiness = new DatabaseReadiness(counted);
    const answers = await Promise.all(Array.from({ length: 50 }, () => readiness.ready()));
    assert.deepEqual(new Set(answers), new Set([true]));
    assert.equal(await readiness.ready(), true);
    assert.equal(queries, 1);
  });

  it('is not ready when no connection is free within its timeout', async () => {
    const held = await pool.connect();
    try {
      assert.equal(await new DatabaseReadiness(pool).ready(), false);
    } finally {
      held.release();
    }
    assert.equal(await new DatabaseReadiness(pool).ready(), true);
  });

  it('is not ready when an open connection stops answering (packets dropped mid-connection)', async () => {
    const target = new URL(adminUrl());
    const proxy = await blackholeProxy(target.hostname, Number(target.port));
    const via = new URL(target);
    via.port = String(proxy.port);
    const behind = createPool(via.toString(), 1);
    try {
      await behind.query('SELECT 1');
      proxy.dropEverything();
      assert.equal(await new DatabaseReadiness(behind).ready(), false);
    } finally {
      await proxy.close();
      await behind.end().catch(() => {});
    }
  });

  it('is not ready when the database does not answer (a host that accepts and stays silent)', async () => {
    const sockets = new Set<net.Socket>();
    const silent = net.createServer((s) => void sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as net.AddressInfo;
    const unanswered = createPool(`postgres://postgres@127.0.0.1:${port}/none`, 1);
    try {
      assert.equal(await new DatabaseReadiness(unanswered).ready(), false);
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
      await unanswered.end().catch(() => {});
    }
  });
});

/** A TCP pass-through to PostgreSQL that can start dropping every byte, as a dead network does. */
async function blackholeProxy(
  host: string,
  port: number,
): Promise<{ port: number; dropEverything(): void; close(): Promise<void> }> {
  let dropping = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect({ host, port });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on('error', () => {});
    }
    client.on('data', (chunk) => void (dropping || upstream.write(chunk)));
    upstream.on('data', (chunk) => void (dropping || client.write(chunk)));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    dropEverything: () => void (dropping = true),
    close: async () => {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

import assert from 'node:assert/strict';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { describe, it } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { listenPublic, type PublicListener } from '../src/http/accept-sockets.ts';

// serve's port on several SO_REUSEPORT sockets (src/http/accept-sockets.ts): every socket's
// connections are served by the one app, a port in use stays an error, and closing waits for
// the requests running on any of them. Linux only, as the sockets themselves.

const linux = process.platform === 'linux';

function appWith(route?: (req: { raw: http.IncomingMessage }) => Promise<unknown>): FastifyInstance {
  const app = Fastify();
  app.get('/hello', async () => ({ ok: true }));
  if (route) app.get('/slow', route);
  return app;
}

/** A GET; without an agent each request is a connection of its own (a new hash, a new socket maybe). */
function get(port: number, path: string, agent: http.Agent | false = false): Promise<number> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

const portOf = (address: string) => Number(new URL(address).port);

/** Counts the app's connections that came through the extra sockets, as they arrive. */
function countExtra(app: FastifyInstance, listener: () => PublicListener): () => number {
  let n = 0;
  app.server.on('connection', (socket) => {
    if (listener().cameThroughExtraSocket(socket)) n++;
  });
  return () => n;
}

describe('listening on several sockets of one port', { skip: !linux && 'SO_REUSEPORT sockets are Linux only' }, () => {
  it('serves the connections of every socket with the one app', async () => {
    const app = appWith();
    const listener = await listenPublic(app, { port: 0, host: '127.0.0.1', backlog: 511, sockets: 8 });
    const extra = countExtra(app, () => listener);
    try {
      assert.equal(listener.sockets, 8);
      const port = portOf(listener.address);
      const statuses = await Promise.all(Array.from({ length: 64 }, () => get(port, '/hello')));
      assert.deepEqual(statuses, Array(64).fill(200));
      // 64 connections spread by the kernel over 8 sockets: all on Fastify's own is (1/8)^64.
      assert.ok(extra() > 0, 'the extra sockets accepted connections');
    } finally {
      await listener.close();
    }
  });

  it('kept-alive idle connections of the extra sockets do not hold the close', { timeout: 30_000 }, async () => {
    const app = appWith();
    const listener = await listenPublic(app, { port: 0, host: '127.0.0.1', backlog: 511, sockets: 8 });
    const extra = countExtra(app, () => listener);
    const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
    try {
      const port = portOf(listener.address);
      const statuses = await Promise.all(Array.from({ length: 32 }, () => get(port, '/hello', agent)));
      assert.deepEqual(statuses, Array(32).fill(200));
      assert.ok(extra() > 0);
      // Without the app's close ending them, these connections would stay open for the
      // keep-alive timeout and the close below would wait for them.
      await listener.close();
    } finally {
      agent.destroy();
    }
  });

  it('a port something listens on already is refused with EADDRINUSE, as with one socket', async () => {
    const first = await listenPublic(appWith(), { port: 0, host: '127.0.0.1', backlog: 511, sockets: 4 });
    const port = portOf(first.address);
    try {
      const app = appWith();
      await assert.rejects(listenPublic(app, { port, host: '127.0.0.1', backlog: 511, sockets: 4 }), { code: 'EADDRINUSE' });
      await app.close();
      const plain = net.createServer();
      await assert.rejects(new Promise((resolve, reject) => plain.once('error', reject).listen({ port, host: '127.0.0.1' }, () => resolve(null))), { code: 'EADDRINUSE' });
    } finally {
      await first.close();
    }
    // Closed: every socket let the port go.
    const again = await listenPublic(appWith(), { port, host: '127.0.0.1', backlog: 511, sockets: 1 });
    assert.equal(again.sockets, 1);
    await again.close();
  });

  it('closing waits for the requests running on the extra sockets, then lets them finish', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let held = 0;
    let entered = 0;
    let listener!: PublicListener;
    const app: FastifyInstance = appWith(async (req: { raw: http.IncomingMessage }) => {
      entered++;
      // Held: requests that came through an extra socket (Fastify's own server waits for its own).
      if (!listener.cameThroughExtraSocket(req.raw.socket)) return { ok: true };
      held++;
      await gate;
      return { ok: true };
    });
    const extra = countExtra(app, () => listener);
    listener = await listenPublic(app, { port: 0, host: '127.0.0.1', backlog: 511, sockets: 4 });
    const port = portOf(listener.address);
    const requests = Array.from({ length: 16 }, () => get(port, '/slow'));
    // Every request in the handler before the close: a connection still in a listening socket's
    // queue when that socket closes is reset by the kernel, and a request Fastify reads after its
    // close began is answered 503; neither is what this test is about.
    while (entered < 16) await new Promise((r) => setImmediate(r));
    assert.ok(held > 0 && held === extra(), 'some requests came through the extra sockets, all of them held');
    let closed = false;
    const closing = listener.close().then(() => (closed = true));
    for (let i = 0; i < 50; i++) await new Promise((r) => setImmediate(r));
    assert.equal(closed, false, 'close waits for the running requests');
    release();
    assert.deepEqual(await Promise.all(requests), Array(16).fill(200));
    await closing;
  });
});

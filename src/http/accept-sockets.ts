import net, { type AddressInfo } from 'node:net';
import type { FastifyInstance, FastifyListenOptions } from 'fastify';

// The service listens on several sockets of one port (SO_REUSEPORT), not one (docs/RELIABILITY.md,
// "Accepting a flood of connections"). Since libuv 1.45 (Node 20) a listening socket accepts one
// connection per turn of the event loop, and under a flood a turn takes tens to hundreds of
// milliseconds (every connection that has a request waiting is served in it): 2,048 connections
// opened at once then waited in the kernel's accept queue for up to 5 s (measured, a lone
// listener) before the service saw their request, however short the line behind it. With N
// sockets the kernel spreads new connections over N queues and each turn accepts one from each.
// The extra sockets hand their connections to the same HTTP server, which serves them like its own.

export interface PublicListener {
  /** The address the service listens on, as Fastify reports it. */
  address: string;
  /** Sockets listening on the port. */
  sockets: number;
  /** Whether this connection came through one of the sockets other than Fastify's own. */
  cameThroughExtraSocket(socket: net.Socket): boolean;
  /** Stops accepting on every socket, closes the app, and waits for the connections the extra sockets accepted. */
  close(): Promise<void>;
}

export interface ListenOptions {
  port: number;
  host: string;
  backlog: number;
  /** Listening sockets (HTTP_ACCEPT_SOCKETS); 1, or a platform without SO_REUSEPORT: a single ordinary socket. */
  sockets: number;
}

export async function listenPublic(app: FastifyInstance, o: ListenOptions): Promise<PublicListener> {
  if (o.sockets <= 1 || process.platform !== 'linux') {
    const address = await app.listen({ port: o.port, host: o.host, backlog: o.backlog });
    return { address, sockets: 1, cameThroughExtraSocket: () => false, close: () => app.close() };
  }
  // SO_REUSEPORT would let us join another process's sockets on this port (same user) and split
  // its traffic without a word. A port in use must stay an error, as with a single socket.
  if (o.port !== 0) await refuseIfInUse(o.host, o.port);
  // Fastify hands its options to Node's server.listen, which knows reusePort (Node 22.12+); its types do not.
  const address = await app.listen({ port: o.port, host: o.host, backlog: o.backlog, reusePort: true } as FastifyListenOptions);
  const { port } = app.server.address() as AddressInfo;
  const handedOver = new WeakSet<net.Socket>();
  const handOver = (socket: net.Socket) => {
    handedOver.add(socket);
    app.server.emit('connection', socket);
  };
  const extra = Array.from({ length: o.sockets - 1 }, () => net.createServer(handOver));
  try {
    await Promise.all(extra.map((server) => listen(server, { port, host: o.host, backlog: o.backlog, reusePort: true })));
  } catch (err) {
    await Promise.all(extra.map(closed));
    await app.close();
    throw err;
  }
  return {
    address,
    sockets: o.sockets,
    cameThroughExtraSocket: (socket) => handedOver.has(socket),
    close: async () => {
      // First no socket accepts; then the app closes (idle connections, the extra sockets' too,
      // are ended and a request still running finishes); then the extra sockets' own connections
      // have ended, which their close waits for.
      const ended = extra.map(closed);
      await app.close();
      await Promise.all(ended);
    },
  };
}

function listen(server: net.Server, options: net.ListenOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

function closed(server: net.Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Throws EADDRINUSE, as a plain listen would, when anything listens on host:port already. */
async function refuseIfInUse(host: string, port: number): Promise<void> {
  const probe = net.createServer();
  await listen(probe, { host, port, exclusive: true });
  await closed(probe);
}

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/** A provider simulator's HTTP server on 127.0.0.1 (tests and the demo only). */
export interface LocalHttpServer {
  server: Server;
  url: string;
  port: number;
  /** Stops listening and destroys open sockets (keep-alive, hanging or slow requests). */
  close(): Promise<void>;
}

/**
 * Starts `handle` on 127.0.0.1 (`port` 0: any free one). A handler that throws gets
 * `onFailure` (the simulated provider's own 500 body) unless it already answered.
 */
export async function startLocalHttpServer(
  handle: (req: IncomingMessage, res: ServerResponse) => Promise<void>,
  opts: { port?: number; onFailure: (res: ServerResponse) => void },
): Promise<LocalHttpServer> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) opts.onFailure(res);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return {
    server,
    url: `http://127.0.0.1:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

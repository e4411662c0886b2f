import {
  Agent,
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { request as httpsRequest } from 'node:https';
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

// The simulators' own outgoing webhooks (status callbacks, inbound messages) on kept-alive
// connections through node:http rather than fetch: a burst makes three of them per lead, and
// fetch's stream machinery made the simulators cost more CPU than the requests' work
// (docs/decisions/0011-undici-for-outbound-http.md: fetch's objects cost more CPU than the
// request). Tests, the demo and the bench all use the same path.
const webhookAgent = new Agent({ keepAlive: true, maxSockets: 64 });

// The requests in flight under each caller's signal, destroyed together when it aborts: one abort
// listener per signal. Giving each request the signal itself added a listener per request, and an
// EventTarget looks through all of its listeners on every add — in a burst thousands of requests
// wait for one of the agent's sockets, and those adds were a tenth of the bench's process.
const inFlight = new WeakMap<AbortSignal, Set<ClientRequest>>();

function requestsOf(signal: AbortSignal): Set<ClientRequest> {
  const known = inFlight.get(signal);
  if (known) return known;
  const requests = new Set<ClientRequest>();
  inFlight.set(signal, requests);
  signal.addEventListener(
    'abort',
    () => {
      for (const req of requests) req.destroy(abortError());
      requests.clear();
    },
    { once: true },
  );
  return requests;
}

// What node:http rejects with when a request's own signal aborts.
const abortError = () => new DOMException('The operation was aborted', 'AbortError');

/**
 * POSTs `body` to `url` and returns the answer's status and text; rejects on a network error, a
 * timeout (`timeoutMs`, as the provider gives up) or `signal`.
 */
export function postToWebhook(
  url: string,
  headers: Record<string, string>,
  body: string,
  opts: { timeoutMs: number; signal?: AbortSignal },
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const { signal } = opts;
    if (signal?.aborted) {
      reject(abortError());
      return;
    }
    const target = new URL(url);
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = send(
      target,
      {
        method: 'POST',
        agent: target.protocol === 'https:' ? undefined : webhookAgent,
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        timeout: opts.timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', reject);
      },
    );
    if (signal) {
      const requests = requestsOf(signal);
      requests.add(req);
      req.once('close', () => requests.delete(req));
    }
    req.on('timeout', () => req.destroy(new Error(`no answer within ${opts.timeoutMs} ms`)));
    req.on('error', reject);
    req.end(body);
  });
}

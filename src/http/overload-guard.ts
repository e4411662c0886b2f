import underPressure from '@fastify/under-pressure';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { AppError } from '../shared/errors.ts';
import { renderError } from './error-handler.ts';
import { WaitingLine } from './waiting-line.ts';

// Load shedding (docs/RELIABILITY.md, "Overload"). Without it every request is accepted and waits
// its turn: at 2,048 connections the public API answered in up to 10 s and RSS stayed ~360 MB.
// Past a bound, the public API answers at once 503 `Service is busy; retry shortly.` with
// Retry-After, so a form can tell its user, and the work (and memory) in flight stays bounded.
//
// Two signals:
// - Requests of the public API in flight, counted here per request (a few lines of our own:
//   @fastify/under-pressure samples process metrics on a timer and has no such count, and by the
//   time a sample shows the pressure thousands of requests can already be queued for the database).
//   Past the bound a request first waits in a short line (bounded in length and in time) for a
//   slot, and only a request the line cannot take, or that waited its limit, is refused. Why: a
//   client refused at once asks again at once, so under a flood of persistent connections the
//   process spent its time refusing while a waiting request costs nothing until it is let in
//   (docs/decisions/0006-load-shedding.md).
// - The event loop's mean delay, sampled each second by @fastify/under-pressure: the process is
//   CPU-bound, and everything, in flight or not, waits that long.
// Provider webhooks and health checks are never shed: a refused webhook may be lost or retried
// into the same overload, and the health routes must keep answering to report it.

export interface OverloadOptions {
  /** Public-API requests in flight at most; the next ones wait in the line below. */
  maxInFlight: number;
  /** Requests that may wait for a slot; past this a request is answered 503 at once. */
  maxWaiting: number;
  /** Longest wait in the line (ms); a request still waiting then is answered 503. */
  maxWaitMs: number;
  /** Mean event-loop delay (ms, per sample) past which public-API requests are shed; 0: off. */
  maxEventLoopDelayMs: number;
  /**
   * For this long after the server starts listening (ms), the delay sheds nothing: the samples
   * then still hold the start's own synchronous work (compiling routes and schemas), which says
   * nothing about serving, and refused the first request of a freshly started process (seen in
   * CI). The in-flight bound applies from the first request.
   */
  eventLoopGraceMs: number;
  /** Retry-After of the 503. */
  retryAfterSeconds: number;
}

export interface PressureReport {
  /** True while new public-API requests are being refused. */
  underPressure: boolean;
  inFlight: number;
  maxInFlight: number;
  /** Requests waiting for a slot now. */
  waiting: number;
  /** Public-API requests refused since the start. */
  shed: number;
  /** Public-API requests received since the start (served, waiting or refused). */
  arrived: number;
  eventLoopDelayMs: number;
  heapUsedBytes: number;
  rssBytes: number;
}

/** Only the public API is bounded (see above). */
const shedable = (url: string | undefined) => url?.startsWith('/api/public/');

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Installs the guard (before any route); returns the pressure report. The count and the refusal
 * sit in front of Fastify, on the HTTP server's own 'request' listener: under a flood, refusing
 * is most of what the process does, and every microsecond it costs is taken from the requests
 * being served. So a refusal is one pre-rendered write: no request object, no hooks, no error
 * handler, no access-log line (the report counts them). `inject()` does not pass through it.
 */
export function installOverloadGuard(http: FastifyInstance, opts: OverloadOptions): () => PressureReport {
  let inFlight = 0;
  let shed = 0;
  let arrived = 0;
  let closing = false;
  const busy = new AppError('service_busy', { retryAfterSeconds: opts.retryAfterSeconds });
  const refusal = JSON.stringify(renderError(busy).body);
  const refusalHeaders = {
    'content-type': 'application/json; charset=utf-8',
    'content-length': String(Buffer.byteLength(refusal)),
    'retry-after': String(opts.retryAfterSeconds),
  };
  const refuse = (res: ServerResponse, close: boolean) => {
    res.writeHead(503, close ? { ...refusalHeaders, connection: 'close' } : refusalHeaders);
    res.end(refusal);
  };
  const line = new WaitingLine<Listener>(opts.maxWaiting, opts.maxWaitMs, (res) => {
    shed += 1;
    refuse(res, closing);
  });
  const admit = (req: IncomingMessage, res: ServerResponse, next: Listener) => {
    inFlight += 1;
    // 'close' comes once per response, answered or abandoned by the client.
    res.once('close', () => {
      inFlight -= 1;
      const waiter = line.next();
      if (waiter) admit(waiter.req, waiter.res, waiter.next);
    });
    next(req, res);
  };
  const guarded =
    (next: Listener): Listener =>
    (req, res) => {
      // A server that is shutting down says so in our shape (Fastify's own 503 has its own body).
      if (closing) return refuse(res, true);
      if (!shedable(req.url)) return next(req, res);
      arrived += 1;
      if (lagging()) {
        shed += 1;
        return refuse(res, false);
      }
      if (inFlight < opts.maxInFlight && line.length === 0) return admit(req, res, next);
      if (!line.add({ req, res, next })) {
        shed += 1;
        refuse(res, false);
      }
    };
  const server = http.server;
  const listeners = server.listeners('request') as Listener[];
  server.removeAllListeners('request');
  for (const listener of listeners) server.on('request', guarded(listener));

  // @fastify/under-pressure as the sampler of the event loop's delay (and memory), read per
  // request here: its own hook would refuse through Fastify's pipeline, which is what the flood
  // must not reach.
  void http.register(underPressure, {});
  const eventLoopDelay = () => (http.hasDecorator('memoryUsage') ? http.memoryUsage().eventLoopDelay : 0);
  let listeningAt = Number.POSITIVE_INFINITY;
  http.server.once('listening', () => (listeningAt = Date.now()));
  const lagging = () =>
    opts.maxEventLoopDelayMs > 0 &&
    Date.now() - listeningAt >= opts.eventLoopGraceMs &&
    eventLoopDelay() > opts.maxEventLoopDelayMs;
  // Set before connections are drained: requests still arriving on open connections are refused.
  http.addHook('preClose', async () => {
    closing = true;
    line.refuseAll();
  });

  return () => {
    const delay = eventLoopDelay();
    return {
      underPressure: closing || inFlight >= opts.maxInFlight || lagging(),
      inFlight,
      maxInFlight: opts.maxInFlight,
      waiting: line.length,
      shed,
      arrived,
      eventLoopDelayMs: Math.round(delay * 10) / 10,
      // Read when asked (the health routes), not on every report: serve asks for the report as
      // each in-process turn starts, and process.memoryUsage() walks V8's heap spaces (1.5 % of
      // serve's CPU in a burst's profile when it was read each time).
      get heapUsedBytes() {
        return process.memoryUsage().heapUsed;
      },
      get rssBytes() {
        return process.memoryUsage.rss();
      },
    };
  };
}

import http from 'node:http';
import https from 'node:https';
import { pipeline, type Readable } from 'node:stream';
import zlib from 'node:zlib';
import { observeProviderRequest, type ProviderOutcome } from '../metrics/metrics.ts';
import { checkedLookup, literalRefusal } from './egress-lookup.ts';
import type { EgressOptions } from './egress-policy.ts';

// Every request to a provider (Twilio, Meta, Vapi, Cal.com, the chat model) goes through here:
// one HTTP/1.1 request on a keep-alive connection, its whole body read as text, counted and timed
// per provider and outcome (leadintake_provider_requests_total).
//
// Why not `fetch`: in a burst of WhatsApp leads each lead costs one provider request, and fetch
// spent 184–252 µs of the caller's CPU on one against 66–92 for `http.request` on a keep-alive
// agent (`node bench/http-client-cost.ts`; docs/PERFORMANCE.md). The clients never needed what
// fetch adds: streams, redirects (an API that answers 3xx is misconfigured, and the status says
// so; following a 301 on a POST would have turned it into a GET), CORS.
//
// Failures keep fetch's shapes, which requestFailure reads for the clients' messages: a timeout or an abort
// rejects with the signal's reason (a DOMException named TimeoutError or AbortError); a connection
// that fails rejects with a ProviderNetworkError whose `cause` is the socket's error (its `code`:
// ECONNREFUSED, ENOTFOUND, ECONNRESET, …).

export interface ProviderRequestInit {
  method: string;
  headers: Record<string, string>;
  body?: string;
  /** Covers the whole exchange, the body's last byte included. */
  signal: AbortSignal;
  /**
   * Set for a URL a workspace chose (its model server): the connection goes only to addresses the
   * address policy allows, checked on the resolved address (egress-policy.ts).
   */
  egress?: EgressOptions;
}

/** The part of fetch's `Headers` the clients read; a `Headers` object is one too. */
export interface ResponseHeaders {
  get(name: string): string | null;
}

export interface ProviderResponse {
  status: number;
  /** 2xx. */
  ok: boolean;
  headers: ResponseHeaders;
  /** The body, decoded as UTF-8. */
  text: string;
}

/** The provider was not reached, or the connection broke before the whole answer came. */
export class ProviderNetworkError extends Error {
  constructor(origin: string, cause: Error) {
    // The origin only: paths carry account ids and query strings can carry tokens.
    super(`Request to ${origin} failed: ${cause.message}`, { cause });
    this.name = 'ProviderNetworkError';
  }
}

/**
 * The largest answer read. Providers answer in kilobytes (a month of Cal.com slots is well under
 * one MB); a base URL that points at something else must not fill the process's memory.
 */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * An idle kept-alive connection is closed after this long (fetch's default too), so one that a
 * NAT or load balancer dropped silently is not reused; a server's shorter `Keep-Alive: timeout=`
 * hint wins. A request in progress is bounded by its signal, not by this.
 */
export const IDLE_CONNECTION_MS = 4_000;
const agentOptions = { keepAlive: true, timeout: IDLE_CONNECTION_MS };
type Transports = Record<string, { request: typeof http.request; agent: http.Agent }>;
const transports: Transports = {
  'http:': { request: http.request, agent: new http.Agent(agentOptions) },
  'https:': { request: https.request, agent: new https.Agent(agentOptions) },
};
// Checked connections keep agents of their own: a kept-alive socket the installation opened to
// its own servers must never carry a request to a URL a workspace chose.
const guarded = new Map<boolean, Transports>();
function transportsFor(egress: EgressOptions | undefined): Transports {
  if (!egress) return transports;
  let t = guarded.get(egress.allowPrivateNetworks);
  if (!t) {
    // The agent hands `lookup` to every socket it opens: the check runs at each connect.
    const options = { ...agentOptions, lookup: checkedLookup(egress) };
    t = {
      'http:': { request: http.request, agent: new http.Agent(options) },
      'https:': { request: https.request, agent: new https.Agent(options) },
    };
    guarded.set(egress.allowPrivateNetworks, t);
  }
  return t;
}

/**
 * What ended a failed providerRequest, for the client's own message: its signal (a timeout or an
 * abort), or the connection (`reason`: the socket's code, ECONNREFUSED…, else its message).
 */
export type RequestFailure = { timedOut: true } | { timedOut: false; code: string | undefined; reason: string };

export function requestFailure(err: unknown): RequestFailure {
  const e = err as { name?: string; cause?: { code?: string; message?: string }; message?: string } | undefined;
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') return { timedOut: true };
  const code = e?.cause?.code;
  return { timedOut: false, code, reason: code ?? e?.cause?.message ?? e?.message ?? 'unknown error' };
}

/**
 * The clients' sentence for a failure, `who` as it reads mid-sentence ("Twilio", "the chat
 * model"): "… did not answer within N ms." or "Could not reach … (ECONNREFUSED)."
 */
export function failureMessage(failure: RequestFailure, who: string, timeoutMs: number): string {
  if (!failure.timedOut && failure.code === 'ADDRESS_REFUSED') {
    return `Did not contact ${who}: its address is private, loopback, link-local or reserved, which this installation does not allow.`;
  }
  if (failure.timedOut) return `${who.charAt(0).toUpperCase()}${who.slice(1)} did not answer within ${timeoutMs} ms.`;
  return `Could not reach ${who} (${failure.reason}).`;
}

export async function providerRequest(provider: string, url: string, init: ProviderRequestInit): Promise<ProviderResponse> {
  const started = performance.now();
  let outcome: ProviderOutcome = 'network_error';
  try {
    const res = await send(url, init);
    outcome = res.status >= 500 ? 'server_error' : res.status >= 400 ? 'client_error' : 'ok';
    return res;
  } catch (err) {
    if (requestFailure(err).timedOut) outcome = 'timeout';
    throw err;
  } finally {
    observeProviderRequest(provider, outcome, (performance.now() - started) / 1000);
  }
}

function send(url: string, init: ProviderRequestInit): Promise<ProviderResponse> {
  const { signal } = init;
  if (signal.aborted) return Promise.reject(signal.reason);
  const target = new URL(url);
  const transport = transportsFor(init.egress)[target.protocol];
  if (!transport) return Promise.reject(new ProviderNetworkError(target.origin, new Error(`unsupported protocol ${target.protocol}`)));
  const refused = init.egress && literalRefusal(target, init.egress);
  if (refused) return Promise.reject(new ProviderNetworkError(target.origin, refused));
  // A user agent, as fetch sent one: some API front ends turn away requests without.
  const headers: Record<string, string> = { 'user-agent': 'leadintake', ...init.headers };
  if (init.body !== undefined) headers['content-length'] = String(Buffer.byteLength(init.body));

  return new Promise((resolve, reject) => {
    let done = false;
    const finish = (err: unknown, res?: ProviderResponse) => {
      if (done) return;
      done = true;
      signal.removeEventListener('abort', onAbort);
      if (err === undefined) return resolve(res!);
      req.destroy();
      reject(err);
    };
    const onAbort = () => finish(signal.reason);
    const req = transport.request(target, { method: init.method, headers, agent: transport.agent }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const body = decoded(res);
      body.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size > MAX_RESPONSE_BYTES) return finish(new ProviderNetworkError(target.origin, tooLarge()));
        chunks.push(chunk);
      });
      body.on('end', () => {
        const status = res.statusCode ?? 0;
        finish(undefined, { status, ok: status >= 200 && status < 300, headers: new RawHeaders(res.headers), text: utf8(Buffer.concat(chunks)) });
      });
      body.on('error', (err) => finish(new ProviderNetworkError(target.origin, err)));
    });
    req.on('error', (err) => finish(new ProviderNetworkError(target.origin, err)));
    signal.addEventListener('abort', onAbort, { once: true });
    req.end(init.body);
  });
}

/** The body as sent, or inflated when the server compressed it although we did not ask it to. */
function decoded(res: http.IncomingMessage): Readable {
  const encoding = res.headers['content-encoding']?.trim().toLowerCase();
  const inflate = encoding === 'gzip' || encoding === 'x-gzip' ? zlib.createGunzip()
    : encoding === 'deflate' ? zlib.createInflate()
    : encoding === 'br' ? zlib.createBrotliDecompress()
    : undefined;
  if (!inflate) {
    // A connection cut mid-body is an 'error' on the response ("aborted", ECONNRESET).
    return res;
  }
  // pipeline hands a cut on `res` to `inflate` as its error.
  return pipeline(res, inflate, () => {});
}

function tooLarge(): Error {
  return Object.assign(new Error(`the answer is larger than ${MAX_RESPONSE_BYTES / 1024 / 1024} MB`), { code: 'RESPONSE_TOO_LARGE' });
}

function utf8(buf: Buffer): string {
  const text = buf.toString('utf8');
  // Like fetch's text(): a byte-order mark is not part of the text (JSON.parse would refuse it).
  return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
}

class RawHeaders implements ResponseHeaders {
  readonly #raw: http.IncomingHttpHeaders;
  constructor(raw: http.IncomingHttpHeaders) {
    this.#raw = raw;
  }
  get(name: string): string | null {
    const v = this.#raw[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  }
}

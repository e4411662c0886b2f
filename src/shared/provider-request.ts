import zlib from 'node:zlib';
import { Agent, errors, request, type Dispatcher } from 'undici';
import { checkedLookup, literalRefusal } from './egress-lookup.ts';
import type { EgressOptions } from './egress-policy.ts';

// Every request to a provider (Twilio, Meta, Vapi, Cal.com, the chat model) goes through here:
// undici's `request` on a kept-alive agent, the whole body read as text, reported to one observer
// (the metrics, which subscribe from their own layer: shared/ imports nothing above it).
//
// Not `fetch`: in a burst of WhatsApp leads each lead costs one provider request, and fetch's
// Request/Response/Headers/streams cost the caller two to three times the CPU of `request`
// (docs/decisions/0011-undici-for-outbound-http.md). Redirects are not followed: an
// API that answers 3xx is misconfigured and the status says so (following a 301 on a POST turns
// it into a GET).
//
// Failures keep the shapes requestFailure reads for the clients' messages: a timeout or an abort
// rejects with the signal's reason (a DOMException named TimeoutError or AbortError); anything
// else rejects with a ProviderNetworkError whose `cause` is the socket's or undici's error (its
// `code`: ECONNREFUSED, ENOTFOUND, UND_ERR_SOCKET, ADDRESS_REFUSED, …).

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

export type ProviderOutcome = 'ok' | 'client_error' | 'server_error' | 'timeout' | 'network_error';
export type ProviderRequestObserver = (provider: string, outcome: ProviderOutcome, seconds: number) => void;

let observer: ProviderRequestObserver = () => {};

/** Who hears of every request: its provider, outcome and duration (src/metrics/metrics.ts). */
export function onProviderRequest(o: ProviderRequestObserver): void {
  observer = o;
}

/**
 * The largest answer read, on the wire and inflated. Providers answer in kilobytes (a month of
 * Cal.com slots is well under one MB); a base URL that points at something else must not fill the
 * process's memory.
 */
export const MAX_RESPONSE_BYTES = 8 * 1024 * 1024;

/**
 * An idle kept-alive connection is closed after this long (fetch's default too), so one that a
 * NAT or load balancer dropped silently is not reused; a server's shorter `Keep-Alive: timeout=`
 * hint wins. A request in progress is bounded by its signal, not by this.
 */
export const IDLE_CONNECTION_MS = 4_000;

function agent(connect?: { lookup: ReturnType<typeof checkedLookup> }): Agent {
  return new Agent({
    keepAliveTimeout: IDLE_CONNECTION_MS,
    keepAliveMaxTimeout: IDLE_CONNECTION_MS,
    maxResponseSize: MAX_RESPONSE_BYTES,
    ...(connect ? { connect } : {}),
  });
}
const installationAgent = agent();
// Checked connections keep agents of their own: a kept-alive socket the installation opened to
// its own servers must never carry a request to a URL a workspace chose. The agent hands `lookup`
// to every socket it opens, so the check runs at each connect.
const guarded = new Map<boolean, Agent>();
function agentFor(egress: EgressOptions | undefined): Agent {
  if (!egress) return installationAgent;
  let a = guarded.get(egress.allowPrivateNetworks);
  if (!a) guarded.set(egress.allowPrivateNetworks, (a = agent({ lookup: checkedLookup(egress) })));
  return a;
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
    return (
      `Did not contact ${who}: its address is private, loopback, link-local or reserved, ` +
      'which this installation does not allow.'
    );
  }
  if (failure.timedOut) return `${who.charAt(0).toUpperCase()}${who.slice(1)} did not answer within ${timeoutMs} ms.`;
  return `Could not reach ${who} (${failure.reason}).`;
}

export async function providerRequest(
  provider: string,
  url: string,
  init: ProviderRequestInit,
): Promise<ProviderResponse> {
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
    observer(provider, outcome, (performance.now() - started) / 1000);
  }
}

async function send(url: string, init: ProviderRequestInit): Promise<ProviderResponse> {
  const { signal } = init;
  signal.throwIfAborted();
  const target = new URL(url);
  if (target.protocol !== 'http:' && target.protocol !== 'https:') {
    throw new ProviderNetworkError(target.origin, new Error(`unsupported protocol ${target.protocol}`));
  }
  const refused = init.egress && literalRefusal(target, init.egress);
  if (refused) throw new ProviderNetworkError(target.origin, refused);
  try {
    const res = await request(target, {
      dispatcher: agentFor(init.egress),
      method: init.method as Dispatcher.HttpMethod,
      // A user agent, as fetch sent one: some API front ends turn away requests without.
      headers: { 'user-agent': 'leadintake', ...init.headers },
      body: init.body ?? null,
      signal,
    });
    const status = res.statusCode;
    return { status, ok: status >= 200 && status < 300, headers: headerReader(res.headers), text: await bodyText(res) };
  } catch (err) {
    // undici rejects with the signal's reason once it fired, whatever the request was doing.
    if (signal.aborted) throw signal.reason;
    throw new ProviderNetworkError(target.origin, err as Error);
  }
}

// A server may compress although we did not ask (without Accept-Encoding any coding is
// acceptable, RFC 9110). Not undici's decompress interceptor: it is experimental in 7.x and prints
// a warning on the process's stderr, which `workspace verify`'s output must not carry.
const INFLATE: Record<string, typeof zlib.gunzip> = {
  gzip: zlib.gunzip,
  'x-gzip': zlib.gunzip,
  deflate: zlib.inflate,
  br: zlib.brotliDecompress,
};

async function bodyText(res: Dispatcher.ResponseData): Promise<string> {
  const inflate =
    INFLATE[
      String(res.headers['content-encoding'] ?? '')
        .trim()
        .toLowerCase()
    ];
  if (!inflate) return res.body.text();
  const compressed = await res.body.bytes();
  const plain = await new Promise<Buffer>((resolve, reject) => {
    inflate(compressed, { maxOutputLength: MAX_RESPONSE_BYTES }, (err, out) => {
      if ((err as { code?: string } | null)?.code === 'ERR_BUFFER_TOO_LARGE')
        reject(new errors.ResponseExceededMaxSizeError());
      else if (err) reject(err);
      else resolve(out);
    });
  });
  return new TextDecoder().decode(plain);
}

function headerReader(headers: Dispatcher.ResponseData['headers']): ResponseHeaders {
  return {
    get(name) {
      const v = headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}

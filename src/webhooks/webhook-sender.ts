import { lookup } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressAllowed, isLocalHost } from './webhook-url-policy.ts';

export const RESPONSE_EXCERPT_BYTES = 1024;

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  livemode: boolean;
}

export type SendOutcome =
  | { outcome: 'succeeded' | 'failed'; statusCode: number; excerpt: string; latencyMs: number }
  | { outcome: 'failed'; statusCode: null; excerpt: string; latencyMs: number }
  /** Never sent: the URL or its resolved address is not allowed. */
  | { outcome: 'refused'; statusCode: null; excerpt: string; latencyMs: number };

class RefusedAddress extends Error {}
const REFUSED = 'refused: the URL resolves to a private, loopback or link-local address';

/**
 * POSTs one webhook. The name is resolved by our own lookup, which checks every address before
 * the socket connects to it, so the address checked is the address used (no second lookup an
 * attacker's DNS could answer differently). Redirects are not followed: a 3xx is a failure.
 */
export async function sendWebhook(r: SendRequest, o: { timeoutMs: number; allowPrivateNetworks: boolean }): Promise<SendOutcome> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const url = new URL(r.url);
  if (url.protocol === 'http:' && (r.livemode || !isLocalHost(url))) {
    return { outcome: 'refused', statusCode: null, excerpt: 'refused: live events are sent over https only', latencyMs: 0 };
  }
  // A literal address is never looked up: judge it here.
  const literal = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(literal) && !addressAllowed(literal, { livemode: r.livemode, allowPrivateNetworks: o.allowPrivateNetworks })) {
    return { outcome: 'refused', statusCode: null, excerpt: REFUSED, latencyMs: 0 };
  }
  const checkedLookup: LookupFunction = (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as unknown as { address: string; family: number }[];
      const bad = list.find((a) => !addressAllowed(a.address, { livemode: r.livemode, allowPrivateNetworks: o.allowPrivateNetworks }));
      if (bad || list.length === 0) return callback(new RefusedAddress(REFUSED), '', 4);
      if ((options as { all?: boolean }).all) return (callback as unknown as (e: null, a: typeof list) => void)(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    const req = mod.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'leadintake-webhooks', ...r.headers, 'content-length': Buffer.byteLength(r.body) },
      lookup: checkedLookup,
      agent: false,
      timeout: o.timeoutMs,
    });
    // The whole exchange, not only idle time, is bounded by the timeout.
    const deadline = setTimeout(() => req.destroy(new Error(`timed out after ${o.timeoutMs} ms`)), o.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(`timed out after ${o.timeoutMs} ms`)));
    req.on('error', (err) => {
      clearTimeout(deadline);
      if (err instanceof RefusedAddress) resolve({ outcome: 'refused', statusCode: null, excerpt: err.message, latencyMs: ms() });
      else resolve({ outcome: 'failed', statusCode: null, excerpt: `no answer: ${err.message}`.slice(0, RESPONSE_EXCERPT_BYTES), latencyMs: ms() });
    });
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (c: Buffer) => {
        // Only the first KiB is kept; the rest is read and dropped so the socket closes cleanly.
        if (size < RESPONSE_EXCERPT_BYTES) chunks.push(c);
        size += c.length;
      });
      res.on('end', () => {
        clearTimeout(deadline);
        const status = res.statusCode ?? 0;
        const excerpt = Buffer.concat(chunks).subarray(0, RESPONSE_EXCERPT_BYTES).toString('utf8');
        resolve({ outcome: status >= 200 && status < 300 ? 'succeeded' : 'failed', statusCode: status, excerpt, latencyMs: ms() });
      });
      res.on('error', (err) => req.destroy(err));
    });
    req.end(r.body);
  });
}

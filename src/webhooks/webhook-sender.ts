import http from 'node:http';
import https from 'node:https';
import { AddressRefused, checkedLookup, literalRefusal } from '../shared/egress-lookup.ts';
import { isLoopbackUrl, type EgressOptions } from '../shared/egress-policy.ts';

export interface SendRequest {
  url: string;
  headers: Record<string, string>;
  body: string;
  livemode: boolean;
}

/**
 * `reason` is our own one line for the delivery log (the status, or why there was none): never
 * what the receiver answered, which a workspace could aim at anything that speaks HTTP.
 */
export type SendOutcome =
  | { outcome: 'succeeded' | 'failed'; statusCode: number; reason: string; latencyMs: number }
  | { outcome: 'failed'; statusCode: null; reason: string; latencyMs: number }
  /** Never sent: the URL or its resolved address is not allowed. */
  | { outcome: 'refused'; statusCode: null; reason: string; latencyMs: number };

/**
 * POSTs one webhook. The name is resolved by the address policy's lookup (src/shared/egress-lookup.ts),
 * which checks every address before the socket connects to it, so the address checked is the
 * address used. Redirects are not followed: a 3xx is a failure.
 */
export async function sendWebhook(r: SendRequest, o: { timeoutMs: number } & EgressOptions): Promise<SendOutcome> {
  const started = performance.now();
  const ms = () => Math.round(performance.now() - started);
  const url = new URL(r.url);
  const egress: EgressOptions = { allowPrivateNetworks: o.allowPrivateNetworks };
  // http only for sandbox events to this machine, which the address check below then refuses
  // unless the operator allows private networks.
  if (url.protocol === 'http:' && (r.livemode || !isLoopbackUrl(url))) {
    const why = r.livemode ? 'live events are sent over https only' : 'http is only for a receiver on this machine';
    return { outcome: 'refused', statusCode: null, reason: `refused: ${why}`, latencyMs: 0 };
  }
  const literal = literalRefusal(url, egress);
  if (literal) return { outcome: 'refused', statusCode: null, reason: literal.message, latencyMs: 0 };
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise<SendOutcome>((resolve) => {
    const req = mod.request(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': 'leadintake-webhooks',
        ...r.headers,
        'content-length': Buffer.byteLength(r.body),
      },
      lookup: checkedLookup(egress),
      agent: false,
      timeout: o.timeoutMs,
    });
    const timedOut = `no answer within ${o.timeoutMs} ms`;
    // The whole exchange, not only idle time, is bounded by the timeout.
    const deadline = setTimeout(() => req.destroy(new Error(timedOut)), o.timeoutMs);
    req.on('timeout', () => req.destroy(new Error(timedOut)));
    req.on('error', (err) => {
      clearTimeout(deadline);
      if (err instanceof AddressRefused) {
        resolve({ outcome: 'refused', statusCode: null, reason: err.message, latencyMs: ms() });
        return;
      }
      resolve({ outcome: 'failed', statusCode: null, reason: noAnswer(err, timedOut), latencyMs: ms() });
    });
    req.on('response', (res) => {
      // The body is read and dropped (so the socket closes cleanly), never kept.
      res.resume();
      res.on('end', () => {
        clearTimeout(deadline);
        const status = res.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        const reason = `answered HTTP ${status}`;
        resolve({ outcome: ok ? 'succeeded' : 'failed', statusCode: status, reason, latencyMs: ms() });
      });
      res.on('error', (err) => req.destroy(err));
    });
    req.end(r.body);
  });
}

/** The socket's error code (ECONNREFUSED, CERT_HAS_EXPIRED, …) rather than its message, which may carry addresses. */
function noAnswer(err: Error, timedOut: string): string {
  if (err.message === timedOut) return timedOut;
  const code = (err as { code?: string }).code;
  return `no answer: ${code ?? 'the connection failed'}`;
}

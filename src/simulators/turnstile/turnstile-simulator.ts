import crypto from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startLocalHttpServer, type LocalHttpServer } from '../local-http-server.ts';

// Cloudflare Turnstile's siteverify endpoint, offline, for tests and the demo. Wire format from
// Cloudflare's documentation (server-side validation): POST form-encoded or JSON with `secret`,
// `response` and optional `remoteip`; answer 200 JSON `{ success, "error-codes", challenge_ts,
// hostname }`. Error codes used: missing-input-secret, invalid-input-secret,
// missing-input-response, invalid-input-response, timeout-or-duplicate (a token is single-use).
// Unconfirmed here: the exact answer to a malformed body (we answer 400 bad-request).
//
// A token passes when the simulator issued it (`issueToken`) for the secret it was checked with
// and has not been used; Cloudflare's documented dummy token `XXXX.DUMMY.TOKEN.XXXX` passes with
// the documented always-pass test secret `1x0000000000000000000000000000000AA`.

export const TURNSTILE_PASS_SECRET = '1x0000000000000000000000000000000AA';
export const TURNSTILE_DUMMY_TOKEN = 'XXXX.DUMMY.TOKEN.XXXX';

export interface TurnstileSimulator {
  url: string;
  /** The siteverify URL (TURNSTILE_VERIFY_URL). */
  verifyUrl: string;
  /** A token the widget would have produced for a site whose secret is `secret`. */
  issueToken(secret: string): string;
  /** Every check received, as sent. */
  checks: Array<{ secret: string; response: string; remoteip: string | null }>;
  close(): Promise<void>;
}

export async function startTurnstileSimulator(opts: { port?: number } = {}): Promise<TurnstileSimulator> {
  const issued = new Map<string, string>();
  const used = new Set<string>();
  const checks: TurnstileSimulator['checks'] = [];
  const answer = (res: ServerResponse, status: number, body: object) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };
  const handle = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    if (req.method !== 'POST' || !req.url?.startsWith('/turnstile/v0/siteverify'))
      return answer(res, 404, { success: false, 'error-codes': ['bad-request'] });
    let fields: Record<string, string>;
    try {
      fields = (req.headers['content-type'] ?? '').includes('application/json')
        ? (JSON.parse(text) as Record<string, string>)
        : Object.fromEntries(new URLSearchParams(text));
    } catch {
      return answer(res, 400, { success: false, 'error-codes': ['bad-request'] });
    }
    const secret = fields.secret ?? '';
    const response = fields.response ?? '';
    checks.push({ secret, response, remoteip: fields.remoteip ?? null });
    const fail = (code: string) => answer(res, 200, { success: false, 'error-codes': [code] });
    if (!secret) return fail('missing-input-secret');
    if (!response) return fail('missing-input-response');
    if (secret === TURNSTILE_PASS_SECRET && response === TURNSTILE_DUMMY_TOKEN)
      return answer(res, 200, {
        success: true,
        'error-codes': [],
        challenge_ts: new Date().toISOString(),
        hostname: 'localhost',
      });
    const issuedFor = issued.get(response);
    if (issuedFor === undefined) return fail('invalid-input-response');
    if (issuedFor !== secret) return fail('invalid-input-secret');
    if (used.has(response)) return fail('timeout-or-duplicate');
    used.add(response);
    return answer(res, 200, {
      success: true,
      'error-codes': [],
      challenge_ts: new Date().toISOString(),
      hostname: 'localhost',
    });
  };
  const server: LocalHttpServer = await startLocalHttpServer(handle, {
    ...(opts.port !== undefined ? { port: opts.port } : {}),
    onFailure: (res) => answer(res, 500, { success: false, 'error-codes': ['internal-error'] }),
  });
  return {
    url: server.url,
    verifyUrl: `${server.url}/turnstile/v0/siteverify`,
    issueToken(secret) {
      const token = `sim.${crypto.randomBytes(18).toString('base64url')}`;
      issued.set(token, secret);
      return token;
    },
    checks,
    close: () => server.close(),
  };
}

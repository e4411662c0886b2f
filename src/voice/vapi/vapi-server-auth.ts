import crypto from 'node:crypto';
import { verifyVapiHmac } from './vapi-hmac.ts';
import type { VapiServerAuth } from './vapi-server-settings.ts';

// Is this delivery from Vapi? With a shared secret: `X-Vapi-Secret: <secret>` (Vapi's legacy
// header, which we send as a static server header at dispatch), or `Authorization: Bearer
// <secret>` (Vapi's bearer credential plan). With the HMAC plan configured, only a valid signature
// counts. Comparisons are constant-time; nothing about the secret is revealed by timing.

export type AuthCheck = { ok: true } | { ok: false; reason: string };

export function authenticateVapi(
  auth: VapiServerAuth,
  rawBody: Buffer,
  headers: Record<string, string | string[] | undefined>,
  now: Date,
): AuthCheck {
  if (auth.kind === 'hmac') {
    const check = verifyVapiHmac(auth.plan, rawBody, headers, now, auth.toleranceSeconds);
    return check.ok ? check : { ok: false, reason: check.reason };
  }
  const header = first(headers['x-vapi-secret']) ?? /^Bearer\s+(.+)$/i.exec(first(headers.authorization) ?? '')?.[1];
  if (header === undefined || header === '') return { ok: false, reason: 'missing secret' };
  return equalSecrets(header.trim(), auth.secret) ? { ok: true } : { ok: false, reason: 'wrong secret' };
}

/** Hashing first makes the comparison constant-time whatever the lengths. */
function equalSecrets(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a, 'utf8').digest();
  const hb = crypto.createHash('sha256').update(b, 'utf8').digest();
  return crypto.timingSafeEqual(ha, hb) && b !== '';
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

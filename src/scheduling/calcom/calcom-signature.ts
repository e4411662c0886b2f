import crypto from 'node:crypto';

// Cal.com webhook signatures (Cal.com's API v2 docs): header `X-Cal-Signature-256` carries the bare
// lowercase hex HMAC-SHA256 of the exact body bytes, keyed with the webhook secret (no `sha256=`
// prefix). Verification must run over the raw body, before any JSON parsing re-serialises it.

export const CALCOM_SIGNATURE_HEADER = 'x-cal-signature-256';

export function signCalcomBody(secret: string, body: Buffer | string): string {
  return crypto.createHmac('sha256', secret).update(body).digest('hex');
}

export function verifyCalcomSignature(secret: string, rawBody: Buffer | string, header: string | undefined): boolean {
  // An empty secret would make the signature forgeable by anyone who guesses that, so refuse.
  if (secret === '' || header === undefined) return false;
  const received = header.trim().toLowerCase();
  // Hex check first: Buffer.from(.., 'hex') silently drops bad characters, which could otherwise
  // make a malformed header decode to something that compares equal.
  if (!/^[0-9a-f]{64}$/.test(received)) return false;
  const expected = Buffer.from(signCalcomBody(secret, rawBody), 'hex');
  const actual = Buffer.from(received, 'hex');
  return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

// Standard Webhooks signatures: the signed content is "<webhook-id>.<webhook-timestamp>.<body>",
// signed with HMAC-SHA256 under the secret's base64-decoded bytes (the part after `whsec_`); the
// header lists `v1,<base64 signature>` once per valid secret, separated by spaces.

const PREFIX = 'whsec_';

/** A new signing secret: 32 random bytes, base64, with the `whsec_` prefix. */
export function newWebhookSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

function secretBytes(secret: string): Buffer {
  return Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
}

/** One `v1,<base64>` signature of a message. */
export function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = createHmac('sha256', secretBytes(secret)).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The webhook-signature header: one signature per secret (two during a rotation's overlap). */
export function signatureHeader(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): string {
  return secrets.map((s) => signWebhook(s, id, timestampSeconds, body)).join(' ');
}

/**
 * What a receiver does (used by our tests and shown in the docs): true when one of the header's
 * `v1` signatures matches and the timestamp is within `toleranceSeconds` of `nowSeconds`.
 */
export function verifyWebhook(
  secret: string,
  headers: { id: string; timestamp: string; signature: string },
  body: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const ts = Number(headers.timestamp);
  if (!Number.isInteger(ts) || Math.abs(nowSeconds - ts) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, headers.id, ts, body));
  return headers.signature.split(' ').some((candidate) => {
    const got = Buffer.from(candidate);
    return got.length === expected.length && timingSafeEqual(got, expected);
  });
}

import crypto from 'node:crypto';

// How a generic webhook proves it comes from the operator's tool (docs/INTAKE.md, "Generic
// webhooks"). Either of:
//   X-Leadintake-Signature: sha256=<hex HMAC-SHA256 of the raw body, keyed with the secret>
//     for tools that can sign (n8n, a site's own backend): the secret never travels;
//   Authorization: Bearer <secret>
//     for tools that can only set a header (Zapier, Make, most form plugins): TLS protects it.
// A request with a signature header is judged by it alone, so a wrong signature is never rescued
// by a bearer header beside it.

export const SIGNATURE_HEADER = 'x-leadintake-signature';

export function signWebhookBody(secret: string, body: Buffer | string): string {
  return `sha256=${crypto.createHmac('sha256', secret).update(body).digest('hex')}`;
}

export type WebhookAuthResult = { ok: true } | { ok: false; reason: string };

export function checkWebhookAuth(
  secret: string,
  rawBody: Buffer,
  headers: { signature?: string | undefined; authorization?: string | undefined },
): WebhookAuthResult {
  if (headers.signature !== undefined) {
    return sameText(headers.signature.trim().toLowerCase(), signWebhookBody(secret, rawBody))
      ? { ok: true }
      : { ok: false, reason: 'X-Leadintake-Signature does not match the body (HMAC-SHA256 with the source secret).' };
  }
  const bearer = /^Bearer\s+(.+)$/i.exec(headers.authorization?.trim() ?? '');
  if (!bearer) return { ok: false, reason: 'Neither X-Leadintake-Signature nor Authorization: Bearer was sent.' };
  return sameText(bearer[1]!.trim(), secret) ? { ok: true } : { ok: false, reason: 'The bearer secret is wrong.' };
}

/** Constant-time comparison of two strings (hashed first, so lengths do not leak either). */
export function sameText(a: string, b: string): boolean {
  const h = (s: string) => crypto.createHash('sha256').update(s, 'utf8').digest();
  return crypto.timingSafeEqual(h(a), h(b));
}

/**
 * A generic webhook's body as an object: JSON, or a form post (application/x-www-form-urlencoded,
 * what many WordPress plugins send) as a flat object. Null when it is neither.
 */
export function parseWebhookBody(raw: Buffer, contentType: string | undefined): unknown {
  const text = raw.toString('utf8');
  if ((contentType ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded')) {
    return Object.fromEntries(new URLSearchParams(text));
  }
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

import crypto from 'node:crypto';

// Meta webhook authentication (Meta's WhatsApp Cloud API docs).
// - POST deliveries carry `X-Hub-Signature-256: sha256=<lowercase hex HMAC-SHA256>` keyed with the
//   app secret over the exact body bytes. It must be checked on the raw body: Meta escapes
//   non-ASCII as \uXXXX, so re-serialised JSON would not match.
// - Subscribing a callback URL starts with a GET handshake: `hub.mode=subscribe`,
//   `hub.verify_token=<the string typed in the App Dashboard>`, `hub.challenge=<value>`; the
//   answer is the bare challenge as text, or 403.

export const META_SIGNATURE_HEADER = 'x-hub-signature-256';

/** The full header value, `sha256=<hex>`. */
export function signMetaBody(appSecret: string, body: Buffer | string): string {
  return `sha256=${crypto.createHmac('sha256', appSecret).update(body).digest('hex')}`;
}

export function verifyMetaSignature(appSecret: string, rawBody: Buffer | string, header: string | undefined): boolean {
  // An empty secret would make signatures forgeable by anyone who guesses that, so refuse.
  if (appSecret === '' || header === undefined) return false;
  const match = /^sha256=([0-9a-f]{64})$/.exec(header.trim().toLowerCase());
  // Hex is checked by the pattern first: Buffer.from(.., 'hex') silently drops bad characters.
  if (!match) return false;
  const expected = crypto.createHmac('sha256', appSecret).update(rawBody).digest();
  const actual = Buffer.from(match[1]!, 'hex');
  return actual.length === expected.length && crypto.timingSafeEqual(actual, expected);
}

export interface MetaVerificationAnswer {
  status: 200 | 403;
  /** Sent as `text/plain`: the challenge itself on success, Meta reads nothing else. */
  body: string;
}

/** Meta's challenges are short numeric strings; the cap only keeps us from echoing a large blob. */
const MAX_CHALLENGE_LENGTH = 512;

/**
 * The answer to Meta's GET verification request. `query` is the parsed query string with the
 * dotted keys as they arrive (`hub.mode`, …), as Fastify's default parser or
 * `Object.fromEntries(new URLSearchParams(…))` produce. A repeated key (an array) is refused.
 */
export function answerMetaVerification(
  query: Record<string, unknown> | URLSearchParams,
  verifyToken: string,
): MetaVerificationAnswer {
  const get = (key: string): unknown => {
    if (!(query instanceof URLSearchParams)) return query[key];
    const values = query.getAll(key);
    return values.length > 1 ? values : values[0];
  };
  const mode = get('hub.mode');
  const token = get('hub.verify_token');
  const challenge = get('hub.challenge');
  const refused: MetaVerificationAnswer = { status: 403, body: 'Forbidden' };
  if (verifyToken === '' || mode !== 'subscribe' || typeof token !== 'string' || typeof challenge !== 'string')
    return refused;
  if (challenge === '' || challenge.length > MAX_CHALLENGE_LENGTH) return refused;
  return sameSecret(token, verifyToken) ? { status: 200, body: challenge } : refused;
}

/** Constant-time equality of two strings of any length (hashing first equalises the lengths). */
function sameSecret(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

import crypto from 'node:crypto';

// Vapi's HMAC authentication plan for server URLs (Vapi's API docs, Vapi's OpenAPI document
// `HMACAuthenticationPlan`): the signature header carries prefix + encode(HMAC(secret, payload)),
// where payload is `payloadFormat` with {timestamp} replaced by the timestamp header's value and
// {body} by the exact request bytes. The receiver (vapi-server-auth.ts) and the simulator both use
// this module, so they sign the same way.

export type HmacAlgorithm = 'sha256' | 'sha512' | 'sha1';

/** A plan with every default filled in (see `hmacPlanWithDefaults`). */
export interface HmacPlan {
  secretKey: string;
  algorithm: HmacAlgorithm;
  /** Lowercase header names (Node lowercases incoming ones). */
  signatureHeader: string;
  timestampHeader: string;
  signaturePrefix: string;
  /** Placeholders {timestamp} and {body}. */
  payloadFormat: string;
  signatureEncoding: 'hex' | 'base64';
  secretIsBase64: boolean;
}

export const HMAC_DEFAULTS = {
  algorithm: 'sha256',
  signatureHeader: 'x-signature',
  timestampHeader: 'x-timestamp',
  signaturePrefix: '',
  payloadFormat: '{timestamp}.{body}',
  signatureEncoding: 'hex',
  secretIsBase64: false,
} as const satisfies Omit<HmacPlan, 'secretKey'>;

export function hmacPlanWithDefaults(p: Partial<HmacPlan> & { secretKey: string }): HmacPlan {
  return {
    secretKey: p.secretKey,
    algorithm: p.algorithm ?? HMAC_DEFAULTS.algorithm,
    signatureHeader: (p.signatureHeader ?? HMAC_DEFAULTS.signatureHeader).toLowerCase(),
    timestampHeader: (p.timestampHeader ?? HMAC_DEFAULTS.timestampHeader).toLowerCase(),
    signaturePrefix: p.signaturePrefix ?? HMAC_DEFAULTS.signaturePrefix,
    payloadFormat: p.payloadFormat ?? HMAC_DEFAULTS.payloadFormat,
    signatureEncoding: p.signatureEncoding ?? HMAC_DEFAULTS.signatureEncoding,
    secretIsBase64: p.secretIsBase64 ?? HMAC_DEFAULTS.secretIsBase64,
  };
}

export function usesTimestamp(plan: HmacPlan): boolean {
  return plan.payloadFormat.includes('{timestamp}');
}

/** The raw signature bytes (without prefix or encoding). */
function mac(plan: HmacPlan, body: Buffer, timestamp: string): Buffer {
  const key = plan.secretIsBase64 ? Buffer.from(plan.secretKey, 'base64') : Buffer.from(plan.secretKey, 'utf8');
  const h = crypto.createHmac(plan.algorithm, key);
  // Split on {body} so the body bytes are hashed as received, never re-encoded.
  const parts = plan.payloadFormat.split('{body}');
  parts.forEach((part, i) => {
    if (i > 0) h.update(body);
    h.update(part.replaceAll('{timestamp}', timestamp), 'utf8');
  });
  return h.digest();
}

/** The signature header value for a body, as Vapi sends it. */
export function signVapiHmac(plan: HmacPlan, body: Buffer | string, timestamp: string): string {
  const bytes = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  return plan.signaturePrefix + mac(plan, bytes, timestamp).toString(plan.signatureEncoding);
}

export type HmacCheck =
  | { ok: true }
  | { ok: false; reason: 'missing signature' | 'missing timestamp' | 'stale timestamp' | 'bad signature' };

/**
 * Constant-time check of a delivery. The timestamp may be in seconds or milliseconds (Vapi's unit
 * is UNCONFIRMED); either must lie within `toleranceSeconds` of `now`.
 */
export function verifyVapiHmac(
  plan: HmacPlan,
  body: Buffer,
  headers: Record<string, string | string[] | undefined>,
  now: Date,
  toleranceSeconds: number,
): HmacCheck {
  const signature = single(headers[plan.signatureHeader]);
  if (signature === undefined || signature === '') return { ok: false, reason: 'missing signature' };
  let timestamp = '';
  if (usesTimestamp(plan)) {
    timestamp = single(headers[plan.timestampHeader])?.trim() ?? '';
    if (!/^\d{1,16}$/.test(timestamp)) return { ok: false, reason: 'missing timestamp' };
    const n = Number(timestamp);
    const ms = n > 1e11 ? n : n * 1000;
    if (Math.abs(now.getTime() - ms) > toleranceSeconds * 1000) return { ok: false, reason: 'stale timestamp' };
  }
  const expected = mac(plan, body, timestamp);
  const received = decode(signature.trim(), plan);
  if (!received || received.length !== expected.length || !crypto.timingSafeEqual(received, expected)) {
    return { ok: false, reason: 'bad signature' };
  }
  return { ok: true };
}

function decode(value: string, plan: HmacPlan): Buffer | null {
  if (!value.startsWith(plan.signaturePrefix)) return null;
  const encoded = value.slice(plan.signaturePrefix.length);
  // Strict alphabet checks: Buffer.from silently skips bad characters, which could let a
  // malformed header decode to something that compares equal.
  if (plan.signatureEncoding === 'hex') return /^[0-9a-fA-F]+$/.test(encoded) ? Buffer.from(encoded, 'hex') : null;
  return /^[A-Za-z0-9+/]+={0,2}$/.test(encoded) ? Buffer.from(encoded, 'base64') : null;
}

function single(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

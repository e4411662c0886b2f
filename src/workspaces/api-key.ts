import crypto from 'node:crypto';

export const API_KEY_PREFIX = 'li_live_';
/** Sandbox keys (test mode, docs/SANDBOX.md): same API, every provider simulated. */
export const SANDBOX_KEY_PREFIX = 'li_test_';
const DISPLAY_PREFIX_LENGTH = API_KEY_PREFIX.length + 6;

export interface NewApiKey {
  /** The whole key: shown once to the operator, never stored. */
  key: string;
  /** A short, non-secret beginning of the key that lets operators tell keys apart. */
  prefix: string;
  hash: Buffer;
}

/** `li_live_` (or `li_test_` for a sandbox key) + 192 random bits in base64url (32 characters). */
export function generateApiKey(opts: { livemode?: boolean } = {}): NewApiKey {
  const key =
    (opts.livemode === false ? SANDBOX_KEY_PREFIX : API_KEY_PREFIX) + crypto.randomBytes(24).toString('base64url');
  return { key, prefix: key.slice(0, DISPLAY_PREFIX_LENGTH), hash: hashApiKey(key) };
}

// A plain SHA-256 is right for keys of 192 random bits: nothing to brute-force, and it keeps
// the lookup a single indexed read.
export function hashApiKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key, 'utf8').digest();
}

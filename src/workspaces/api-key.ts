import crypto from 'node:crypto';

export const API_KEY_PREFIX = 'li_live_';
/** Sandbox keys (test mode, docs/SANDBOX.md): same API, every provider simulated. */
export const SANDBOX_KEY_PREFIX = 'li_test_';
/**
 * Publishable keys (docs/INTAKE.md, "Embed and publishable keys"): safe in a browser, they only
 * create leads, from the origins the workspace lists. The mode follows, as in the secret keys.
 */
export const PUBLISHABLE_KEY_PREFIX = 'li_pub_';

/** What a key may do (migrations/049): the API, browsers' lead creation, the hosted form's own. */
export type ApiKeyKind = 'secret' | 'publishable' | 'form';

export interface NewApiKey {
  /** The whole key: shown once to the operator, never stored. */
  key: string;
  /** A short, non-secret beginning of the key that lets operators tell keys apart. */
  prefix: string;
  hash: Buffer;
}

function modePrefix(livemode: boolean): string {
  return livemode ? API_KEY_PREFIX : SANDBOX_KEY_PREFIX;
}

/**
 * `li_live_` (or `li_test_` for a sandbox key) + 192 random bits in base64url (32 characters); a
 * publishable key is `li_pub_live_…` / `li_pub_test_…`, so its use in a browser is visible at a glance.
 */
export function generateApiKey(opts: { livemode?: boolean; kind?: ApiKeyKind } = {}): NewApiKey {
  const mode = modePrefix(opts.livemode !== false);
  const start = opts.kind === 'publishable' ? `${PUBLISHABLE_KEY_PREFIX}${mode.slice('li_'.length)}` : mode;
  const key = start + crypto.randomBytes(24).toString('base64url');
  // The displayed prefix: the kind and mode, then 6 characters of the random part.
  return { key, prefix: key.slice(0, start.length + 6), hash: hashApiKey(key) };
}

// A plain SHA-256 is right for keys of 192 random bits: nothing to brute-force, and it keeps
// the lookup a single indexed read.
export function hashApiKey(key: string): Buffer {
  return crypto.createHash('sha256').update(key, 'utf8').digest();
}

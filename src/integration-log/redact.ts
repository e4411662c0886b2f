// Secrets never reach the integration log. Values under secret-looking keys are replaced, and
// known secret values (a workspace's own keys) are masked wherever they appear in text. Personal
// data is kept: the log is the operators' view of what was exchanged about their leads, with the
// same access and a bounded retention (docs/VOICE.md).
import { storableText } from '../shared/storable-text.ts';

export const REDACTED = '[redacted]';

// Key names, compared case-insensitively: `X-Vapi-Secret`, `webhookSecret`, `secretKey`,
// `Authorization`, `apiKey`, `api_key`, `password`, `cookie`, `x-signature`, `accessToken`,
// `auth_token`. `prompt_tokens` and `credentialId` are not secrets and stay.
const SECRET_KEY = /secret|passw|authori[sz]ation|cookie|api[-_]?key|signature|private[-_]?key/i;
const TOKEN_KEY = /token$/i;

/**
 * A deep copy of `value` with secrets replaced. Strings and keys are also made storable (no NUL,
 * no lone surrogate: PostgreSQL's jsonb refuses both, src/shared/storable-text.ts). Depth is bounded so a pathological
 * payload cannot recurse forever.
 */
export function redactSecrets(value: unknown, knownSecrets: readonly string[] = []): unknown {
  const secrets = knownSecrets.filter((s) => s.length >= 8);
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') return maskText(v, secrets);
    if (v === null || typeof v !== 'object') return v;
    if (depth > 40) return '[too deep]';
    if (Array.isArray(v)) return v.map((item) => walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(v)) {
      out[storableText(key)] =
        isSecretKey(key) && item !== null && item !== undefined && item !== '' ? REDACTED : walk(item, depth + 1);
    }
    return out;
  };
  return walk(value, 0);
}

export function isSecretKey(key: string): boolean {
  return SECRET_KEY.test(key) || TOKEN_KEY.test(key);
}

function maskText(text: string, secrets: readonly string[]): string {
  let out = storableText(text);
  for (const s of secrets) if (out.includes(s)) out = out.replaceAll(s, REDACTED);
  // Bearer credentials inside free text (a provider echoing a header back).
  return out.replace(/\b(Bearer\s+)[A-Za-z0-9_\-.~+/=]{8,}/g, `$1${REDACTED}`);
}

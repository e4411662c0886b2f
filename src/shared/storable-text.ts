// Text PostgreSQL can store. Its `text` and `jsonb` types refuse U+0000 (SQLSTATE 22021 / 22P05),
// and `jsonb` also refuses a lone UTF-16 surrogate (a `\ud800` escape with no partner, 22P02);
// a JavaScript string can hold both, and JSON.parse produces them from valid JSON.
//
// Two policies, one definition: the public API refuses such input (a validation issue naming the
// field, src/leads/lead-submission.ts), while what a provider sends us is stored, never refused
// (a refused webhook is retried and refused forever, and the lead's message is lost): each
// provider's parser runs its input through storableJson / storableText here, and the service
// notes the repair on the lead's timeline (noteRepairedText).

const NUL = '\u0000';

/** True when PostgreSQL can store `s` as it is. */
export function isStorableText(s: string): boolean {
  return !s.includes(NUL) && s.isWellFormed();
}

/** `s` without NUL characters and with every lone surrogate replaced by U+FFFD. */
export function storableText(s: string): string {
  return isStorableText(s) ? s : s.replaceAll(NUL, '').toWellFormed();
}

/** Beyond this depth a JSON value is left as it is (the integration log cuts deeper values anyway). */
const MAX_DEPTH = 256;

/**
 * A JSON value (as JSON.parse returns it) with every string and every key made storable.
 * `changed` says whether anything had to be repaired; an unchanged value is returned as is.
 */
export function storableJson<T>(value: T): { value: T; changed: boolean } {
  let changed = false;
  const walk = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      if (isStorableText(v)) return v;
      changed = true;
      return storableText(v);
    }
    if (v === null || typeof v !== 'object' || depth > MAX_DEPTH) return v;
    if (Array.isArray(v)) {
      let copy: unknown[] | null = null;
      v.forEach((item, i) => {
        const next = walk(item, depth + 1);
        if (next !== item) (copy ??= [...v])[i] = next;
      });
      return copy ?? v;
    }
    let repaired = false;
    const entries = Object.entries(v).map(([key, item]): [string, unknown] => {
      const next = walk(item, depth + 1);
      const storableKey = isStorableText(key) ? key : storableText(key);
      if (storableKey !== key) changed = true;
      if (next !== item || storableKey !== key) repaired = true;
      return [storableKey, next];
    });
    // fromEntries defines own properties, so a `__proto__` key stays a key.
    return repaired ? Object.fromEntries(entries) : v;
  };
  const out = walk(value, 0) as T;
  return { value: out, changed };
}

/**
 * JSON.parse of a provider's body, made storable. A lone surrogate can only come from a `\uD8xx`
 * escape and a NUL only from `\u0000` (JSON forbids raw control characters in strings, and
 * invalid UTF-8 bytes decode to U+FFFD), so bodies without such an escape skip the walk.
 * Throws what JSON.parse throws.
 */
export function parseStorableJson(text: string): { value: unknown; changed: boolean } {
  const value: unknown = JSON.parse(text);
  if (!/\\u(?:0000|d[89a-f])/i.test(text)) return { value, changed: false };
  return storableJson(value);
}

/** What a lead's timeline says when a provider's text had to be repaired to be stored. */
export const REPAIRED_TEXT_EVENT = 'text.repaired';

/** The data of that timeline entry: which provider, what it sent (`whatsapp message`, `call report`, …). */
export function repairedTextData(
  provider: string,
  what: string,
  extra: Record<string, unknown> = {},
): Record<string, unknown> {
  return {
    provider,
    what,
    ...extra,
    note: 'NUL characters removed and lone UTF-16 surrogates replaced by U+FFFD so the text could be stored.',
    actor: 'system',
  };
}

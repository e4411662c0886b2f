// The one reading of a lead's metadata for the agent (docs/AGENT.md; docs/API.md, "metadata"): every pair, in
// order; non-strings JSON-stringified; null, undefined and empty strings dropped. The WhatsApp
// prompt shows the pairs quoted in its lead-data block ("What else we know about this lead",
// src/agent/lead-data-block.ts); the voice channel gets them as the `leadMetadata` variable,
// one `key: value` line per pair.

/** Characters per key and per value in the voice variable: a pair cannot crowd out the assistant's prompt. */
const VOICE_KEY_MAX = 100;
const VOICE_VALUE_MAX = 1000;

/** The pairs to show, each value as text. */
export function metadataPairs(metadata: Record<string, unknown> | null | undefined): Array<[string, string]> {
  if (!metadata) return [];
  const pairs: Array<[string, string]> = [];
  for (const [key, value] of Object.entries(metadata)) {
    if (value === null || value === undefined || value === '') continue;
    pairs.push([key, typeof value === 'string' ? value : JSON.stringify(value)]);
  }
  return pairs;
}

/**
 * The voice channel's `leadMetadata`: one line per pair. Line breaks inside a key or value become
 * spaces, so a value cannot start a line of its own (a heading, say) in the assistant's prompt.
 */
export function renderMetadata(metadata: Record<string, unknown> | null | undefined): string {
  return metadataPairs(metadata)
    .map(([key, value]) => `${flat(key, VOICE_KEY_MAX)}: ${flat(value, VOICE_VALUE_MAX)}`)
    .join('\n');
}

function flat(text: string, max: number): string {
  const line = text.replace(/[\s\u0085\u2028\u2029]+/g, ' ').trim();
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, max - 1).join('')}…`;
}

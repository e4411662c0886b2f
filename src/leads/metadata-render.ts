// The one reading of a lead's metadata for the agent (docs/AGENT.md; docs/API.md, "metadata"): every pair, in
// order; non-strings JSON-stringified; null, undefined and empty strings dropped. The WhatsApp
// prompt shows the pairs quoted in its lead-data block ("What else we know about this lead",
// src/agent/lead-data-block.ts); the voice channel gets them as the `leadMetadata` variable,
// one `- key: value` line per pair. The submission refuses metadata that could not be shown whole
// (src/leads/lead-submission.ts, `metadataIssues`): a key or value over the limits below, or more
// than the lead-data block's share for metadata (METADATA_BLOCK_MAX_CHARS). Values stored before
// these limits may be longer: they are still cut, so they cannot crowd out the prompt.

/**
 * Characters (code points) of a metadata key, and of a value as shown (a string as is, any other
 * value as its JSON text). The submission refuses longer ones; both channels show every pair up to
 * these whole. The voice call's other lead-controlled variables (src/voice/call-request.ts) are cut
 * to the same, so that no value crowds out the assistant's prompt.
 */
export const METADATA_KEY_MAX_CHARS = 100;
export const METADATA_VALUE_MAX_CHARS = 1000;

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
  return (
    metadataPairs(metadata)
      // A list item each: a key such as `## Rules` cannot start a heading of the assistant's prompt.
      .map(([key, value]) => `- ${flat(key, METADATA_KEY_MAX_CHARS)}: ${flat(value, METADATA_VALUE_MAX_CHARS)}`)
      .join('\n')
  );
}

/**
 * One line of at most `max` characters: any run of whitespace or line separator (including U+0085,
 * U+2028, U+2029) becomes one space; a cut text ends with `…`.
 */
export function flat(text: string, max: number): string {
  const line = text.replace(/[\s\u0085\u2028\u2029]+/g, ' ').trim();
  const chars = [...line];
  return chars.length <= max ? line : `${chars.slice(0, max - 1).join('')}…`;
}

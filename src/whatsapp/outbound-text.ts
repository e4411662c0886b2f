// What we write to a lead, besides the model's own words.

/**
 * The providers' documented limits for a free-form text: Twilio's `Body` up to 1,600 characters,
 * Meta's `text.body` up to 4,096. We count UTF-16 code units, which are never fewer than the
 * characters (code points) either provider counts, so a text within our count is within theirs.
 */
export const MESSAGE_LIMITS = { twilio: 1600, meta: 4096 } as const;

/** The first word of the name the lead gave (the template greets them with it). */
export function firstName(name: string): string {
  return name.trim().split(/\s+/)[0] || name.trim();
}

/**
 * The first-contact template as the lead sees it, when the workspace gave its text; otherwise a
 * description, so the model still knows how the conversation began.
 */
export function templateText(template: { body?: string; id: string }, variables: string[]): string {
  if (template.body)
    return template.body.replace(/\{\{\s*(\d+)\s*\}\}/g, (whole, n: string) => variables[Number(n) - 1] ?? whole);
  return (
    `(WhatsApp template "${template.id}" sent to open the conversation, ` +
    `greeting the lead as ${variables[0] ?? 'them'}.)`
  );
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * The model's text as we send it: trimmed, and when longer than `limit` (UTF-16 code units) cut
 * to whole graphemes followed by "…". Cutting on a grapheme boundary keeps every emoji, flag and
 * accented letter whole: a cut inside a surrogate pair would reach the lead as U+FFFD.
 */
export function clampMessage(text: string, limit: number): string {
  const trimmed = text.trim();
  if (trimmed.length <= limit) return trimmed;
  let end = 0;
  for (const { index, segment } of graphemes.segment(trimmed)) {
    if (index + segment.length > limit - 1) break; // one unit stays free for the ellipsis
    end = index + segment.length;
  }
  return `${trimmed.slice(0, end).trimEnd()}…`;
}

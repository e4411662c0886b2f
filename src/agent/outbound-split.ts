// A long answer as several WhatsApp messages: split at sentence boundaries, each part within the
// provider's limit, instead of cut. A sentence longer than the limit is split between words, a
// word longer than it between graphemes (an emoji or accented letter is never cut in two).

const sentences = new Intl.Segmenter(undefined, { granularity: 'sentence' });
const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** `text` in parts of at most `limit` UTF-16 code units, in order; one part when it fits. */
export function splitMessage(text: string, limit: number): string[] {
  const trimmed = text.trim();
  if (trimmed.length <= limit) return trimmed === '' ? [] : [trimmed];
  const parts: string[] = [];
  let current = '';
  const flush = () => {
    const part = current.trim();
    if (part !== '') parts.push(part);
    current = '';
  };
  for (const { segment } of sentences.segment(trimmed)) {
    if ((current + segment).trimEnd().length <= limit) {
      current += segment;
      continue;
    }
    flush();
    for (const piece of segment.trim().length <= limit ? [segment] : pieces(segment, limit)) {
      if ((current + piece).trimEnd().length > limit) flush();
      current += piece;
    }
  }
  flush();
  return parts;
}

/** A sentence longer than `limit` in pieces that fit: words, or graphemes of a word too long. */
function pieces(sentence: string, limit: number): string[] {
  const out: string[] = [];
  for (const word of sentence.split(/(?<=\s)/)) {
    if (word.trim().length <= limit) {
      out.push(word);
      continue;
    }
    let chunk = '';
    for (const { segment } of graphemes.segment(word)) {
      if (chunk.length + segment.length > limit) {
        out.push(chunk);
        chunk = '';
      }
      chunk += segment;
    }
    out.push(chunk);
  }
  return out;
}

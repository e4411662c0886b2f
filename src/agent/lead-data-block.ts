import { METADATA_KEY_MAX_CHARS, METADATA_VALUE_MAX_CHARS, metadataPairs } from '../leads/metadata-render.ts';

// What the lead, its form and the agent's notes (which quote the lead) say, as the prompt shows
// it: one block between fixed delimiters, every value JSON (a string, quoted) on a line that starts with a
// label of ours. A value cannot start a line, close the block or open a section of the prompt:
// JSON escapes line breaks and quotes, and `<`, `>` and the Unicode line separators are escaped
// too. Each value and the whole block have a size budget, so one lead cannot crowd out the rest
// of the prompt (or the model's context).

export const LEAD_DATA_OPEN = '<lead_data>';
export const LEAD_DATA_CLOSE = '</lead_data>';

/**
 * Characters per value (goal, an answer); the lead's name and e-mail get less, metadata its own
 * (metadata-render.ts).
 */
export const LEAD_FIELD_MAX_CHARS = 1000;
/** Characters of the agent's notes the prompt shows: the most recent ones. */
export const LEAD_NOTES_MAX_CHARS = 3000;
/** Characters of the whole block; what does not fit is left out, with a line saying so. */
export const LEAD_DATA_MAX_CHARS = 12000;
/**
 * Characters of the block the metadata section may take (its heading and its `- "key": value`
 * lines, as shown, line ends included). The submission refuses metadata over it
 * (src/leads/lead-submission.ts), so an accepted lead's every pair is shown; the lead's other lines
 * get the rest of LEAD_DATA_MAX_CHARS, at least LEAD_DATA_MAX_CHARS - METADATA_BLOCK_MAX_CHARS.
 */
export const METADATA_BLOCK_MAX_CHARS = 4000;

const NAME_MAX_CHARS = 200;
const KEY_MAX = 100;

/** A value as one quoted, escaped line of at most `max` characters of its text (cut ones end with "…"). */
export function quoted(value: string, max = LEAD_FIELD_MAX_CHARS): string {
  // By code point, so a cut never splits a character; a code point is at most two code units.
  const head = [...value.slice(0, 2 * max)];
  const fits = value.length <= max || (head.length <= max && value.length <= 2 * max);
  return escapeLine(JSON.stringify(fits ? value : `${head.slice(0, max - 1).join('')}…`));
}

/** The tail of a long text (notes grow at the end: the latest matter most), quoted. */
export function quotedTail(value: string, max: number): string {
  const tail = [...value.slice(-2 * max)];
  if (value.length <= max || (tail.length <= max && value.length <= 2 * max)) return quoted(value, max);
  return escapeLine(JSON.stringify(`…${tail.slice(-(max - 1)).join('')}`));
}

function escapeLine(json: string): string {
  return json.replace(/[<>\u0085\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** A label of ours (a question's label from the workspace's form) on one line. */
export function oneLine(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}

export interface LeadDataInput {
  name: string;
  email: string | null;
  goal: string | null;
  /** The answers, labelled by us: `label` is the workspace's, `answer` the lead's. */
  answers: Array<{ label: string; answer: string }>;
  /** Answers to ids the form does not have: the id is the form's (the lead's) too. */
  unknownAnswers: Array<{ id: string; label: string | null; answer: string }>;
  notes: string | null;
  /** Notes operators shared with the agent, newest first; they share the notes budget with `notes`. */
  teamNotes?: string[];
  metadata: Record<string, unknown>;
}

/** The block's lines, delimiters included. */
export function leadDataBlock(d: LeadDataInput): string {
  const lines = [
    `Name: ${quoted(d.name, NAME_MAX_CHARS)}`,
    `Email: ${d.email ? quoted(d.email, NAME_MAX_CHARS) : 'not known yet (needed to book: ask for it)'}`,
    ...(d.goal ? [`Goal: ${quoted(d.goal)}`] : []),
    ...d.answers.map(({ label, answer }) => `Answer to "${oneLine(label)}": ${quoted(answer)}`),
    ...d.unknownAnswers.map(({ id, label, answer }) =>
      label
        ? `Answer to "${oneLine(label)}" (a question no longer on the form, id ${quoted(id, KEY_MAX)}): ` +
          quoted(answer)
        : `Answer to a question no longer on the form, id ${quoted(id, KEY_MAX)}: ${quoted(answer)}`,
    ),
    ...notesLines(d.notes, d.teamNotes ?? []),
  ];
  // Metadata has its share first (whole for every accepted lead), shown after the other lines.
  const metadata = withinBudget(metadataLines(d.metadata), METADATA_BLOCK_MAX_CHARS);
  const others = withinBudget(lines, LEAD_DATA_MAX_CHARS - charsOf(metadata));
  return [LEAD_DATA_OPEN, ...others, ...metadata, LEAD_DATA_CLOSE].join('\n');
}

/**
 * The metadata section of the block: spec, every pair under "What else we know about this lead";
 * here, inside the block. Empty without pairs.
 */
export function metadataLines(metadata: Record<string, unknown> | null | undefined): string[] {
  const pairs = metadataPairs(metadata);
  if (pairs.length === 0) return [];
  return [
    'What else we know about this lead:',
    ...pairs.map(([key, text]) => `- ${quoted(key, METADATA_KEY_MAX_CHARS)}: ${metadataValue(metadata![key], text)}`),
  ];
}

/** Characters that `lines` take in the block, line ends included (what `withinBudget` counts). */
export function charsOf(lines: readonly string[]): number {
  return lines.reduce((n, line) => n + line.length + 1, 0);
}

/**
 * The agent's notes and the team's shared notes within LEAD_NOTES_MAX_CHARS together: the team's
 * newest first, up to half of it (what they leave unused goes to the agent's notes), then the tail
 * of the agent's. A team note is an operator's, but it is quoted like the lead's data all the same.
 */
function notesLines(notes: string | null, teamNotes: string[]): string[] {
  const lines: string[] = [];
  let left = Math.floor(LEAD_NOTES_MAX_CHARS / 2);
  for (const note of teamNotes) {
    if (left < 20) break;
    const line = `Note from the team: ${quoted(note, Math.min(note.length, left))}`;
    lines.push(line);
    left -= Math.min(note.length, left);
  }
  const used = Math.floor(LEAD_NOTES_MAX_CHARS / 2) - left;
  if (notes) lines.push(`Your notes so far: ${quotedTail(notes, LEAD_NOTES_MAX_CHARS - used)}`);
  return lines;
}

/** A string quoted; any other value as its JSON text (already one line) when it fits, else quoted and cut. */
function metadataValue(value: unknown, text: string): string {
  return typeof value !== 'string' && text.length <= METADATA_VALUE_MAX_CHARS
    ? escapeLine(text)
    : quoted(text, METADATA_VALUE_MAX_CHARS);
}

/** The lines that fit in `max` characters, in order, then one line saying how many were left out. */
function withinBudget(lines: string[], max: number): string[] {
  const kept: string[] = [];
  let used = 0;
  for (const line of lines) {
    if (used + line.length + 1 > max) break;
    kept.push(line);
    used += line.length + 1;
  }
  const left = lines.length - kept.length;
  if (left === 0) return kept;
  return [...kept, `(${left} more line(s) of the lead's data left out: over this prompt's size budget)`];
}

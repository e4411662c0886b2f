// What the scripted policy reads: the system prompt of src/agent/prompt.ts, the text answers of
// the agent's tools (src/agent/tools/*), the lead's words and its own earlier messages. Every
// pattern here mirrors a wording of those files; a change there needs one here
// (test/api/llm-scripted-policy.test.ts runs the real prompt and tools, so it shows).

export interface OpenQuestion {
  id: string;
  label: string;
  type: 'choice' | 'number' | 'text';
  options: string[];
}

export interface PromptFacts {
  agentName?: string;
  company?: string;
  leadName?: string;
  /** Open questions in form order; undefined when the prompt has no such section. */
  open?: OpenQuestion[];
  /** The "Qualification criteria" section's text. */
  criteria?: string;
  /** Answers the lead-data block shows ('Answer to "label": "value"'). */
  answers?: Array<{ label: string; value: string }>;
}

// `describeQuestion`: "q_abc: Do you own the property? (required; one of: Yes, No)".
const QUESTION_LINE = new RegExp(
  String.raw`^- (q_[A-Za-z0-9_-]+): (.+) \((?:required|optional); ` +
    String.raw`(one of: (.*)|a number(?:, at least [-\d.]+| from [-\d.]+ to [-\d.]+)?|free text)\)$`,
);

/** Questions listed as `describeQuestion` lines (the prompt's open section, updateLeadProfile's "Still open:"). */
export function questionLines(text: string): OpenQuestion[] {
  return text.split('\n').flatMap((line) => {
    const m = QUESTION_LINE.exec(line.trim());
    if (!m) return [];
    const [, id = '', label = '', kind = '', options] = m;
    const type = kind.startsWith('a number') ? 'number' : kind === 'free text' ? 'text' : 'choice';
    return [{ id, label, type, options: type === 'choice' ? (options ?? '').split(', ') : [] }];
  });
}

export function readPrompt(system: string): PromptFacts {
  const facts: PromptFacts = {};
  const role = /You are (.+?), speaking for (.+?)\. What \2 offers:/.exec(system);
  if (role) {
    facts.agentName = role[1]!;
    facts.company = role[2]!;
  }
  // The lead-data block quotes each value as a JSON string (src/agent/lead-data-block.ts).
  const name = /^Name: ("(?:[^"\\]|\\.)*")$/m.exec(sectionBody(system, 'What we know about the lead') ?? '');
  if (name) facts.leadName = (JSON.parse(name[1]!) as string).trim();
  const open = sectionBody(system, 'Questions still open');
  if (open !== undefined) facts.open = questionLines(open);
  const criteria = sectionBody(system, 'Qualification criteria');
  if (criteria !== undefined) facts.criteria = criteria.trim();
  const block = sectionBody(system, 'What we know about the lead') ?? '';
  facts.answers = [...block.matchAll(/^Answer to "([^"\n]+)": ("(?:[^"\\]|\\.)*")$/gm)].map((m) => ({
    label: m[1]!,
    value: JSON.parse(m[2]!) as string,
  }));
  return facts;
}

export interface Minimum {
  min: number;
  /** The clause's words that tie it to a question's label ("electricity", "eur"). */
  words: string[];
}

const NOT_TELLING = new Set(['least', 'more', 'than', 'with', 'that', 'have', 'pays', 'a', 'the', 'for', 'and', 'per']);

/** Minimums the criteria state in words ("pays at least 80 EUR a month for electricity"), clause by clause. */
export function criteriaMinimums(criteria: string): Minimum[] {
  return criteria.split(/[,;.](?!\d)|\band\b/).flatMap((clause) => {
    const m = /\b(?:at least|minimum(?: of)?|no less than)\s+(?:[€$£]\s*)?(\d+(?:[.,]\d+)?)/i.exec(clause);
    if (!m) return [];
    return [{ min: Number(m[1]!.replace(',', '.')), words: wordsOf(clause).filter((w) => !NOT_TELLING.has(w)) }];
  });
}

/** The minimum a numeric answer to `label` falls below, if the criteria tie one to it. */
export function belowMinimum(minimums: Minimum[], label: string, value: number): Minimum | undefined {
  const words = wordsOf(label);
  return minimums.find((m) => value < m.min && m.words.some((w) => words.includes(w)));
}

function wordsOf(text: string): string[] {
  return (text.toLowerCase().match(/[a-z€$£]{3,}/g) ?? []).map((w) => (w === '€' ? 'eur' : w));
}

/** The body of the last `## title` section (lead data shown earlier in the prompt cannot fake it). */
function sectionBody(text: string, title: string): string | undefined {
  const start = text.lastIndexOf(`## ${title}\n`);
  if (start < 0) return undefined;
  const body = text.slice(start + title.length + 4);
  const end = body.search(/^## /m);
  return end < 0 ? body : body.slice(0, end);
}

export interface SlotLine {
  label: string;
  start: string;
}

/** listSlots' lines: "- Monday, 5 September 2050 at 09:00 (start: 2050-09-05T09:00:00.000+02:00)". */
export function slotLines(toolAnswer: string): SlotLine[] {
  return [...toolAnswer.matchAll(/^- (.+) \(start: ([^)\s]+)\)$/gm)].map((m) => ({ label: m[1]!, start: m[2]! }));
}

/** The labels of a numbered offer "1) …\n2) …" in one of our own messages, in order. */
export function offeredLabels(agentText: string): string[] {
  return [...agentText.matchAll(/^\s*(\d+)\) (.+)$/gm)].map((m) => m[2]!.trim());
}

const ORDINALS = ['first', 'second', 'third', 'fourth', 'fifth', 'sixth', 'seventh', 'eighth', 'ninth', 'tenth'];

/** Which of `labels` the lead picked: by ordinal ("the first"), by number ("2") or by time ("13:00"). */
export function pickedLabel(leadText: string, labels: string[]): string | undefined {
  const text = leadText.toLowerCase();
  const ordinal = ORDINALS.findIndex((w) => new RegExp(`\\b${w}\\b`).test(text));
  if (ordinal >= 0 && ordinal < labels.length) return labels[ordinal];
  if (/\b(last|latest)\b/.test(text)) return labels.at(-1);
  const number = /(?:^|[\s#(])(\d{1,2})(?:$|[\s).!,])/.exec(text);
  const n = number ? Number(number[1]) : 0;
  if (n >= 1 && n <= labels.length) return labels[n - 1];
  const byTime = labels.filter((l) => {
    const time = /\d{2}:\d{2}$/.exec(l)?.[0];
    return time !== undefined && text.includes(time);
  });
  return byTime.length === 1 ? byTime[0] : undefined;
}

/** The lead does not want any more messages (WhatsApp's keywords, and plain sentences). */
export function optsOut(text: string): boolean {
  return (
    /^\s*(stop|stopp|stop all|stopall|unsubscribe|cancel|end|quit|opt[ -]?out)\s*[.!]*\s*$/i.test(text) ||
    /\b(stop (messaging|texting|writing to|contacting) me|(do not|don't) (message|contact|text|write to) me)\b/i.test(
      text,
    )
  );
}

const WANTS_HUMAN = new RegExp(
  String.raw`\b(real|actual|live) (person|human)\b|` +
    String.raw`\b(talk|speak|chat) (to|with) (a |an )?(person|human|someone|somebody|representative|colleague)\b`,
  'i',
);

export function wantsHuman(text: string): boolean {
  return WANTS_HUMAN.test(text);
}

export function notAFit(text: string): boolean {
  return /\bnot (a|the right|a good) fit\b|\bno budget\b|\b(not|no longer) interested\b/i.test(text);
}

export function emailIn(text: string): string | undefined {
  return /[^\s@<>(),;:"']+@[^\s@<>(),;:"']+\.[A-Za-z]{2,}/.exec(text)?.[0];
}

/**
 * The lead's words as an answer the tool accepts: a choice as the option named in the text
 * (else the first option: a scripted model guesses), a number as the first number in the text.
 */
export function answerFor(q: OpenQuestion, text: string): string | number {
  const plain = text.trim().slice(0, 1000);
  if (q.type === 'choice') {
    const lower = plain.toLowerCase();
    const named = q.options
      .map((o) => ({ o, at: lower.search(new RegExp(`(^|[^a-z0-9])${escapeRegExp(o.toLowerCase())}($|[^a-z0-9])`)) }))
      .filter((x) => x.at >= 0)
      .sort((a, b) => a.at - b.at)[0];
    return named?.o ?? q.options[0] ?? plain;
  }
  if (q.type === 'number') {
    // "1,200" and "1 200" are one number; the tool itself reads "1 200" too.
    const m = /-?\d+(?:[.,]\d+)?/.exec(plain.replace(/(\d)[,\s](?=\d{3}\b)/g, '$1'));
    return m ? Number(m[0].replace(',', '.')) : plain;
  }
  return plain;
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** One line of at most `max` characters, for reasons quoted from the lead. */
export function excerpt(text: string, max = 200): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length <= max ? line : `${line.slice(0, max - 1)}…`;
}

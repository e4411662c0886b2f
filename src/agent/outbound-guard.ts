import { splitMessage } from './outbound-split.ts';

// The check every agent message passes before it reaches a lead, whatever the model wrote
// (docs/AGENT.md, "Safety"). Pure functions: the WhatsApp turn applies the verdict (src/whatsapp/reply-guard.ts).
// What is repairable is repaired (markup, template placeholders and foreign links removed, a long
// answer split); what is not (a cut or degenerate answer, a booking the lead does not have) is
// refused, and the model is asked once more.

/** Parts one answer may be split into; a longer answer is refused as too long. */
export const MAX_PARTS = 4;
/** Longer than this, an answer is not even looked at: no lead message needs it. */
const MAX_RAW = 64 * 1024;
/** A run of one character this long is a broken model, not a message ("xxxx…", "!!!!…"). */
const MAX_RUN = 40;

export const GUARD_PROBLEMS = ['cut', 'degenerate', 'empty', 'too_long', 'booking_claim'] as const;
export type GuardProblem = (typeof GUARD_PROBLEMS)[number];

/** What the guard removed; counts and link hosts only, never the text. */
export interface GuardChanges {
  html: number;
  markdown: number;
  placeholders: number;
  /** Hosts of the links removed (not on the workspace's list). */
  links: string[];
}

export interface GuardInput {
  text: string;
  /** The model's `finish_reason` (`length`: cut by the token limit). */
  finishReason?: string | undefined;
  /** The lead has a booking: only then may a message say so. */
  hasBooking: boolean;
  /** Domains links may point to (a domain allows its subdomains); empty: no links at all. */
  allowedDomains: readonly string[];
  /** The provider's limit for one message (UTF-16 code units). */
  limit: number;
  maxParts?: number;
}

export type GuardVerdict =
  | { kind: 'send'; parts: string[]; changes: GuardChanges }
  | { kind: 'refuse'; problem: GuardProblem; changes: GuardChanges };

export function noChanges(): GuardChanges {
  return { html: 0, markdown: 0, placeholders: 0, links: [] };
}

export function changed(c: GuardChanges): boolean {
  return c.html + c.markdown + c.placeholders + c.links.length > 0;
}

export function checkOutbound(input: GuardInput): GuardVerdict {
  const changes = noChanges();
  if (input.finishReason === 'length' || input.finishReason === 'content_filter') {
    return { kind: 'refuse', problem: 'cut', changes };
  }
  if (input.text.length > MAX_RAW || longRun(input.text)) return { kind: 'refuse', problem: 'degenerate', changes };
  const text = cleanText(input.text, input.allowedDomains, changes);
  if (text === '') return { kind: 'refuse', problem: 'empty', changes };
  if (!input.hasBooking && claimsBooking(text)) return { kind: 'refuse', problem: 'booking_claim', changes };
  const parts = splitMessage(text, input.limit);
  if (parts.length > (input.maxParts ?? MAX_PARTS)) return { kind: 'refuse', problem: 'too_long', changes };
  return { kind: 'send', parts, changes };
}

/** What the model is told when its answer was refused, so that it can answer again. */
export function correctionFor(problem: GuardProblem, limit: number): string {
  const again = 'Write your answer to the lead again, complete, in plain text.';
  switch (problem) {
    case 'cut':
      return `Your last answer was cut off by the length limit and was not sent. ${again} Keep it short.`;
    case 'degenerate':
    case 'empty':
      return (
        'Your last answer was empty or not readable (markup only, or one character repeated) and was not ' +
        `sent. ${again}`
      );
    case 'too_long':
      return `Your last answer was too long for WhatsApp and was not sent. ${again} At most ${limit} characters.`;
    case 'booking_claim':
      return (
        'Your last answer told the lead they are booked (or gave a booking reference), but this lead has no ' +
        'booking, so it was not sent. Only bookConsult makes a booking; never invent a booking or a reference. ' +
        again
      );
  }
}

/** Some character repeated MAX_RUN times in a row (code points, so an emoji counts once). */
export function longRun(text: string): boolean {
  return new RegExp(`(\\S)\\1{${MAX_RUN - 1}}`, 'u').test(text);
}

const SCRIPT_LIKE = /<(script|style|iframe|object)\b[^>]*>[\s\S]*?<\/\1\s*>/gi;
const HTML_TAG = /<\/?[a-z][a-z0-9-]*(?:\s[^<>]*)?\/?>|<!--[\s\S]*?-->/gi;
const PLACEHOLDER = /\{\{[^{}\n]{0,60}\}\}/g;
const MD_IMAGE_OR_LINK = /!?\[([^\]\n]{0,300})\]\(([^)\s]{1,2000})\)/g;
const MD_HEADING = /^[ \t]{0,3}#{1,6}[ \t]+/gm;
const MD_STRONG = /(\*\*|__)(?=\S)([\s\S]*?)\1/g;
const MD_FENCE = /```[a-z]*\n?/gi;

/**
 * The text without HTML, WhatsApp-foreign markdown (headings, `**`/`__`, code fences, link
 * syntax), template placeholders and links to other domains; whitespace tidied. WhatsApp's own
 * `*bold*` and `_italic_` stay.
 */
export function cleanText(text: string, allowedDomains: readonly string[], changes = noChanges()): string {
  type Key = 'html' | 'markdown' | 'placeholders';
  const count = (re: RegExp, s: string, key: Key, to: string | ((...m: string[]) => string)) =>
    s.replace(re, (...m: string[]) => {
      changes[key]++;
      return typeof to === 'string' ? to : to(...m);
    });
  let out = text.replace(/\r\n?/g, '\n');
  out = count(SCRIPT_LIKE, out, 'html', '');
  out = count(HTML_TAG, out, 'html', '');
  out = count(PLACEHOLDER, out, 'placeholders', '');
  out = count(MD_IMAGE_OR_LINK, out, 'markdown', mdLink);
  out = count(MD_HEADING, out, 'markdown', '');
  out = count(MD_STRONG, out, 'markdown', (_w, _m, inner) => inner!);
  out = count(MD_FENCE, out, 'markdown', '');
  out = removeLinks(out, allowedDomains, changes);
  return out
    .split('\n')
    .map((line) =>
      line
        .replace(/[ \t]{2,}/g, ' ')
        .replace(/[ \t]+([.,;:!?])/g, '$1')
        .trimEnd(),
    )
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

// A URL with a scheme, a `www.` host, or a bare host (or IPv4 address) with a path, or a bare host
// with a common top-level domain. A link does not start inside a word (`xample.com`), but does
// right after WhatsApp's `_italic_` (or `*bold*`, `~strike~`) marker, dots, a dash or a lone `@`
// (`_evil.com/pay_`, `...evil.com/pay`, `-evil.com/pay`, `@evil.com/pay`). An e-mail address is not
// a link: a bare host without a path after `name@` is (part of) its domain, one before `@` part of
// its local part, and both stay (`ada@mail.example.com`, `info.de+x@example.org`).
const COMMON_TLD =
  'com|net|org|info|biz|io|co|me|ly|app|dev|link|xyz|site|online|shop|' + 'de|uk|fr|es|pt|br|nl|it|eu|us|ru|cn';
const STARTS_WORD = '(?<![a-z0-9])';
const NOT_IN_EMAIL = String.raw`(?<![\w.+-]@[\w.-]*)`;
const LABELS = String.raw`(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+`;
const OCTET = String.raw`(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)`;
const PORT = String.raw`(?::\d{1,5})?`;
const URL_CHARS = String.raw`[^\s<>"']`;
const LINK = new RegExp(
  // 1: an emphasis marker right before the link (removed with it when it also closes after it), or
  // a lone `@` (removed with it).
  `(?:(?<![a-z0-9])([_*~@]))?${STARTS_WORD}(?:` +
    String.raw`[a-z][a-z0-9+.-]{1,20}:\/\/${URL_CHARS}+|` +
    String.raw`www\.${URL_CHARS}*\/${URL_CHARS}*|` +
    String.raw`(?:${LABELS}[a-z]{2,24}|(?:${OCTET}\.){3}${OCTET})${PORT}\/${URL_CHARS}*|` +
    String.raw`${NOT_IN_EMAIL}(?:www\.${URL_CHARS}+|${LABELS}(?:${COMMON_TLD})(?![@a-z0-9-]|\.[a-z0-9]|[\w.+-]*@)\1?))`,
  'gi',
);

/** A markdown link or image as plain text: its label and its address (checked like any link). */
const mdLink = (_whole: string, label?: string, url?: string) => (label && label !== url ? `${label} ${url}` : url!);

function removeLinks(text: string, allowed: readonly string[], changes: GuardChanges): string {
  const domains = allowed.map((d) => d.toLowerCase().replace(/^\.+|\.+$/g, ''));
  return text.replace(LINK, (match: string, marker: string | undefined) => {
    const lead = marker ?? '';
    const link = match.slice(lead.length);
    const url = link.replace(/[.,;:!?)\]}'"_*~]+$/, '');
    const rest = link.slice(url.length);
    const host = hostOf(url);
    if (host && domains.some((d) => host === d || host.endsWith(`.${d}`))) return match;
    if (host && !changes.links.includes(host) && changes.links.length < 10) changes.links.push(host);
    if (!host) changes.links.length < 10 && changes.links.push('(unparsable)');
    // `_evil.com/pay_`: the emphasis around the link goes with it; so does `@` in `@evil.com/pay`.
    if (lead === '@') return rest;
    return lead && rest.startsWith(lead) ? rest.slice(1) : lead + rest;
  });
}

/** The link's host, lower case, without port or trailing dot; null when it has none. */
export function hostOf(link: string): string | null {
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(link) ? link : `https://${link}`;
  try {
    const host = new URL(withScheme).hostname.toLowerCase().replace(/\.$/, '');
    return host === '' ? null : host;
  } catch {
    return null;
  }
}

// Claims of a booking in the languages the agent speaks most: "you're booked", "your appointment
// is confirmed", "I've booked you", a booking reference. Only checked when the lead has none.
const BOOKING_CLAIMS: RegExp[] = [
  // English
  String.raw`\b(?:you(?:['’]re| are)|you(?:['’]ve| have) been|you['’]re all)\s+(?:now\s+|all\s+|successfully\s+)?` +
    String.raw`(?:booked|scheduled|confirmed|reserved|set)\b`,
  String.raw`\b(?:booking|appointment|consultation|reservation|meeting|call|slot)\s+(?:is|has been|was)\s+` +
    String.raw`(?:now\s+|successfully\s+)?(?:confirmed|booked|scheduled|reserved)\b`,
  String.raw`\bI(?:['’]ve| have)?\s+(?:just\s+|now\s+|successfully\s+)?(?:booked|scheduled|reserved)\s+` +
    String.raw`(?:you|your|it|the|a)\b`,
  String.raw`\b(?:booking|confirmation|reservation)\s*(?:reference|number|code|id|no\.?|#)\s*(?:is\s*)?[:#]?\s*` +
    String.raw`[A-Z0-9-]*\d`,
  String.raw`\breference\s*(?:number|code|no\.?)?\s*(?:is\s*)?[:#]?\s*[A-Z]*\d[A-Z0-9-]*\b`,
  // German
  String.raw`\b(?:sie sind|du bist)\s+(?:jetzt\s+)?(?:gebucht|eingetragen)\b`,
  String.raw`\b(?:termin|buchung)\s+(?:ist\s+)?(?:jetzt\s+)?(?:bestätigt|gebucht)\b`,
  String.raw`\bhabe\s+(?:ihnen|dir|sie|dich)?\s*(?:einen\s+termin\s+)?gebucht\b`,
  // Spanish
  String.raw`\b(?:cita|reserva)\s+(?:está\s+)?(?:confirmada|reservada|agendada)\b`,
  String.raw`\b(?:está|estás)\s+(?:reservad[oa]|agendad[oa]|confirmad[oa])\b`,
  // French (no \b after a final accented letter: it is not a word character to RegExp)
  String.raw`\b(?:rendez-vous|réservation)\s+(?:est\s+)?(?:confirmé|réservé)`,
  String.raw`\b(?:vous êtes|tu es)\s+(?:bien\s+)?(?:inscrit|réservé|confirmé)`,
  // Portuguese
  String.raw`\b(?:consulta|reunião|marcação)\s+(?:está\s+)?(?:confirmada|agendada|marcada)\b`,
  String.raw`\b(?:está|você está)\s+(?:agendad[oa]|marcad[oa])\b`,
].map((re) => new RegExp(re, 'i'));

export function claimsBooking(text: string): boolean {
  return BOOKING_CLAIMS.some((re) => re.test(text));
}

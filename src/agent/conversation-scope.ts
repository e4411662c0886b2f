import type { Queryable } from '../db/pool.ts';
import type { ToolContext } from './tools/tool-context.ts';

// "This conversation" for the checks bookConsult makes: the lead's WhatsApp thread, or the one
// call the voice tool call belongs to. Offers (offered_slots, migration 036) are kept per
// conversation, and an e-mail address other than the lead's stored one must come from what the
// lead itself wrote or said in it.

/** How many of the lead's latest WhatsApp messages are searched for what it gave. */
const LEAD_MESSAGES_READ = 200;

export function conversationKey(ctx: Pick<ToolContext, 'call'>): string {
  return ctx.call ? `call:${ctx.call.providerCallId}` : 'whatsapp';
}

/** What the lead itself wrote (WhatsApp) or said (the call so far), newest first. */
export async function leadWords(ctx: Pick<ToolContext, 'call' | 'pool' | 'leadId'>): Promise<string[]> {
  if (ctx.call) return [...ctx.call.leadSaid].reverse();
  const { rows } = await ctx.pool.query({
    name: 'lead-inbound-words',
    text: `SELECT body FROM whatsapp_messages WHERE lead_id = $1 AND direction = 'inbound' ORDER BY id DESC LIMIT $2`,
    values: [ctx.leadId, LEAD_MESSAGES_READ],
  });
  return rows.map((r) => String(r.body));
}

// What "the lead gave it" means: the value equals a whole token of what the lead wrote or said,
// never a part of one. A substring would accept `ada@example.co` from "ada@example.com",
// `bob@corp.com` from "jim.bob@corp.com", a phone joined from two numbers in one message, or the
// name "e" from "yes": an address planted in the lead's data only has to be a piece of the lead's.

/** Characters that end an address in running text (none of them is allowed unquoted in one). */
const ADDRESS_DELIMITERS = /[\s<>()[\]{},;:"]+/;

/** The e-mail address tokens of one message, lower-cased, with sentence punctuation around them removed. */
function addressTokens(text: string): string[] {
  return text
    .split(ADDRESS_DELIMITERS)
    .map((t) => t.replace(/^['*.]+/, '').replace(/['*.!?]+$/, ''))
    .filter((t) => t.includes('@'));
}

/**
 * The lead's words as speech-to-text writes an address ("ada dot work at example dot com", or
 * spelled "a d a at example dot com"): `at` and `dot` between words become `@` and `.`, a run of
 * single letters or digits becomes one word. Other words stay apart, so tokens keep their bounds.
 */
function spokenAddresses(text: string): string {
  return text
    .replace(/(?<![\p{L}\p{N}])(?:[\p{L}\p{N}] +)+[\p{L}\p{N}](?![\p{L}\p{N}])/gu, (run) => run.replace(/ +/g, ''))
    .replace(/\s+at\s+/g, '@')
    .replace(/\s+dot\s+/g, '.')
    .replace(/\s*@\s*/g, '@');
}

/**
 * Whether the lead gave this e-mail address itself: it equals, ignoring case, an address the lead
 * wrote, or said as speech-to-text writes it (see spokenAddresses).
 */
export function leadGaveEmail(words: readonly string[], email: string): boolean {
  const wanted = email.trim().toLowerCase();
  if (!wanted.includes('@')) return false;
  return words.some((w) => {
    const text = w.toLowerCase();
    return addressTokens(text).includes(wanted) || addressTokens(spokenAddresses(text)).includes(wanted);
  });
}

/** The words of a text, case-folded: letters, marks and digits, with `'` and `-` inside a word kept. */
function wordsOf(text: string): string[] {
  return (
    text
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{M}\p{N}]+(?:['’-][\p{L}\p{M}\p{N}]+)*/gu) ?? []
  );
}

/**
 * Whether the lead wrote or said these words (a name, say a corrected one), ignoring case, spacing
 * and punctuation: all of them, whole and in order, one after the other in one message.
 */
export function leadGaveText(words: readonly string[], text: string): boolean {
  const wanted = wordsOf(text);
  if (wanted.length === 0) return false;
  return words.some((w) => {
    const have = wordsOf(w);
    for (let i = 0; i + wanted.length <= have.length; i++) {
      if (wanted.every((word, j) => have[i + j] === word)) return true;
    }
    return false;
  });
}

/**
 * A phone number in running text: digits with an optional leading +, grouped by single spaces,
 * dashes, dots, slashes or parentheses (`+49 (0)30 1234-5678`). A word, a comma or a line break
 * ends it, so two numbers in one message stay two.
 */
const PHONE_TOKEN = /\+?\(?\d(?:[ \t\u00a0./()-]{0,3}\d)*/g;

/** How many leading digits a number written with its country code may have over one written nationally. */
const COUNTRY_CODE_MAX = 3;

/** The digits of a number without its leading zeros (a national trunk 0, an international 00). */
function phoneDigits(text: string): string {
  return text.replace(/\D/g, '').replace(/^0+/, '');
}

/**
 * Whether the lead gave this phone number itself: a number in one of its messages has the same
 * digits (at least 7), or the same ones but for a country code before them (the lead wrote
 * `030 1234567`, the model gives `+49 30 1234567`, or the other way round).
 */
export function leadGavePhone(words: readonly string[], phone: string): boolean {
  const wanted = phoneDigits(phone);
  if (wanted.length < 7) return false;
  const same = (given: string) => {
    if (given.length < 7) return false;
    const [short, long] = given.length <= wanted.length ? [given, wanted] : [wanted, given];
    return long.endsWith(short) && long.length - short.length <= COUNTRY_CODE_MAX;
  };
  return words.some((w) => (w.match(PHONE_TOKEN) ?? []).some((token) => same(phoneDigits(token))));
}

/** Records the starts listSlots showed the model, so bookConsult can tell an offered time from an invented one. */
export async function recordOfferedSlots(
  db: Queryable,
  leadId: string,
  conversation: string,
  starts: readonly string[],
  at: Date,
): Promise<void> {
  if (starts.length === 0) return;
  await db.query({
    name: 'record-offered-slots',
    text: `INSERT INTO offered_slots (lead_id, conversation, start_at, offered_at)
           SELECT $1, $2, s, $4 FROM unnest($3::timestamptz[]) AS s
           ON CONFLICT (lead_id, conversation, start_at) DO UPDATE SET offered_at = EXCLUDED.offered_at`,
    values: [leadId, conversation, starts.map((s) => new Date(Date.parse(s)).toISOString()), at],
  });
}

/** When listSlots last offered this start to the lead in this conversation; null: never. */
export async function offeredAt(
  db: Queryable,
  leadId: string,
  conversation: string,
  startMs: number,
): Promise<Date | null> {
  const { rows } = await db.query({
    name: 'slot-offered-at',
    text: 'SELECT offered_at FROM offered_slots WHERE lead_id = $1 AND conversation = $2 AND start_at = $3',
    values: [leadId, conversation, new Date(startMs)],
  });
  return rows[0]?.offered_at ?? null;
}

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

/**
 * Whether the lead gave this e-mail address itself. Speech-to-text writes an address as words
 * ("ada at example dot com"), so the lead's words are also read with those spelled out.
 */
export function leadGaveEmail(words: readonly string[], email: string): boolean {
  const wanted = email.trim().toLowerCase();
  return words.some((w) => {
    const text = w.toLowerCase();
    if (text.includes(wanted)) return true;
    const spoken = text
      .replace(/\s+at\s+/g, '@')
      .replace(/\s+dot\s+/g, '.')
      .replace(/\s+/g, '');
    return spoken.includes(wanted);
  });
}

/** Whether the lead wrote or said these words (a name), ignoring case and spacing. */
export function leadGaveText(words: readonly string[], text: string): boolean {
  const fold = (s: string) => s.toLowerCase().replace(/\s+/g, ' ').trim();
  const wanted = fold(text);
  return wanted !== '' && words.some((w) => fold(w).includes(wanted));
}

/** Whether the lead gave this phone number itself: its digits (at least 7) appear in one of its messages. */
export function leadGavePhone(words: readonly string[], phone: string): boolean {
  const digits = phone.replace(/\D/g, '').replace(/^0+/, '');
  if (digits.length < 7) return false;
  // The lead may have written it nationally (030 …) or with the country code: the national part must appear.
  const tail = digits.slice(-Math.min(digits.length, 9));
  return words.some((w) => w.replace(/\D/g, '').includes(tail));
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

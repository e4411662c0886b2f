import type { Queryable } from '../../db/pool.ts';
import { isE164, normalizePhone } from '../../leads/phone.ts';
import type { Attendee } from '../../scheduling/scheduling-provider.ts';
import type { AgentLead } from '../agent-lead-queries.ts';
import { leadGaveEmail, leadGavePhone, leadGaveText, leadWords } from '../conversation-scope.ts';
import type { ToolContext } from './tool-context.ts';

// Who a booking is for: the lead, never someone the model names. The lead's stored name, e-mail
// and phone are used; another value is taken only when the lead itself wrote or said it in this
// conversation (a work address, a corrected name), and a new e-mail address is then recorded on
// the lead and its timeline, where the operator sees it.

export interface BookingRequest {
  name?: string | undefined;
  email?: string | undefined;
  phone?: string | undefined;
}

export type AttendeeDecision = { attendee: Attendee; newEmail: boolean } | { answer: string };

export const NEEDS_EMAIL =
  'Nothing was booked yet: an e-mail address is needed (the booking confirmation goes there). ' +
  'Ask the lead for it, then call bookConsult again with email.';

function notTheLeads(what: string): string {
  return (
    "Nothing was booked: the consultation is booked only for the lead, with the lead's own details, " +
    `and the ${what} you gave is not the lead's and was not given by the lead in this conversation. ` +
    "Call bookConsult again without it to use the lead's stored details, " +
    'or ask the lead for theirs and use exactly what the lead tells you.'
  );
}

export async function decideAttendee(
  ctx: ToolContext,
  lead: AgentLead,
  r: BookingRequest,
  tz: string,
  country?: string,
): Promise<AttendeeDecision> {
  const same = (a: string | null | undefined, b: string) => (a ?? '').trim().toLowerCase() === b.trim().toLowerCase();
  // Read only when something differs from the lead's own details: the usual booking needs no query.
  let words: string[] | undefined;
  const said = async () => (words ??= await leadWords(ctx));

  if (r.name !== undefined && !same(lead.name, r.name) && !leadGaveText(await said(), r.name)) {
    return { answer: notTheLeads('name') };
  }
  let email = lead.email;
  let newEmail = false;
  if (r.email !== undefined && !same(lead.email, r.email)) {
    if (!leadGaveEmail(await said(), r.email)) return { answer: notTheLeads('e-mail address') };
    email = r.email.trim();
    newEmail = true;
  }
  if (!email) return { answer: NEEDS_EMAIL };
  let phone: string | null = lead.phoneNormalized;
  if (r.phone !== undefined) {
    const given = normalizePhone(r.phone, country);
    if (given !== lead.phoneNormalized) {
      if (!leadGavePhone(await said(), r.phone)) return { answer: notTheLeads('phone number') };
      phone = given;
    }
  }
  // Cal.com wants attendee phones in E.164; any other number would make it refuse the whole
  // booking, so such a number is left out.
  const attendee: Attendee = {
    name: r.name?.trim() || lead.name,
    email,
    timeZone: tz,
    ...(phone && isE164(phone) ? { phoneNumber: phone } : {}),
  };
  return { attendee, newEmail };
}

/** The lead gave another address for the confirmation: it becomes the lead's e-mail, noted on the timeline. */
export async function recordLeadEmail(db: Queryable, leadId: string, email: string): Promise<void> {
  await db.query({
    name: 'record-lead-email',
    text: `WITH prev AS (SELECT id, email FROM leads WHERE id = $1 FOR UPDATE),
                saved AS (UPDATE leads l SET email = $2, updated_at = now()
                            FROM prev WHERE l.id = prev.id RETURNING l.id)
           INSERT INTO lead_events (lead_id, type, data)
           SELECT prev.id, 'lead.email_changed',
                  jsonb_build_object('email', $2::text, 'previousEmail', prev.email,
                                     'source', 'conversation', 'actor', 'agent')
             FROM prev JOIN saved ON saved.id = prev.id`,
    values: [leadId, email],
  });
}

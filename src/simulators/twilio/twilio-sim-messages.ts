import { randomBytes } from 'node:crypto';
import {
  TWILIO_WINDOW_CLOSED,
  TWILIO_WINDOW_CLOSED_MESSAGE,
  twilioErrorBody,
  type TwilioErrorBody,
} from '../../whatsapp/twilio/twilio-errors.ts';

// The Twilio simulator's view of `POST …/Messages.json`: validating the form the way Twilio
// answers it (Twilio's Messages API docs, Twilio's OpenAPI document) and building the message resource. Pure functions;
// twilio-simulator.ts owns the state. Error wording follows Twilio's error pages and messages
// quoted in public bug reports; where the order of checks or a text is not confirmed, it says so.

/** A create request that passed validation. */
export interface ValidSend {
  /** `+digits` of the recipient and of our sender. */
  to: string;
  from: string;
  kind: 'text' | 'template';
  /** What the lead sees: Body, or the template's text with its variables filled in. */
  text: string;
  contentSid?: string;
  variables?: Record<string, string>;
  statusCallback?: string;
}

export type SendCheck = { ok: true; send: ValidSend } | { ok: false; error: TwilioErrorBody };

export interface SendRules {
  /** Our registered WhatsApp senders, `+digits`. */
  senders: ReadonlySet<string>;
  /** Approved templates: ContentSid → body with {{1}}, {{2}} placeholders. */
  templates: ReadonlyMap<string, string>;
}

const WHATSAPP = /^whatsapp:(\+[1-9]\d{6,14})$/;
const BODY_LIMIT = 1600;

const bad = (code: number, message: string): SendCheck => ({ ok: false, error: twilioErrorBody(400, code, message) });

export function checkSend(params: URLSearchParams, rules: SendRules): SendCheck {
  const to = params.get('To') ?? '';
  const from = params.get('From') ?? '';
  if (to === '') return bad(21604, "A 'To' phone number is required.");
  // A To without the channel prefix is an SMS number; with it, it must be E.164.
  const toMatch = WHATSAPP.exec(to);
  if (!toMatch && (to.startsWith('whatsapp:') || !/^\+?[1-9]\d{6,14}$/.test(to))) {
    return bad(21211, `The 'To' number ${to} is not a valid phone number.`);
  }
  // Messaging Services (MessagingServiceSid) are not simulated: a From is always required.
  if (from === '') return bad(21603, "A 'From' phone number is required.");
  const fromMatch = WHATSAPP.exec(from);
  if (!toMatch || !fromMatch) return bad(21910, 'Invalid From and To pair. From and To should be of the same channel');
  if (!rules.senders.has(fromMatch[1]!))
    return bad(63007, 'Twilio could not find a Channel with the specified From address');

  const send: ValidSend = { to: toMatch[1]!, from: fromMatch[1]!, kind: 'text', text: '' };
  const contentSid = params.get('ContentSid');
  if (contentSid !== null) {
    // Body is ignored when a template is given (Twilio's docs say to leave it out; UNCONFIRMED
    // whether Twilio refuses the combination).
    const template = /^HX[0-9a-fA-F]{32}$/.test(contentSid) ? rules.templates.get(contentSid) : undefined;
    if (template === undefined) return bad(21655, 'The ContentSid is Invalid.');
    const variables = parseVariables(params.get('ContentVariables'));
    // A placeholder without a value is refused here; UNCONFIRMED whether Twilio refuses it at
    // create time (21656) or fails the message later (63028).
    const text = variables && renderTemplate(template, variables);
    if (!variables || text === undefined) return bad(21656, 'The ContentVariables Parameter is invalid.');
    Object.assign(send, { kind: 'template', text, contentSid, variables });
  } else {
    const body = params.get('Body') ?? '';
    if (body === '' && params.getAll('MediaUrl').length === 0)
      return bad(21619, 'A text message body or media urls must be specified.');
    if ([...body].length > BODY_LIMIT)
      return bad(21617, `The concatenated message body exceeds the ${BODY_LIMIT} character limit.`);
    send.text = body;
  }
  const callback = params.get('StatusCallback');
  if (callback !== null && callback !== '') {
    // UNCONFIRMED wording; the code is Twilio's "invalid StatusCallback URL".
    if (!/^https?:\/\//i.test(callback) || !URL.canParse(callback))
      return bad(21609, `The StatusCallback URL ${callback} is not a valid URL.`);
    send.statusCallback = callback;
  }
  return { ok: true, send };
}

/** ContentVariables is a JSON object of strings keyed "1", "2", …; undefined when it is not. */
function parseVariables(raw: string | null): Record<string, string> | undefined {
  if (raw === null || raw === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const entries = Object.entries(value);
  return entries.every(([, v]) => typeof v === 'string')
    ? Object.fromEntries(entries as [string, string][])
    : undefined;
}

/** Fills {{n}} placeholders; undefined when one has no value. */
export function renderTemplate(template: string, variables: Record<string, string>): string | undefined {
  let missing = false;
  const text = template.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, name: string) => {
    const value = variables[name];
    if (value === undefined) missing = true;
    return value ?? '';
  });
  return missing ? undefined : text;
}

/** A 34-character Twilio SID: two-letter prefix and 32 hex digits. */
export function twilioSid(prefix: string): string {
  return prefix + randomBytes(16).toString('hex');
}

/** RFC 2822 as Twilio writes it: `Thu, 24 Aug 2023 05:01:45 +0000`. */
export function rfc2822(at: Date): string {
  return at.toUTCString().replace(/GMT$/, '+0000');
}

/**
 * The message resource (Twilio's OpenAPI document api.v2010.account.message), keys in the order Twilio sends them;
 * numeric-looking counts are strings, as in Twilio's answers.
 */
export function messageResource(accountSid: string, sid: string, send: ValidSend, at: Date): Record<string, unknown> {
  const uri = `/2010-04-01/Accounts/${accountSid}/Messages/${sid}`;
  return {
    body: send.text,
    num_segments: '1',
    direction: 'outbound-api',
    from: `whatsapp:${send.from}`,
    date_updated: rfc2822(at),
    price: null,
    error_message: null,
    uri: `${uri}.json`,
    account_sid: accountSid,
    num_media: '0',
    to: `whatsapp:${send.to}`,
    date_created: rfc2822(at),
    status: 'queued',
    sid,
    date_sent: null,
    messaging_service_sid: null,
    error_code: null,
    price_unit: null,
    api_version: '2010-04-01',
    subresource_uris: { media: `${uri}/Media.json` },
  };
}

/** [user, password] of an HTTP Basic Authorization header. */
export function basicCredentials(header: string | undefined): [string | undefined, string | undefined] {
  const encoded = /^Basic\s+(\S+)$/i.exec(header ?? '')?.[1];
  if (encoded === undefined) return [undefined, undefined];
  const decoded = Buffer.from(encoded, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? [decoded, undefined] : [decoded.slice(0, colon), decoded.slice(colon + 1)];
}

/** Twilio's text for the codes tests inject most (failNextSends without a message). */
export function injectedErrorMessage(code: number): string {
  const known: Record<number, string> = {
    20003: 'Authenticate',
    20429: 'Too Many Requests',
    20500: 'An internal server error has occurred',
    21211: "The 'To' number is not a valid phone number.",
    63003: 'Channel could not find To address',
    [TWILIO_WINDOW_CLOSED]: TWILIO_WINDOW_CLOSED_MESSAGE,
  };
  return known[code] ?? `Simulated Twilio error ${code}`;
}

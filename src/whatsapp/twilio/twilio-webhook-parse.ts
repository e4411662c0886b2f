import { z } from 'zod';
import { AppError, type ValidationIssue } from '../../shared/errors.ts';
import { parse } from '../../shared/schema-parse.ts';
import { storableText } from '../../shared/storable-text.ts';
import type { InboundEvent } from '../messaging-provider.ts';
import { coordinates, mediaMessage, type Media } from '../media-description.ts';

// Twilio's WhatsApp webhooks (Twilio's Messages API docs): form-encoded POSTs, an inbound message to
// the sender's incoming URL and delivery statuses to the StatusCallback URL. Parsed only after
// the X-Twilio-Signature check (twilio-signature.ts), which needs the same URLSearchParams.
// Lenient: Twilio adds parameters without notice, so unknown ones pass and only what we act on
// is required.

const sid = z.string().trim().min(1).max(64);
const address = z.string().trim().min(1).max(64);

const inboundSchema = z.looseObject({
  MessageSid: sid,
  From: address,
  To: address,
  Body: z.string().max(10_000).optional(),
  // A tapped quick-reply button arrives with its label here (and usually in Body too).
  ButtonText: z.string().max(10_000).optional(),
});

const STATUS_VALUES = ['queued', 'sent', 'delivered', 'read', 'failed', 'undelivered'] as const;
// Statuses Twilio also reports (Twilio's OpenAPI document message_enum_status) that say nothing new to us: steps
// before `sent`, scheduling, and inbound-only values.
const IGNORED_STATUSES = [
  'accepted',
  'scheduled',
  'sending',
  'receiving',
  'received',
  'canceled',
  'partially_delivered',
] as const;

const statusSchema = z.looseObject({
  MessageSid: sid,
  MessageStatus: z.enum([...STATUS_VALUES, ...IGNORED_STATUSES]),
  ErrorCode: z.string().trim().max(16).optional(),
  ErrorMessage: z.string().max(2000).optional(),
});

/** The raw body as form parameters (repeated names kept, `+` as space, percent-decoding). */
export function parseTwilioForm(raw: Buffer | string): URLSearchParams {
  return new URLSearchParams(typeof raw === 'string' ? raw : raw.toString('utf8'));
}

/**
 * `whatsapp:+1 (555) 010-0123` → `+15550100123`; null unless 7–15 digits remain (E.164 bounds).
 * Plain numbers (SMS webhooks) normalise the same way.
 */
export function normalizeWhatsappAddress(address: string): string | null {
  const bare = address.trim().replace(/^whatsapp:/i, '');
  if (!/^\+?[0-9 ().-]+$/.test(bare)) return null;
  const digits = bare.replace(/\D/g, '');
  return digits.length >= 7 && digits.length <= 15 ? `+${digits}` : null;
}

/** An inbound WhatsApp message; throws AppError validation_failed when a needed field is missing or malformed. */
export function parseTwilioInbound(
  params: URLSearchParams,
  receivedAt: Date,
): Extract<InboundEvent, { type: 'message' }> {
  const { values, repaired } = storableForm(params);
  const form = parse(inboundSchema, values);
  const from = normalizeWhatsappAddress(form.From);
  const to = normalizeWhatsappAddress(form.To);
  const issues: ValidationIssue[] = [];
  if (from === null) issues.push({ path: ['From'], message: 'Must be a WhatsApp address like whatsapp:+15551234567.' });
  if (to === null) issues.push({ path: ['To'], message: 'Must be a WhatsApp address like whatsapp:+15551234567.' });
  if (from === null || to === null) throw new AppError('validation_failed', { issues });
  const body = form.Body ?? '';
  const media = twilioMedia(values);
  return {
    type: 'message',
    providerMessageId: form.MessageSid,
    from,
    to,
    // Media and locations are described, with the Body as their caption; a button tap may carry
    // only ButtonText.
    text: media.length > 0 ? mediaMessage(media, body) : body !== '' ? body : (form.ButtonText ?? ''),
    // Twilio's inbound form has no timestamp of its own: the time we received it is the best we have.
    receivedAt,
    ...(repaired ? { textRepaired: true as const } : {}),
  };
}

// Twilio sends at most 10 media per message (NumMedia, MediaContentType0…9); WhatsApp sends one.
const MAX_MEDIA = 10;

/** The message's media (by content type) and shared location (Latitude, Longitude, Label, Address). */
function twilioMedia(form: Record<string, string>): Media[] {
  const media: Media[] = [];
  const count = Math.min(Math.max(Number.parseInt(form.NumMedia ?? '0', 10) || 0, 0), MAX_MEDIA);
  for (let i = 0; i < count; i++) media.push(mediaOfType(form[`MediaContentType${i}`] ?? ''));
  const at = coordinates(form.Latitude, form.Longitude);
  if (at) {
    const name = form.Label?.trim();
    const address = form.Address?.trim();
    media.push({ kind: 'location', ...at, ...(name ? { name } : {}), ...(address ? { address } : {}) });
  }
  return media;
}

function mediaOfType(contentType: string): Media {
  const type = contentType.trim().toLowerCase();
  // WhatsApp's voice notes are Ogg/Opus; other audio is a file the lead attached.
  if (type.startsWith('audio/ogg') || type.startsWith('audio/opus')) return { kind: 'voice' };
  if (type.startsWith('audio/')) return { kind: 'audio' };
  if (type.startsWith('image/')) return { kind: 'image' };
  if (type.startsWith('video/')) return { kind: 'video' };
  if (type.startsWith('text/vcard') || type.startsWith('text/x-vcard')) return { kind: 'contacts' };
  if (type.startsWith('application/') || type.startsWith('text/')) return { kind: 'document' };
  return { kind: 'other' };
}

/**
 * A delivery status callback; null for statuses we do not track (`sending`, `accepted`, …), which
 * the receiver acknowledges and drops. Throws AppError validation_failed on a malformed form.
 */
export function parseTwilioStatus(params: URLSearchParams, at: Date): Extract<InboundEvent, { type: 'status' }> | null {
  const { values, repaired } = storableForm(params);
  const form = parse(statusSchema, values);
  const status = form.MessageStatus;
  if (!isTracked(status)) return null;
  const event: Extract<InboundEvent, { type: 'status' }> = {
    type: 'status',
    providerMessageId: form.MessageSid,
    status,
    at,
  };
  if (form.ErrorCode !== undefined && form.ErrorCode !== '') event.errorCode = form.ErrorCode;
  if (form.ErrorMessage !== undefined && form.ErrorMessage !== '') event.errorMessage = form.ErrorMessage;
  if (repaired) event.textRepaired = true;
  return event;
}

/**
 * The form's parameters (the last of a repeated name wins) made storable: percent-decoding can
 * produce NUL (`%00`), which PostgreSQL refuses; invalid UTF-8 already decodes to U+FFFD.
 */
function storableForm(params: URLSearchParams): { values: Record<string, string>; repaired: boolean } {
  let repaired = false;
  const values: Record<string, string> = {};
  for (const [name, value] of params) {
    const [k, v] = [storableText(name), storableText(value)];
    if (k !== name || v !== value) repaired = true;
    Object.defineProperty(values, k, { value: v, enumerable: true, writable: true, configurable: true });
  }
  return { values, repaired };
}

function isTracked(status: string): status is (typeof STATUS_VALUES)[number] {
  return (STATUS_VALUES as readonly string[]).includes(status);
}

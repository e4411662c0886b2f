import { z } from 'zod';
import { AppError } from '../../shared/errors.ts';
import { parse } from '../../shared/schema-parse.ts';
import { storableJson, storableText } from '../../shared/storable-text.ts';
import type { InboundEvent } from '../messaging-provider.ts';
import { coordinates, mediaMessage, type Media } from '../media-description.ts';

// Meta webhook bodies (Meta's WhatsApp Cloud API docs, Meta's WhatsApp OpenAPI document WebhookPayload): `{object,
// entry[].changes[]}`,
// each change a `value` with inbound `messages[]` and/or outbound `statuses[]`. One POST may
// batch several entries, changes, messages and statuses. Parsed only after the signature check.
// Lenient where Meta may add things (unknown fields pass, other `field`s and message types do not
// break delivery); strict on the fields we act on, since a body without them is not from Meta.

const unixSeconds = z.string().regex(/^\d{1,12}$/, 'expected unix seconds');
const waId = z.string().regex(/^\+?\d{1,20}$/, 'expected a WhatsApp id (digits)');

const messageSchema = z.looseObject({
  id: z.string().min(1).max(500),
  from: waId.optional(),
  timestamp: unixSeconds,
  type: z.string().min(1).max(50),
  text: z.looseObject({ body: z.string() }).optional(),
  // Quick-reply button of a template, and interactive list/button replies: the tapped label.
  button: z.looseObject({ text: z.string().optional() }).optional(),
  interactive: z
    .looseObject({
      button_reply: z.looseObject({ title: z.string().optional() }).optional(),
      list_reply: z.looseObject({ title: z.string().optional() }).optional(),
    })
    .optional(),
});

const statusSchema = z.looseObject({
  id: z.string().min(1).max(500),
  status: z.string().min(1).max(50),
  timestamp: unixSeconds,
  errors: z
    .array(
      z.looseObject({
        code: z.number().int().optional(),
        title: z.string().optional(),
        message: z.string().optional(),
        error_data: z.looseObject({ details: z.string().optional() }).optional(),
      }),
    )
    .optional(),
});

const valueSchema = z.looseObject({
  metadata: z.looseObject({ phone_number_id: z.string().min(1).max(100) }),
  messages: z.array(z.unknown()).optional(),
  statuses: z.array(z.unknown()).optional(),
});

const bodySchema = z.looseObject({
  object: z.literal('whatsapp_business_account'),
  entry: z.array(
    z.looseObject({
      id: z.string().optional(),
      changes: z.array(z.looseObject({ field: z.string(), value: z.unknown() })),
    }),
  ),
});

const STATUSES = new Set(['sent', 'delivered', 'read', 'failed']);

/**
 * The events of a verified webhook body, in body order; throws AppError invalid_json /
 * validation_failed. Changes of other fields (template status, account updates, …), `system`
 * messages (a user changed number) and account-level `value.errors` yield no event.
 */
export function parseMetaWebhook(raw: Buffer | string): InboundEvent[] {
  let json: unknown;
  try {
    json = JSON.parse(typeof raw === 'string' ? raw : raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json');
  }
  const body = parse(bodySchema, json);
  const events: InboundEvent[] = [];
  body.entry.forEach((entry, e) => {
    entry.changes.forEach((change, c) => {
      if (change.field !== 'messages') return;
      const path = ['entry', String(e), 'changes', String(c), 'value'];
      const value = parse(valueSchema, change.value, path);
      const phoneNumberId = storableText(value.metadata.phone_number_id);
      // Each message and status is made storable on its own, so only the one that needed it is
      // marked repaired (its lead's timeline says so).
      (value.messages ?? []).forEach((raw, i) => {
        const item = storableJson(raw);
        const m = parse(messageSchema, item.value, [...path, 'messages', String(i)]);
        if (m.type === 'system') return;
        if (m.from === undefined) throw invalid([...path, 'messages', String(i), 'from'], 'Required');
        events.push({
          type: 'message',
          providerMessageId: m.id,
          from: `+${m.from.replace(/^\+/, '')}`,
          to: phoneNumberId,
          text: messageText(m),
          receivedAt: new Date(Number(m.timestamp) * 1000),
          ...(item.changed ? { textRepaired: true as const } : {}),
        });
      });
      (value.statuses ?? []).forEach((raw, i) => {
        const item = storableJson(raw);
        const s = parse(statusSchema, item.value, [...path, 'statuses', String(i)]);
        // Meta has sent other values over the years (`deleted`, `warning`); none changes our state.
        if (!STATUSES.has(s.status)) return;
        const error = s.errors?.[0];
        const errorMessage = error ? describeError(error) : undefined;
        events.push({
          type: 'status',
          providerMessageId: s.id,
          status: s.status as 'sent' | 'delivered' | 'read' | 'failed',
          ...(error?.code === undefined ? {} : { errorCode: String(error.code) }),
          ...(errorMessage ? { errorMessage } : {}),
          at: new Date(Number(s.timestamp) * 1000),
          ...(item.changed ? { textRepaired: true as const } : {}),
        });
      });
    });
  });
  return events;
}

/** What the lead wrote; media are described (src/whatsapp/media-description.ts), followed by their caption. */
function messageText(m: z.output<typeof messageSchema>): string {
  if (m.type === 'text' && m.text) return m.text.body;
  if (m.type === 'button' && m.button?.text) return m.button.text;
  const reply = m.interactive?.button_reply?.title ?? m.interactive?.list_reply?.title;
  if (m.type === 'interactive' && reply) return reply;
  const raw = (m as Record<string, unknown>)[m.type];
  const isObject = typeof raw === 'object' && raw !== null && !Array.isArray(raw);
  const part: Record<string, unknown> = isObject ? (raw as Record<string, unknown>) : {};
  const media = metaMedia(m.type, part);
  if (!media) return `[${m.type.replace(/[^a-z_]/gi, '')}]`;
  return mediaMessage([media], str(part.caption) ?? '');
}

/** Meta's media objects (image, audio with `voice`, video, document with `filename`, sticker, location). */
function metaMedia(type: string, part: Record<string, unknown>): Media | null {
  switch (type) {
    case 'audio':
      return { kind: part.voice === true ? 'voice' : 'audio' };
    case 'image':
    case 'video':
    case 'sticker':
    case 'contacts':
      return { kind: type };
    case 'document': {
      const name = str(part.filename);
      return { kind: 'document', ...(name ? { name } : {}) };
    }
    case 'location': {
      const at = coordinates(part.latitude, part.longitude);
      if (!at) return null;
      const [name, address] = [str(part.name), str(part.address)];
      return { kind: 'location', ...at, ...(name ? { name } : {}), ...(address ? { address } : {}) };
    }
    default:
      return null;
  }
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

function describeError(error: {
  code?: number;
  title?: string;
  message?: string;
  error_data?: { details?: string };
}): string {
  const title = error.title ?? error.message ?? '';
  const details = error.error_data?.details ?? '';
  if (title && details && title !== details) return `${title}: ${details}`;
  return title || details;
}

function invalid(path: string[], message: string): AppError {
  return new AppError('validation_failed', { issues: [{ path, message }] });
}

import { z } from 'zod';
import { AppError } from '../../shared/errors.ts';
import { parse } from '../../shared/schema-parse.ts';
import { parseStorableJson } from '../../shared/storable-text.ts';

// Cal.com webhook bodies (Cal.com's API v2 docs): `{triggerEvent, createdAt, payload}`. Parsed only
// after the signature check. Lenient: unknown fields pass, and only the fields we act on are
// required, per trigger, so a Cal.com addition or an unfamiliar trigger never breaks delivery.

const bookingUid = z.string().trim().min(1).max(200);
// Cal.com sends UTC with `Z`; an offset is fine too, a bare local time is not an instant.
const instant = z.iso.datetime({ offset: true });

const envelopeSchema = z.looseObject({
  triggerEvent: z.string().min(1).max(100),
  createdAt: z.string().max(100).optional(),
  payload: z.unknown().optional(),
});

const metadataSchema = z.record(z.string(), z.unknown()).nullish();

const rescheduledSchema = z.looseObject({
  uid: bookingUid,
  startTime: instant,
  rescheduleUid: bookingUid.nullish(),
  rescheduleId: z.number().int().nullish(),
  metadata: metadataSchema,
});

const cancelledSchema = z.looseObject({
  uid: bookingUid,
  cancellationReason: z.string().max(5000).nullish(),
  // BOOKING_REJECTED: a booking held for the host's confirmation that the host declined.
  rejectionReason: z.string().max(5000).nullish(),
});

const otherSchema = z.looseObject({
  uid: bookingUid.optional(),
  metadata: metadataSchema,
});

export type CalcomWebhookEvent = ParsedEvent & {
  /** Set when some text of the body had to be repaired to be stored (src/shared/storable-text.ts). */
  textRepaired?: true;
};

type ParsedEvent =
  | {
      kind: 'rescheduled';
      trigger: string;
      dedupeKey: string;
      /** The new booking. */
      bookingUid: string;
      bookingStart: Date;
      /** The booking it replaces, which is what our lead still holds. */
      previousBookingUid: string | null;
      leadId: string | null;
    }
  | {
      kind: 'cancelled';
      trigger: string;
      dedupeKey: string;
      bookingUid: string;
      reason: string | null;
      /** Declined by the host while it awaited confirmation (BOOKING_REJECTED), rather than cancelled. */
      rejected: boolean;
    }
  | { kind: 'other'; trigger: string; dedupeKey: string; bookingUid: string; leadId: string | null }
  /** No booking uid (PING, form submissions, …): nothing to match or dedupe on. */
  | { kind: 'unsupported'; trigger: string };

/** Parses a verified body, made storable first; throws AppError invalid_json / validation_failed. */
export function parseCalcomWebhook(raw: Buffer): CalcomWebhookEvent {
  let parsed: { value: unknown; changed: boolean };
  try {
    parsed = parseStorableJson(raw.toString('utf8'));
  } catch {
    throw new AppError('invalid_json');
  }
  const event = parseEvent(parsed.value);
  return parsed.changed ? { ...event, textRepaired: true } : event;
}

function parseEvent(json: unknown): ParsedEvent {
  const envelope = parse(envelopeSchema, json);
  const trigger = envelope.triggerEvent;
  const payload = envelope.payload ?? {};
  if (trigger === 'BOOKING_RESCHEDULED') {
    const p = parse(rescheduledSchema, payload, ['payload']);
    const bookingStart = new Date(p.startTime);
    return {
      kind: 'rescheduled',
      trigger,
      // The start time too: a booking moved in place keeps its uid, and each move is a new event.
      dedupeKey: `${trigger}:${p.uid}:${bookingStart.toISOString()}`,
      bookingUid: p.uid,
      bookingStart,
      previousBookingUid: p.rescheduleUid ?? null,
      leadId: leadIdOf(p.metadata),
    };
  }
  if (trigger === 'BOOKING_CANCELLED' || trigger === 'BOOKING_REJECTED') {
    const p = parse(cancelledSchema, payload, ['payload']);
    const rejected = trigger === 'BOOKING_REJECTED';
    const given = rejected ? p.rejectionReason : p.cancellationReason;
    const reason = given?.trim() ? given : null;
    return { kind: 'cancelled', trigger, dedupeKey: `${trigger}:${p.uid}`, bookingUid: p.uid, reason, rejected };
  }
  const p = parse(otherSchema, payload, ['payload']);
  if (p.uid === undefined) return { kind: 'unsupported', trigger };
  // createdAt too: triggers such as BOOKING_NO_SHOW_UPDATED can legitimately repeat for a
  // booking, while a replay of one delivery still carries the same value.
  return {
    kind: 'other',
    trigger,
    dedupeKey: `${trigger}:${p.uid}:${envelope.createdAt ?? ''}`,
    bookingUid: p.uid,
    leadId: leadIdOf(p.metadata),
  };
}

/** Our bookings carry `metadata.leadId`; anything else there is the booker's business. */
function leadIdOf(metadata: Record<string, unknown> | null | undefined): string | null {
  const parsed = z.uuid().safeParse(metadata?.leadId);
  return parsed.success ? parsed.data : null;
}

import { z } from 'zod';
import type { BookingWindow } from '../booking-window.ts';
import type { Booking, BookingLookupResult, ProviderFailure, Slot } from '../scheduling-provider.ts';

// Reading Cal.com API v2 answers: what the client sends back to the services is only what passed
// these lenient schemas, so a field Cal.com adds or nulls never breaks a booking.

// Lenient: Cal.com sends many more fields, and nullable ones as null.
const BookingSchema = z.object({
  uid: z.string().min(1),
  id: z.number().nullish(),
  start: z.string(),
  end: z.string(),
  status: z.string(),
  eventTypeId: z.number().nullish(),
  rescheduledFromUid: z.string().nullish(),
  rescheduledToUid: z.string().nullish(),
  cancellationReason: z.string().nullish(),
  metadata: z.record(z.string(), z.unknown()).nullish(),
});

const WindowSchema = z.object({
  type: z.enum(['businessDays', 'calendarDays', 'range']),
  value: z.union([z.number().int().nonnegative(), z.array(z.string().regex(/^\d{4}-\d{2}-\d{2}$/))]),
  rolling: z.boolean().nullish(),
});
const EventTypeWindowSchema = z.object({
  minimumBookingNotice: z.number().nullish(),
  bookingWindow: z
    .union([WindowSchema, z.array(WindowSchema)])
    .nullish()
    .catch(null),
});

const SlotItemSchema = z.union([z.string(), z.object({ start: z.string(), end: z.string().nullish() })]);
const SlotsDataSchema = z.record(z.string(), z.array(z.unknown()));
const EventTypeSchema = z.object({ title: z.string(), lengthInMinutes: z.number().nullish() });

/** The slots of a `GET /v2/slots` answer (days keyed in the requested zone), ordered by instant. */
export function toSlots(data: unknown): Slot[] | undefined {
  const days = SlotsDataSchema.safeParse(data);
  if (!days.success) return undefined;
  const slots: Slot[] = [];
  for (const items of Object.values(days.data)) {
    for (const item of items) {
      // Cal.com's OpenAPI schema says strings, its examples and the source say `{start}` objects.
      const parsed = SlotItemSchema.safeParse(item);
      if (!parsed.success) continue;
      const slot = typeof parsed.data === 'string' ? { start: parsed.data } : parsed.data;
      if (Number.isNaN(Date.parse(slot.start))) continue;
      slots.push(slot.end ? { start: slot.start, end: slot.end } : { start: slot.start });
    }
  }
  // Order by instant, not by string: day keys and offsets are in the requested zone.
  slots.sort((a, b) => Date.parse(a.start) - Date.parse(b.start));
  return slots;
}

/** The event type's title and length (`workspace verify`). */
export function toEventType(data: unknown): { title: string; lengthInMinutes?: number } | undefined {
  const parsed = EventTypeSchema.safeParse(data);
  if (!parsed.success) return undefined;
  const { title, lengthInMinutes } = parsed.data;
  return lengthInMinutes == null ? { title } : { title, lengthInMinutes };
}

/** The event type's `minimumBookingNotice` (minutes) and fixed `bookingWindow`. */
export function toBookingWindow(data: unknown): BookingWindow | undefined {
  const parsed = EventTypeWindowSchema.safeParse(data);
  if (!parsed.success) return undefined;
  // Cal.com's document types bookingWindow as an array of one window; its examples send the object.
  const w = Array.isArray(parsed.data.bookingWindow) ? parsed.data.bookingWindow[0] : parsed.data.bookingWindow;
  const window: BookingWindow = { minimumNoticeMinutes: Math.max(0, parsed.data.minimumBookingNotice ?? 0) };
  if (w && w.rolling !== true) {
    if (w.type === 'range' && Array.isArray(w.value) && w.value.length === 2) {
      window.horizon = { kind: 'range', from: w.value[0]!, to: w.value[1]! };
    } else if (w.type !== 'range' && typeof w.value === 'number') {
      window.horizon = { kind: w.type, days: w.value };
    }
  }
  return window;
}

export function toUtcIso(value: string): string | undefined {
  // Starts may come from an agent's tool call, so a bad one is an expected outcome, not a throw.
  // An offset is required: without one Date.parse would read the time in *this server's* zone.
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/i.test(value.trim())) return undefined;
  const ms = Date.parse(value.trim());
  if (Number.isNaN(ms)) return undefined;
  // Cal.com requires UTC for booking starts; seconds precision matches its examples.
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

export function badStart(value: string): ProviderFailure {
  return {
    kind: 'bad_request',
    message:
      `Booking start must be an ISO 8601 date-time with Z or an offset, got ${JSON.stringify(value)}; ` +
      'nothing was sent to Cal.com.',
  };
}

export function toBooking(data: unknown): BookingLookupResult {
  // Recurring event types answer with an array; we only book single events, so take the first.
  const parsed = BookingSchema.safeParse(Array.isArray(data) ? data[0] : data);
  if (!parsed.success) return { ok: false, error: malformed('booking') };
  const d = parsed.data;
  const start = Date.parse(d.start);
  const end = Date.parse(d.end);
  if (Number.isNaN(start) || Number.isNaN(end)) return { ok: false, error: malformed('booking') };
  const booking: Booking = {
    uid: d.uid,
    start: new Date(start).toISOString(),
    end: new Date(end).toISOString(),
    status: d.status,
  };
  if (d.id != null) booking.id = d.id;
  if (d.eventTypeId != null) booking.eventTypeId = d.eventTypeId;
  if (d.rescheduledFromUid) booking.rescheduledFromUid = d.rescheduledFromUid;
  if (d.rescheduledToUid) booking.rescheduledToUid = d.rescheduledToUid;
  if (d.cancellationReason) booking.cancellationReason = d.cancellationReason;
  if (d.metadata) {
    const entries = Object.entries(d.metadata).filter((e): e is [string, string] => typeof e[1] === 'string');
    if (entries.length > 0) booking.metadata = Object.fromEntries(entries);
  }
  return { ok: true, booking };
}

export function malformed(what: string, status?: number): ProviderFailure {
  const failure: ProviderFailure = {
    kind: 'unavailable',
    message: `Cal.com sent an unexpected ${what} response body.`,
  };
  if (status !== undefined) failure.status = status;
  return failure;
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

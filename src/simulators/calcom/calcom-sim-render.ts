import { offsetMinutes } from '../../shared/zoned-time.ts';
import type { SimEventType } from './availability.ts';
import type { SimBooking } from './calcom-sim-bookings.ts';
import type { WebhookTrigger } from './calcom-simulator.ts';

// How the Cal.com simulator renders a booking: as its API v2 answers it, and as its webhooks carry it.

export const ORGANIZER = { id: 1, name: 'Simulated Host', email: 'host@sim.cal.local', username: 'sim-host' };

/** A booking as `GET /v2/bookings/{uid}` (cal-api-version 2024-08-13) answers it. */
export function bookingOutput(b: SimBooking, et: SimEventType): unknown {
  const { attendee } = b;
  return {
    id: b.id,
    uid: b.uid,
    title: `${et.title} between ${ORGANIZER.name} and ${attendee.name}`,
    description: '',
    hosts: [{ ...ORGANIZER, displayEmail: ORGANIZER.email, timeZone: et.timeZone }],
    status: b.status,
    cancellationReason: b.cancellationReason,
    reschedulingReason: b.reschedulingReason,
    rescheduledFromUid: b.rescheduledFromUid,
    rescheduledToUid: b.rescheduledToUid,
    start: new Date(b.startMs).toISOString(),
    end: new Date(b.endMs).toISOString(),
    duration: et.lengthInMinutes,
    eventTypeId: et.id,
    eventType: { id: et.id, slug: et.slug },
    location: '',
    absentHost: false,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
    attendees: [{ ...attendee, displayEmail: attendee.email, language: 'en', absent: false }],
    guests: [],
    bookingFieldsResponses: { name: attendee.name, email: attendee.email, attendeePhoneNumber: attendee.phoneNumber },
    metadata: b.metadata,
  };
}

/** The `payload` of a booking webhook; `old` is the booking a reschedule replaced. */
export function webhookPayload(
  trigger: WebhookTrigger,
  b: SimBooking,
  et: SimEventType,
  old: SimBooking | undefined,
): Record<string, unknown> {
  const { attendee } = b;
  const payload: Record<string, unknown> = {
    type: et.slug,
    title: `${et.title} between ${ORGANIZER.name} and ${attendee.name}`,
    description: '',
    additionalNotes: '',
    customInputs: {},
    startTime: new Date(b.startMs).toISOString(),
    endTime: new Date(b.endMs).toISOString(),
    organizer: {
      ...ORGANIZER,
      timeZone: et.timeZone,
      language: { locale: 'en' },
      timeFormat: 'h:mma',
      utcOffset: offsetMinutes(b.startMs, et.timeZone),
    },
    attendees: [{ ...attendee, language: { locale: 'en' }, utcOffset: offsetMinutes(b.startMs, attendee.timeZone) }],
    responses: {
      name: { label: 'your_name', value: attendee.name },
      email: { label: 'email_address', value: attendee.email },
      ...(attendee.phoneNumber ? { attendeePhoneNumber: { label: 'phone_number', value: attendee.phoneNumber } } : {}),
    },
    uid: b.uid,
    bookingId: b.id,
    eventTypeId: et.id,
    eventTitle: et.title,
    length: et.lengthInMinutes,
    metadata: b.metadata,
    status: trigger === 'BOOKING_CANCELLED' ? 'CANCELLED' : trigger === 'BOOKING_REJECTED' ? 'REJECTED' : 'ACCEPTED',
    iCalUID: `${b.uid}@Cal.com`,
  };
  if (trigger === 'BOOKING_CANCELLED')
    Object.assign(payload, { cancellationReason: b.cancellationReason ?? '', cancelledBy: ORGANIZER.email });
  // Cal.com's confirm handler sets the host's reason on the event it sends (absent when none was given).
  if (trigger === 'BOOKING_REJECTED' && b.rejectionReason !== undefined)
    Object.assign(payload, { rejectionReason: b.rejectionReason });
  if (trigger === 'BOOKING_RESCHEDULED' && old) {
    Object.assign(payload, {
      rescheduleId: old.id,
      rescheduleUid: old.uid,
      rescheduledBy: ORGANIZER.email,
      rescheduleStartTime: new Date(old.startMs).toISOString(),
      rescheduleEndTime: new Date(old.endMs).toISOString(),
    });
  }
  return payload;
}

import { outsideWindow, type BookingWindow } from '../../scheduling/booking-window.ts';
import { formatInZone, isValidTimeZone } from '../../shared/zoned-time.ts';
import { slotStarts, type SimEventType } from './availability.ts';
import { checkMetadata, HttpError, newUid, parseInstant } from './calcom-sim-wire.ts';

// The Cal.com simulator's state and booking rules: event types, free times, bookings made, found
// and moved. The HTTP side (calcom-simulator.ts) routes requests here and renders the answers.

export interface SimBooking {
  id: number;
  uid: string;
  eventTypeId: number;
  startMs: number;
  endMs: number;
  status: 'accepted' | 'cancelled' | 'rejected';
  attendee: { name: string; email: string; timeZone: string; phoneNumber?: string };
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
  cancellationReason?: string;
  rejectionReason?: string;
  reschedulingReason?: string;
  rescheduledFromUid?: string;
  rescheduledToUid?: string;
}

export interface BookingStoreOptions {
  eventTypes: SimEventType[];
  now: () => Date;
  capacity?: 'one' | 'unlimited' | undefined;
  hosts?: number | undefined;
  slotFormat?: 'object' | 'string' | undefined;
  slotTakenMessage?: string | undefined;
}

export type BookingStore = ReturnType<typeof createBookingStore>;

export function createBookingStore(opts: BookingStoreOptions) {
  const { eventTypes, now } = opts;
  const bookings = new Map<string, SimBooking>();
  let nextId = 1;

  const eventType = (id: unknown): SimEventType => {
    const et = eventTypes.find((e) => e.id === Number(id));
    if (!et) throw new HttpError(404, 'NotFoundException', `Event type with id=${String(id)} not found`);
    return et;
  };
  // The same hosts serve every event type: a time is free while fewer accepted bookings overlap it
  // than there are hosts (one by default; more for a round-robin team, each booking taking one host).
  const freeStarts = (et: SimEventType, fromMs: number, toMs: number, ignoreUid?: string): number[] => {
    const busy =
      opts.capacity === 'unlimited'
        ? []
        : [...bookings.values()].filter((b) => b.status === 'accepted' && b.uid !== ignoreUid);
    const earliest = now().getTime();
    // The event type's notice and window, as Cal.com applies them to its slots and bookings.
    const w = et.bookingWindow;
    const window: BookingWindow = { minimumNoticeMinutes: et.minimumBookingNotice ?? 0 };
    if (w?.type === 'range') window.horizon = { kind: 'range', from: w.value[0], to: w.value[1] };
    else if (w && !w.rolling) window.horizon = { kind: w.type, days: w.value };
    return slotStarts(et, fromMs, toMs).filter((s) => {
      const e = s + et.lengthInMinutes * 60_000;
      const inWindow = outsideWindow(window, s, earliest, et.timeZone) === null;
      const overlapping = busy.filter((b) => b.startMs < e && s < b.endMs).length;
      return s >= earliest && inWindow && overlapping < (opts.hosts ?? 1);
    });
  };
  const slotTaken = () =>
    new HttpError(
      400,
      'BadRequestException',
      opts.slotTakenMessage ?? 'User either already has booking at this time or is not available',
    );

  function listSlots(q: URLSearchParams): unknown {
    const timeZone = q.get('timeZone') ?? 'UTC';
    if (!isValidTimeZone(timeZone)) throw new HttpError(400, 'BadRequestException', `Invalid time zone ${timeZone}`);
    // A bare date means the whole UTC day (Cal.com's OpenAPI document parameter descriptions).
    const from = parseInstant(q.get('start'), 'start', false);
    const to = parseInstant(q.get('end'), 'end', true);
    const et = eventType(q.get('eventTypeId') ?? 'missing');
    const data: Record<string, unknown[]> = {};
    for (const s of freeStarts(et, from, to)) {
      const start = formatInZone(s, timeZone);
      const end = formatInZone(s + et.lengthInMinutes * 60_000, timeZone);
      const item = q.get('format') === 'range' ? { start, end } : opts.slotFormat === 'string' ? start : { start };
      (data[start.slice(0, 10)] ??= []).push(item);
    }
    return data;
  }

  function createBooking(body: Record<string, unknown>): SimBooking {
    const a = (typeof body.attendee === 'object' && body.attendee !== null ? body.attendee : {}) as Record<
      string,
      unknown
    >;
    const issues: string[] = [];
    if (typeof body.start !== 'string' || Number.isNaN(Date.parse(body.start)))
      issues.push('start must be a valid ISO 8601 date string');
    if (typeof body.eventTypeId !== 'number') issues.push('eventTypeId must be a number');
    if (typeof a.name !== 'string' || a.name === '') issues.push('attendee.name must be a string');
    if (typeof a.timeZone !== 'string' || !isValidTimeZone(a.timeZone))
      issues.push('attendee.timeZone must be a valid IANA time zone');
    const metadata = checkMetadata(body.metadata, issues);
    if (issues.length > 0) throw new HttpError(400, 'BadRequestException', 'Bad Request Exception', issues);
    const et = eventType(body.eventTypeId);
    const startMs = Date.parse(body.start as string);
    if (startMs < now().getTime())
      throw new HttpError(400, 'BadRequestException', 'Attempting to book a meeting in the past.');
    if (!freeStarts(et, startMs, startMs).includes(startMs)) throw slotTaken();
    const at = now().toISOString();
    const booking: SimBooking = {
      id: nextId++,
      uid: newUid(),
      eventTypeId: et.id,
      startMs,
      endMs: startMs + et.lengthInMinutes * 60_000,
      status: 'accepted',
      attendee: {
        name: a.name as string,
        email: typeof a.email === 'string' ? a.email : '',
        timeZone: a.timeZone as string,
      },
      metadata,
      createdAt: at,
      updatedAt: at,
    };
    if (typeof a.phoneNumber === 'string') booking.attendee.phoneNumber = a.phoneNumber;
    bookings.set(booking.uid, booking);
    return booking;
  }

  // Only the filters our client sends; Cal.com has more (status, attendeeEmail, …) and paginates.
  function findBookings(q: URLSearchParams): SimBooking[] {
    const [et, after, before] = [q.get('eventTypeId'), q.get('afterStart'), q.get('beforeEnd')];
    return [...bookings.values()]
      .filter(
        (b) =>
          (!et || b.eventTypeId === Number(et)) &&
          (!after || b.startMs >= Date.parse(after)) &&
          (!before || b.endMs <= Date.parse(before)),
      )
      .sort((a, b) => a.startMs - b.startMs);
  }

  function existing(uid: string): SimBooking {
    const b = bookings.get(uid);
    if (!b) throw new HttpError(404, 'NotFoundException', `Booking with uid=${uid} not found`);
    return b;
  }

  function reschedule(old: SimBooking, body: Record<string, unknown>): SimBooking {
    if (typeof body.start !== 'string' || Number.isNaN(Date.parse(body.start))) {
      throw new HttpError(400, 'BadRequestException', 'Bad Request Exception', [
        'start must be a valid ISO 8601 date string',
      ]);
    }
    if (old.status !== 'accepted')
      throw new HttpError(
        400,
        'BadRequestException',
        `Booking with uid=${old.uid} is cancelled and cannot be rescheduled`,
      );
    const et = eventType(old.eventTypeId);
    const startMs = Date.parse(body.start);
    // The booking being moved does not block its own new time (Cal.com ignores it too).
    if (!freeStarts(et, startMs, startMs, old.uid).includes(startMs)) throw slotTaken();
    const at = now().toISOString();
    const fresh: SimBooking = {
      ...old,
      id: nextId++,
      uid: newUid(),
      startMs,
      endMs: startMs + et.lengthInMinutes * 60_000,
      createdAt: at,
      updatedAt: at,
      rescheduledFromUid: old.uid,
    };
    if (typeof body.reschedulingReason === 'string') fresh.reschedulingReason = body.reschedulingReason;
    // Cal.com marks the original as cancelled and points it at its replacement.
    Object.assign(old, { status: 'cancelled', rescheduledToUid: fresh.uid, updatedAt: at });
    bookings.set(fresh.uid, fresh);
    return fresh;
  }

  return { bookings, eventType, listSlots, createBooking, findBookings, existing, reschedule };
}

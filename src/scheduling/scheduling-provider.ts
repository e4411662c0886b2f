import type { BookingWindow } from './booking-window.ts';

// Our small interface to an external scheduling service. The real implementation is the Cal.com
// API v2 client (calcom-client.ts); tests and the demo point that same client at the Cal.com
// simulator (src/simulators/calcom/). Expected outcomes (slot taken, bad key, provider down) come
// back as values; only programming errors throw.

export interface Slot {
  /**
   * ISO 8601 with the offset of the requested time zone, as Cal.com returns it (e.g. `2050-09-05T09:00:00.000+02:00`).
   */
  start: string;
  /** Present only when the provider sent one (Cal.com does with `format=range`). */
  end?: string;
}

export interface Booking {
  uid: string;
  /** Cal.com's numeric booking id, when sent. */
  id?: number;
  /** ISO 8601 UTC with milliseconds (normalised, whatever precision the provider sent). */
  start: string;
  end: string;
  /** Provider status, lowercase as Cal.com API v2 sends it: accepted | pending | cancelled | rejected. */
  status: string;
  eventTypeId?: number;
  /** Set on the new booking made by a reschedule. */
  rescheduledFromUid?: string;
  /** Set on the old booking once it has been rescheduled. */
  rescheduledToUid?: string;
  cancellationReason?: string;
  metadata?: Record<string, string>;
}

export interface ProviderFailure {
  kind: 'unauthorized' | 'not_found' | 'bad_request' | 'rate_limited' | 'unavailable' | 'network';
  /** HTTP status of the last attempt; absent for network errors and timeouts. */
  status?: number;
  /** Human-readable, includes the provider's own error code and message when it sent them. */
  message: string;
  /** The provider's error code (e.g. `BadRequestException`), when it sent one. */
  code?: string;
  /** For rate_limited: how long the provider asked us to wait, so a job queue can reschedule. */
  retryAfterMs?: number;
  /**
   * Some attempt failed after the request may have been processed (5xx, or a connection lost after
   * sending): a write may have taken effect, so look it up before telling anyone it did not.
   */
  ambiguous?: true;
}

export type SlotsResult = { ok: true; slots: Slot[] } | { ok: false; error: ProviderFailure };

/** Result of operations that cannot collide with another booking (get, cancel). */
export type BookingLookupResult = { ok: true; booking: Booking } | { ok: false; error: ProviderFailure };

export type BookingListResult = { ok: true; bookings: Booking[] } | { ok: false; error: ProviderFailure };

export type BookingResult =
  | { ok: true; booking: Booking }
  | { ok: false; error: ProviderFailure }
  | {
      ok: false;
      slotTaken: true;
      message: string;
      /**
       * True when an earlier attempt of this same call failed ambiguously (5xx or network error after
       * the request was sent) and was retried: the "taken" slot may then be held by our own booking,
       * so the caller should look it up before telling the lead the time is gone.
       */
      afterAmbiguousRetry?: boolean;
    };

export interface Attendee {
  name: string;
  email: string;
  /** IANA time zone of the lead, e.g. `Europe/Berlin`. */
  timeZone: string;
  /** E.164; Cal.com requires it when the event type has SMS workflows. */
  phoneNumber?: string;
}

export type BookingWindowResult = { ok: true; window: BookingWindow } | { ok: false; error: ProviderFailure };

export interface SchedulingProvider {
  /** The event type's minimum notice and booking horizon; optional for providers without such limits. */
  bookingWindow?(apiKey: string, eventTypeId: number): Promise<BookingWindowResult>;
  /** Free slots of an event type between two instants, rendered in `timeZone`, ordered by start. */
  listSlots(q: { apiKey: string; eventTypeId: number; start: Date; end: Date; timeZone: string }): Promise<SlotsResult>;
  /**
   * `start`: ISO 8601 date-time with `Z` or an offset (a listed slot's start is fine); sent to the provider
   * in UTC. Without an offset the result is a bad_request failure, since the wall time would be ambiguous.
   */
  createBooking(b: {
    apiKey: string;
    eventTypeId: number;
    start: string;
    attendee: Attendee;
    /** Cal.com limits: ≤50 keys, key ≤40 chars, value ≤500 chars. */
    metadata?: Record<string, string>;
  }): Promise<BookingResult>;
  getBooking(apiKey: string, uid: string): Promise<BookingLookupResult>;
  /**
   * Bookings of an event type starting at or after `afterStart` and ending by `beforeEnd`, any status,
   * ordered by start (at most 100). Finds a booking whose create answer was lost, by its metadata.
   */
  findBookings(q: {
    apiKey: string;
    eventTypeId: number;
    afterStart: Date;
    beforeEnd: Date;
  }): Promise<BookingListResult>;
  cancelBooking(apiKey: string, uid: string, reason?: string): Promise<BookingLookupResult>;
  /** Succeeds with the NEW booking (new uid, `rescheduledFromUid` = `uid`). */
  rescheduleBooking(apiKey: string, uid: string, start: string, reason?: string): Promise<BookingResult>;
}

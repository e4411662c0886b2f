import crypto from 'node:crypto';
import type { SimEventType } from './availability.ts';

// Wire pieces of the Cal.com simulator: its error type and envelope, input checks, booking uids,
// and the event type as `GET /v2/event-types/{id}` (cal-api-version 2024-06-14) answers it.

const UID_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: string | string[];
  constructor(status: number, code: string, message: string, details?: string[]) {
    super(message);
    this.status = status;
    this.code = code;
    this.details = details ?? message;
  }
}

/**
 * Cal.com's EventTypeOutput_2024_06_14 (its OpenAPI document) for a simulated event type: the
 * required fields, with the values a plain one-host event type has.
 */
export function eventTypeOutput(
  et: SimEventType,
  owner: { id: number; name: string; username: string },
): Record<string, unknown> {
  return {
    id: et.id,
    lengthInMinutes: et.lengthInMinutes,
    title: et.title,
    slug: et.slug,
    description: '',
    locations: [{ type: 'integration', integration: 'cal-video' }],
    bookingFields: [],
    disableGuests: false,
    slotInterval: et.slotIntervalMinutes ?? null,
    minimumBookingNotice: et.minimumBookingNotice ?? 0,
    // Typed as an array of one window by Cal.com's OpenAPI document (the client also reads a bare object).
    ...(et.bookingWindow ? { bookingWindow: [et.bookingWindow] } : {}),
    beforeEventBuffer: 0,
    afterEventBuffer: 0,
    recurrence: null,
    metadata: {},
    price: 0,
    currency: 'usd',
    lockTimeZoneToggleOnBookingPage: false,
    forwardParamsSuccessRedirect: true,
    successRedirectUrl: null,
    isInstantEvent: false,
    scheduleId: null,
    hidden: false,
    bookingRequiresAuthentication: false,
    ownerId: owner.id,
    users: [{ id: owner.id, name: owner.name, username: owner.username }],
    bookingUrl: `https://cal.com/${owner.username}/${et.slug}`,
  };
}

/** Cal.com's v2 exception-filter envelope (Cal.com's API v2 docs). */
export function envelope(
  status: number,
  code: string,
  message: string,
  path: string,
  details: string | string[] = message,
): unknown {
  return {
    status: 'error',
    timestamp: new Date().toISOString(),
    path,
    error: { code, message, details: { message: details, statusCode: status } },
  };
}

export function parseInstant(value: string | null, name: string, endOfDay: boolean): number {
  if (value === null)
    throw new HttpError(400, 'BadRequestException', 'Bad Request Exception', [
      `${name} must be a valid ISO 8601 date string`,
    ]);
  const bare = /^\d{4}-\d{2}-\d{2}$/.test(value);
  const ms = Date.parse(bare ? `${value}T${endOfDay ? '23:59:59.999' : '00:00:00.000'}Z` : value);
  if (Number.isNaN(ms))
    throw new HttpError(400, 'BadRequestException', 'Bad Request Exception', [
      `${name} must be a valid ISO 8601 date string`,
    ]);
  return ms;
}

export function checkMetadata(value: unknown, issues: string[]): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    issues.push('metadata must be an object');
    return {};
  }
  const entries = Object.entries(value);
  // Limits from Cal.com's OpenAPI document CreateBookingInput_2024_08_13.metadata.
  if (entries.length > 50) issues.push('metadata can have at most 50 keys');
  for (const [k, v] of entries) {
    if (k.length > 40) issues.push(`metadata key ${k} is longer than 40 characters`);
    if (typeof v !== 'string' || v.length > 500)
      issues.push(`metadata.${k} must be a string of at most 500 characters`);
  }
  return Object.fromEntries(entries.filter((e): e is [string, string] => typeof e[1] === 'string'));
}

export function newUid(): string {
  return Array.from(crypto.randomBytes(22), (byte) => UID_ALPHABET[byte % UID_ALPHABET.length]).join('');
}

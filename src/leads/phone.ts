import { parsePhoneNumberFromString, type CountryCode } from 'libphonenumber-js';
import { isPhoneCountry } from '../shared/phone-country.ts';

// Phone numbers are accepted the way people type them in forms (digits with an optional leading
// +, spaces, dashes, dots, parentheses; 7 to 32 characters, as the API promises) and normalised
// to E.164 (`+` and at most 15 digits) by libphonenumber-js, the port of Google's libphonenumber.
// E.164 is what the duplicate check compares, what Vapi dials and what WhatsApp writes to.
//
// A number is accepted when it is *possible* (its length fits its country's numbering plan), not
// only when it is *valid* (in a range the library's metadata knows): ranges are opened faster
// than metadata is updated, and refusing a real lead costs more than an unanswered call.
const ALLOWED = /^\+?[0-9 ().-]+$/;
// International call prefixes typed instead of "+": 00 (most of the world) and 011 (North America).
const INTERNATIONAL_PREFIX = /^(?:00|011)(?=[1-9])/;

/** What the OpenAPI document states of a phone (the digit count is checked in code only). */
export const PHONE_JSON_SCHEMA = { minLength: 7, maxLength: 32, pattern: ALLOWED.source };

export const PHONE_MESSAGE = 'Phone must be a valid E.164-style number.';

/**
 * Whether a stored number is E.164 and so can be dialled or written to. Every number normalised
 * here is; a lead from before E.164 whose number cannot exist is not, nor is one that migration
 * 007 marked as the same number as an older lead (`<E.164>#<lead id>`, docs/API.md).
 */
export function isE164(stored: string): boolean {
  return /^\+[1-9]\d{1,14}$/.test(stored);
}

/** What the API's schema checks before any workspace is known: characters and length. */
export function isPhoneShaped(raw: string): boolean {
  return raw.length >= 7 && raw.length <= 32 && ALLOWED.test(raw);
}

/**
 * The E.164 form of a phone number as a form sent it, or null when it cannot be a possible number.
 * Read in this order: as written (a leading + is international; without it the number is national
 * in `defaultCountry`, whose own international prefix is understood too); then a leading 00 or
 * 011 as "+"; then, only when the workspace has no default country, the digits as international
 * (what this service did before it knew countries: "49 30 2345 6789" is +49 30 2345 6789).
 */
export function normalizePhone(raw: string, defaultCountry?: string): string | null {
  if (!isPhoneShaped(raw)) return null;
  const text = raw.trim();
  const code = defaultCountry?.toUpperCase();
  const country = code && isPhoneCountry(code) ? (code as CountryCode) : undefined;
  const digits = text.replace(/\D/g, '');
  const readings = [
    text.startsWith('+') || country ? possible(text, country) : null,
    !text.startsWith('+') && INTERNATIONAL_PREFIX.test(digits)
      ? possible(`+${digits.replace(INTERNATIONAL_PREFIX, '')}`)
      : null,
    !text.startsWith('+') && !country ? possible(`+${digits}`) : null,
  ];
  return readings.find((r) => r !== null) ?? null;
}

function possible(text: string, country?: CountryCode): string | null {
  const parsed = parsePhoneNumberFromString(text, country ? { defaultCountry: country } : undefined);
  // E.164 allows at most 15 digits; the library's possible lengths allow a few national plans more.
  if (!parsed?.isPossible() || parsed.number.length > 16) return null;
  return parsed.number;
}

// Phone numbers are accepted the way people type them in forms (E.164-style: digits with an
// optional leading +, spaces, dashes, dots, parentheses) and normalised to +digits, which is
// what uniqueness and dialling use. The number of digits is bounded by E.164 (at most 15).
const ALLOWED = /^\+?[0-9 ().-]+$/;

export const PHONE_MESSAGE = 'Phone must be a valid E.164-style number.';

export function isValidPhone(raw: string): boolean {
  if (raw.length < 7 || raw.length > 32 || !ALLOWED.test(raw)) return false;
  const digits = raw.replace(/\D/g, '').length;
  return digits >= 7 && digits <= 15;
}

/** `+` followed by the digits only; callers validate first. */
export function normalizePhone(raw: string): string {
  return '+' + raw.replace(/\D/g, '');
}

import crypto from 'node:crypto';
import { AppError } from '../shared/errors.ts';

// Optimistic concurrency for the dashboard's settings pages: the page loads a version (a hash of
// what it shows) and sends it back with its edits; the server recomputes it under the row lock and
// refuses the save when it differs, so two operators editing at once never silently overwrite
// each other. A hash rather than a stored counter: no column to add, and the CLI's edits
// (`leadintake workspace update`) change it too.

export function versionOf(value: unknown): string {
  return crypto
    .createHash('sha256')
    .update(JSON.stringify(canonical(value)))
    .digest('hex')
    .slice(0, 20);
}

// jsonb stores an object's keys in its own order, so a config read back from the database and
// the same config just written must hash alike: keys sorted, undefined dropped as JSON does.
function canonical(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(canonical);
  if (value && typeof value === 'object') {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .filter((k) => (value as Record<string, unknown>)[k] !== undefined)
        .map((k) => [k, canonical((value as Record<string, unknown>)[k])]),
    );
  }
  return value;
}

export function requireVersion(expected: string, actual: string): void {
  if (expected !== actual) throw new AppError('settings_conflict');
}

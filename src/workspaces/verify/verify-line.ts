import type { LookupFailure } from '../../shared/settings-lookup.ts';

// One line of `leadintake workspace verify`: a provider, what was checked, PASS or FAIL, and a
// note that names the setting to fix when it failed.

export interface VerifyLine {
  provider: 'Vapi' | 'Twilio' | 'Meta' | 'Cal.com' | 'model';
  /** Short name of what was checked, e.g. "API key", "sender". */
  check: string;
  ok: boolean;
  note: string;
}

/** A provider section the workspace does not have. */
export interface MissingSection {
  section: 'voice' | 'whatsapp' | 'scheduling';
  /** Required: live leads of the workspace cannot be contacted without it (a failure). */
  required: boolean;
  note: string;
}

/** The generic note for a failure no specific rule explains: the provider's own words. */
export function otherFailure(provider: string, r: LookupFailure, settings: string): string {
  if (r.httpStatus === undefined) return `${r.message} Nothing more could be checked.`;
  return (
    `${provider} answered ${r.httpStatus}${r.code ? ` (code ${r.code})` : ''}: ` +
    `${r.message.slice(0, 200)} (check ${settings})`
  );
}

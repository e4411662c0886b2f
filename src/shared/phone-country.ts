import { isSupportedCountry } from 'libphonenumber-js';

// The countries a national phone number can be read in. Below the features because two layers
// need the same answer: a workspace's `agent.defaultCountry` is refused when saved unless it is
// one (src/workspaces/agent-config.ts), and src/leads/phone.ts reads national numbers in it.

/** ISO 3166-1 alpha-2 codes libphonenumber-js has a numbering plan for (what `agent.defaultCountry` accepts). */
export function isPhoneCountry(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && isSupportedCountry(code);
}

import { lookup } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import {
  addressAllowed,
  classifyAddress,
  FORBIDDEN_REFUSAL,
  PRIVATE_REFUSAL,
  type EgressOptions,
} from './egress-policy.ts';

// The connect-time half of the address policy (egress-policy.ts). A socket given `lookup` calls
// it for a name and connects to the address it returns, so the address checked is the address
// used: no second lookup that an attacker's DNS could answer differently (DNS rebinding). A
// literal address is never looked up, so it is judged before the request (literalRefusal).

/** A connection the policy did not allow; `code` is what requestFailure reads. */
export class AddressRefused extends Error {
  readonly code = 'ADDRESS_REFUSED';
  constructor(address: string) {
    super(`refused: the URL ${classifyAddress(address) === 'forbidden' ? FORBIDDEN_REFUSAL : PRIVATE_REFUSAL}`);
    this.name = 'AddressRefused';
  }
}

/** A lookup that fails unless every address the name resolves to is allowed. */
export function checkedLookup(o: EgressOptions): LookupFunction {
  return (hostname, options, callback) => {
    lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 4);
      const list = addresses as unknown as { address: string; family: number }[];
      const bad = list.find((a) => !addressAllowed(a.address, o));
      if (bad || list.length === 0) return callback(new AddressRefused(bad?.address ?? hostname), '', 4);
      const all = callback as unknown as (e: null, a: typeof list) => void;
      if ((options as { all?: boolean }).all) return all(null, list);
      callback(null, list[0]!.address, list[0]!.family);
    });
  };
}

/** The refusal of a URL whose host is a literal address the policy does not allow, or null. */
export function literalRefusal(url: URL, o: EgressOptions): AddressRefused | null {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) && !addressAllowed(host, o) ? new AddressRefused(host) : null;
}

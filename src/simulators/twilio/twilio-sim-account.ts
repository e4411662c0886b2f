import { rfc2822 } from './twilio-sim-messages.ts';

// The Twilio simulator's read-only account resources, as Twilio's REST API 2010-04-01 (Twilio's
// OpenAPI document) describes them: `GET /2010-04-01/Accounts/{Sid}.json` and the
// `GET …/IncomingPhoneNumbers.json` list page. `workspace verify` reads them to check the
// credentials and the sender. Pure functions; twilio-simulator.ts owns the state.

const CREATED = new Date('2024-01-15T09:30:00Z');

export function accountResource(
  accountSid: string,
  status: 'active' | 'suspended' | 'closed',
): Record<string, unknown> {
  const base = `/2010-04-01/Accounts/${accountSid}`;
  const sub = (name: string) => `${base}/${name}.json`;
  return {
    auth_token: '[Redacted]',
    date_created: rfc2822(CREATED),
    date_updated: rfc2822(CREATED),
    friendly_name: 'Simulated account',
    owner_account_sid: accountSid,
    sid: accountSid,
    status,
    subresource_uris: {
      incoming_phone_numbers: sub('IncomingPhoneNumbers'),
      messages: sub('Messages'),
      balance: sub('Balance'),
    },
    type: 'Full',
    uri: `${base}.json`,
  };
}

/**
 * The list page for `PhoneNumber` (Twilio matches partial numbers and `*` wildcards; the simulator
 * matches the digits given as a substring, `*` as any digit).
 */
export function incomingNumbersPage(
  accountSid: string,
  numbers: Iterable<string>,
  query: URLSearchParams,
): Record<string, unknown> {
  const filter = query.get('PhoneNumber');
  const pattern = filter === null ? undefined : new RegExp(filter.replace(/[^\d*]/g, '').replace(/\*/g, '\\d'));
  const pageSize = Math.min(Math.max(Number(query.get('PageSize') ?? 50) || 50, 1), 1000);
  const matching = [...numbers].filter((n) => pattern === undefined || pattern.test(n.slice(1))).slice(0, pageSize);
  const uri = `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers.json?${query}`;
  return {
    end: Math.max(matching.length - 1, 0),
    first_page_uri: uri,
    incoming_phone_numbers: matching.map((n, i) => numberResource(accountSid, n, i)),
    next_page_uri: null,
    page: 0,
    page_size: pageSize,
    previous_page_uri: null,
    start: 0,
    uri,
  };
}

function numberResource(accountSid: string, phone: string, index: number): Record<string, unknown> {
  const sid = `PN${(index + 1).toString(16).padStart(32, '0')}`;
  return {
    account_sid: accountSid,
    address_requirements: 'none',
    api_version: '2010-04-01',
    beta: false,
    capabilities: { voice: true, sms: true, mms: true, fax: false },
    date_created: rfc2822(CREATED),
    date_updated: rfc2822(CREATED),
    friendly_name: phone,
    origin: 'twilio',
    phone_number: phone,
    sid,
    sms_method: 'POST',
    sms_url: '',
    status: 'in-use',
    status_callback: '',
    uri: `/2010-04-01/Accounts/${accountSid}/IncomingPhoneNumbers/${sid}.json`,
  };
}

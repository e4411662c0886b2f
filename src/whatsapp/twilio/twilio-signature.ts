import crypto from 'node:crypto';

// Twilio webhook signatures (Twilio's webhook security documentation). Header `X-Twilio-Signature` carries
// base64(HMAC-SHA1(auth token, URL + every POST parameter as name+value, names sorted)). The URL
// is the public one Twilio called, query string included; behind a proxy the request's own Host
// is not it, so receivers rebuild it from PUBLIC_BASE_URL (twilioWebhookUrl).

export const TWILIO_SIGNATURE_HEADER = 'x-twilio-signature';

/** Form parameters as received: URLSearchParams keeps repeated names (MediaUrl0…, PersistentAction). */
export type TwilioParams = URLSearchParams | Record<string, string | readonly string[]>;

/** The string Twilio signs: URL, then for each name in ascending order each distinct value in ascending order. */
export function twilioSignedString(url: string, params: TwilioParams): string {
  const byName = new Map<string, string[]>();
  const entries: [string, string | readonly string[]][] =
    params instanceof URLSearchParams ? [...params] : Object.entries(params);
  for (const [name, value] of entries) {
    const list = byName.get(name) ?? [];
    list.push(...(typeof value === 'string' ? [value] : value));
    byName.set(name, list);
  }
  let out = url;
  // Default (UTF-16 code unit) sort, as Twilio's own helper libraries sort; names are ASCII anyway.
  for (const name of [...byName.keys()].sort()) {
    for (const value of [...new Set(byName.get(name))].sort()) out += name + value;
  }
  return out;
}

export function computeTwilioSignature(authToken: string, url: string, params: TwilioParams): string {
  return crypto.createHmac('sha1', authToken).update(twilioSignedString(url, params), 'utf8').digest('base64');
}

/**
 * True when `header` is Twilio's signature of this request. Accepts the URL with and without an
 * explicit default port (:443/:80), as Twilio's validators do, because Twilio is inconsistent
 * about including it when it signs.
 */
export function verifyTwilioSignature(
  authToken: string,
  url: string,
  params: TwilioParams,
  header: string | undefined,
): boolean {
  // An empty token would make every signature forgeable, so refuse.
  if (authToken === '' || header === undefined) return false;
  const received = Buffer.from(header.trim(), 'utf8');
  let matched = false;
  for (const candidate of urlVariants(url)) {
    const expected = Buffer.from(computeTwilioSignature(authToken, candidate, params), 'utf8');
    // Every candidate is compared, so the timing does not tell which form matched.
    if (received.length === expected.length && crypto.timingSafeEqual(received, expected)) matched = true;
  }
  return matched;
}

/**
 * The URL Twilio called: PUBLIC_BASE_URL (may carry a path prefix) + the request's path and query
 * exactly as received (Fastify's `request.url`), without re-encoding anything.
 */
export function twilioWebhookUrl(publicBaseUrl: string, pathAndQuery: string): string {
  const base = publicBaseUrl.replace(/\/+$/, '');
  return base + (pathAndQuery.startsWith('/') ? pathAndQuery : `/${pathAndQuery}`);
}

function urlVariants(url: string): string[] {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return [url];
  }
  const defaultPort = parsed.protocol === 'https:' ? '443' : parsed.protocol === 'http:' ? '80' : undefined;
  if (defaultPort === undefined) return [url];
  // Rebuilt by string surgery, not URL#toString, which would normalise the path and query
  // encoding and so change the signed bytes.
  const m = /^([a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?)(\[[^\]]*\]|[^:/?#]*)(?::(\d+))?(.*)$/i.exec(url);
  if (!m) return [url];
  const [, prefix, host, port, rest] = m;
  const variants = new Set([url]);
  if (port === undefined) variants.add(`${prefix}${host}:${defaultPort}${rest}`);
  else if (port === defaultPort) variants.add(`${prefix}${host}${rest}`);
  return [...variants];
}

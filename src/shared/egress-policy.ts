import { isIP } from 'node:net';

// Where a URL that a workspace chose may lead (its model server's base URL, its webhook
// endpoints): the one address policy for every request a tenant can aim (docs/SECURITY.md). A
// workspace admin is a stranger to the installation, so such requests must not reach the
// installation's own network: loopback, private, link-local, CGNAT and cloud metadata addresses.
//
// Checked twice: when the URL is saved (a literal address, or `localhost`, is refused with a
// message the admin can act on) and at every connection, on the address the name resolved to
// (egress-lookup.ts), so a name that resolves to 127.0.0.1 today is refused today. URLs are
// parsed by WHATWG URL, which writes every spelling of an IPv4 address (decimal 2130706433, hex
// 0x7f000001, octal 0177.0.0.1, short 127.1) as the dotted address it is.
//
// The operator, never a tenant, may allow private networks (EGRESS_ALLOW_PRIVATE_NETWORKS): a
// self-hoster whose model server or webhook receiver runs on their own network.

export interface EgressOptions {
  /** The operator's switch: loopback, private, link-local and CGNAT addresses allowed. */
  allowPrivateNetworks: boolean;
}

/** `forbidden`: never, whatever the operator allows. `private`: only when the operator allows private networks. */
export type AddressClass = 'public' | 'private' | 'forbidden';

type V4Net = readonly [string, number];
// Cloud metadata services (AWS/GCP/Azure, AWS ECS, Alibaba), multicast, reserved and broadcast:
// no model server or receiver lives there, and the metadata services hand out credentials.
const V4_FORBIDDEN: readonly V4Net[] = [
  ['169.254.169.254', 32],
  ['169.254.170.2', 32],
  ['100.100.100.200', 32],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
];
const V4_PRIVATE: readonly V4Net[] = [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
];

type V6Net = readonly [string, number];
// IPv4 tunnelled or translated in IPv6 whose far end we cannot judge (IPv4-compatible ::/96,
// 6to4, Teredo, local-use NAT64), multicast, and AWS's IPv6 metadata address.
const V6_FORBIDDEN: readonly V6Net[] = [
  ['::', 96],
  ['2002::', 16],
  ['2001::', 32],
  ['64:ff9b:1::', 48],
  ['ff00::', 8],
  ['fd00:ec2::254', 128],
];
// Inside global unicast (2000::/3), the ranges that are not the internet: documentation,
// benchmarking, ORCHID.
const V6_NOT_GLOBAL: readonly V6Net[] = [
  ['2001:db8::', 32],
  ['2001:2::', 48],
  ['2001:10::', 28],
  ['2001:20::', 28],
  ['3fff::', 20],
];

function v4Number(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function inV4(n: number, [net, bits]: V4Net): boolean {
  const size = 2 ** (32 - bits);
  return Math.floor(n / size) === Math.floor(v4Number(net) / size);
}

/** The 128 bits of a valid IPv6 address (zone id dropped, a trailing dotted IPv4 part read). */
function v6Number(address: string): bigint {
  let s = address.toLowerCase().replace(/%.*$/, '');
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(s);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    s = `${s.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = s.split('::');
  const h = head ? head.split(':') : [];
  const t = tail === undefined ? [] : tail ? tail.split(':') : [];
  const groups = tail === undefined ? h : [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t];
  return groups.reduce((n, g) => (n << 16n) | BigInt(parseInt(g, 16)), 0n);
}

function inV6(n: bigint, [net, bits]: V6Net): boolean {
  const shift = BigInt(128 - bits);
  return n >> shift === v6Number(net) >> shift;
}

function classifyV4(n: number): AddressClass {
  if (V4_FORBIDDEN.some((net) => inV4(n, net))) return 'forbidden';
  return V4_PRIVATE.some((net) => inV4(n, net)) ? 'private' : 'public';
}

/** Whether an address (as a resolver or URL gives it) is public, private, or never to be reached. */
export function classifyAddress(address: string): AddressClass {
  const bare = address.replace(/^\[|\]$/g, '');
  const family = isIP(bare);
  if (family === 4) return classifyV4(v4Number(bare));
  if (family !== 6) return 'forbidden';
  const n = v6Number(bare);
  const low32 = Number(n & 0xffffffffn);
  // IPv4-mapped (::ffff:a.b.c.d) reaches exactly the IPv4 address it carries: judged as that
  // address. Well-known NAT64 (64:ff9b::a.b.c.d, an IPv6-only host's way to the IPv4 internet)
  // only to a public one: a translator is never the way to a private network.
  if (inV6(n, ['::ffff:0:0', 96])) return classifyV4(low32);
  if (inV6(n, ['64:ff9b::', 96])) return classifyV4(low32) === 'public' ? 'public' : 'forbidden';
  if (n === 0n || n === 1n) return 'private';
  if (V6_FORBIDDEN.some((net) => inV6(n, net))) return 'forbidden';
  if (!inV6(n, ['2000::', 3])) return 'private';
  return V6_NOT_GLOBAL.some((net) => inV6(n, net)) ? 'private' : 'public';
}

export function addressAllowed(address: string, o: EgressOptions): boolean {
  const c = classifyAddress(address);
  return c === 'public' || (c === 'private' && o.allowPrivateNetworks);
}

export const PRIVATE_REFUSAL =
  'points to a private, loopback or link-local address, which this installation does not allow';
export const FORBIDDEN_REFUSAL =
  'points to an address that is never allowed (cloud metadata, multicast, reserved, or IPv4 tunnelled in IPv6)';

/** `localhost` and its subdomains name this machine whatever DNS says (RFC 6761). */
function isLocalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost');
}

/** The URL's host without brackets or a trailing dot, lower case. */
function bareHost(url: URL): string {
  return url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase();
}

/**
 * Why a URL's host may not be saved, or null. Only what the URL itself says (a literal address,
 * `localhost`); a name is judged by its resolved address at every connection.
 */
export function hostProblem(url: URL, o: EgressOptions): string | null {
  const host = bareHost(url);
  const c = isIP(host) ? classifyAddress(host) : isLocalName(host) ? 'private' : 'public';
  if (c === 'forbidden') return FORBIDDEN_REFUSAL;
  if (c === 'private' && !o.allowPrivateNetworks) return PRIVATE_REFUSAL;
  return null;
}

/** Whether the URL names this machine: a loopback address in any spelling, or `localhost`. */
export function isLoopbackUrl(url: URL): boolean {
  const host = bareHost(url);
  if (isLocalName(host)) return true;
  if (isIP(host) === 4) return inV4(v4Number(host), ['127.0.0.0', 8]);
  if (isIP(host) === 6) {
    const n = v6Number(host);
    return n === 1n || (inV6(n, ['::ffff:0:0', 96]) && inV4(Number(n & 0xffffffffn), ['127.0.0.0', 8]));
  }
  return false;
}

/** Problems with a URL a workspace gives for its outbound webhooks, or null when it may be saved. */
export function webhookUrlProblem(text: string, o: EgressOptions): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'http:' && o.allowPrivateNetworks && isLoopbackUrl(url)) return null;
  if (url.protocol !== 'https:') {
    return o.allowPrivateNetworks
      ? 'must be https (http only for a receiver on this machine, 127.0.0.1 or localhost, ' +
          'which gets sandbox events only)'
      : 'must be https';
  }
  return hostProblem(url, o);
}

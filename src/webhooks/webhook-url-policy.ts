import { BlockList, isIP } from 'node:net';

// Where an endpoint may point (docs/OUTBOUND-WEBHOOKS.md, Safety). Checked when it is added and,
// for the resolved addresses, again at every delivery: a name that resolved to a public address
// yesterday may resolve to 169.254.169.254 today.

const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

/** Problems with a URL given to `webhook add`, or null when it is acceptable. */
export function urlProblem(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'is not a URL';
  }
  if (url.username || url.password) return 'must not carry credentials';
  if (url.protocol === 'https:') return null;
  if (url.protocol === 'http:' && isLocalHost(url)) return null;
  return 'must be https (http only for 127.0.0.1 or localhost, which receive sandbox events only)';
}

export function isLocalHost(url: URL): boolean {
  return LOCAL_HOSTS.has(url.hostname);
}

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) blocked.addSubnet(net, prefix, 'ipv4');
for (const [net, prefix] of [['::', 128], ['::1', 128], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8]] as const) blocked.addSubnet(net, prefix, 'ipv6');

const loopback = new BlockList();
loopback.addSubnet('127.0.0.0', 8, 'ipv4');
loopback.addAddress('::1', 'ipv6');

/** An IPv4 address written as IPv6 (::ffff:10.0.0.1) is judged as the IPv4 address it is. */
function unmapped(address: string): { address: string; family: 'ipv4' | 'ipv6' } {
  const m = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (m) return { address: m[1]!, family: 'ipv4' };
  return { address, family: isIP(address) === 6 ? 'ipv6' : 'ipv4' };
}

export function isPrivateAddress(address: string): boolean {
  const a = unmapped(address);
  return blocked.check(a.address, a.family);
}

export function isLoopbackAddress(address: string): boolean {
  const a = unmapped(address);
  return loopback.check(a.address, a.family);
}

/**
 * Whether a delivery may connect to `address`. Live events never go to private, loopback or
 * link-local addresses unless the operator allows private networks; sandbox events may also go
 * to loopback (a developer's local receiver).
 */
export function addressAllowed(address: string, o: { livemode: boolean; allowPrivateNetworks: boolean }): boolean {
  if (o.allowPrivateNetworks || !isPrivateAddress(address)) return true;
  return !o.livemode && isLoopbackAddress(address);
}

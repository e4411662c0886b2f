import net from 'node:net';
import { z } from 'zod';

// TRUST_PROXY: which entries of X-Forwarded-For the service believes, in the forms Fastify's
// `trustProxy` takes. The client address it yields is the consent record's and the sign-in
// throttle's, so believing every entry would let any client choose it (and rotate it to slip
// the throttle). Hence no `true`: a hop count, or the proxies' own addresses or ranges.

/** Names proxy-addr (under Fastify's trustProxy) understands besides addresses and ranges. */
const RANGE_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);

function isAddressOrRange(entry: string): boolean {
  if (RANGE_NAMES.has(entry)) return true;
  const [address = '', prefix, ...rest] = entry.split('/');
  const family = net.isIP(address);
  if (!family || rest.length) return false;
  if (prefix === undefined) return true;
  return /^\d{1,3}$/.test(prefix) && Number(prefix) <= (family === 4 ? 32 : 128);
}

const NO = new Set(['false', 'no', 'off', 'n', 'disabled']);
const YES = new Set(['true', 'yes', 'on', 'y', 'enabled']);

export const trustProxySchema = z
  .string()
  .trim()
  .transform((value, ctx): false | number | string[] => {
    const lower = value.toLowerCase();
    if (NO.has(lower) || lower === '0') return false;
    if (YES.has(lower)) {
      ctx.addIssue({
        code: 'custom',
        message:
          'true would believe any X-Forwarded-For a client sends; give the number of proxies in front of the ' +
          'service (e.g. 1) or their addresses or CIDR ranges (e.g. 10.0.0.0/8,192.168.1.5)',
      });
      return z.NEVER;
    }
    if (/^\d+$/.test(value)) {
      const hops = Number(value);
      if (hops <= 32) return hops;
      ctx.addIssue({ code: 'custom', message: 'a hop count must be at most 32' });
      return z.NEVER;
    }
    const entries = value
      .split(',')
      .map((e) => e.trim())
      .filter(Boolean);
    const bad = entries.filter((e) => !isAddressOrRange(e));
    if (entries.length && !bad.length) return entries;
    ctx.addIssue({
      code: 'custom',
      message: 'must be false, a hop count, or a comma-separated list of IP addresses or CIDR ranges',
    });
    return z.NEVER;
  });

/**
 * TRUST_PROXY as Fastify takes it. A hop count becomes a function: Fastify's own number form
 * trusts nothing (a client reaching the port directly could send as many hops as it likes), so
 * a count is only right when the port is reachable through those proxies alone (docs/SECURITY.md).
 */
export function fastifyTrustProxy(
  value: false | number | string[],
): false | string[] | ((address: string, hop: number) => boolean) {
  if (typeof value !== 'number') return value;
  return (_address, hop) => hop < value;
}

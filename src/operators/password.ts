import crypto from 'node:crypto';

// Operators' passwords: Node's scrypt (no native add-on to build), `scrypt$N$r$p$<salt>$<hash>`.
// The parameters travel with each hash, so the cost can be raised without invalidating old
// hashes: a hash below the current cost still verifies and is redone at the next sign-in.

const scryptAsync = (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) =>
  new Promise<Buffer>((resolve, reject) =>
    crypto.scrypt(password, salt, keylen, options, (err, key) => (err ? reject(err) : resolve(key))),
  );

// Each hash at the default cost holds 128 MiB and one of libuv's four threads (which DNS lookups
// and file reads share) for about half a second: a burst of sign-ins runs two at a time, the
// rest wait their turn, so neither memory nor the thread pool is taken over.
const MAX_CONCURRENT = 2;
let running = 0;
const waiting: Array<() => void> = [];

async function scrypt(password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions): Promise<Buffer> {
  if (running >= MAX_CONCURRENT) await new Promise<void>((resolve) => waiting.push(resolve));
  else running++;
  try {
    return await scryptAsync(password, salt, keylen, options);
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}

/** OWASP's current scrypt guidance: N=2^17, r=8, p=1 (128 MiB per hash). */
export const DEFAULT_LOG2_N = 17;
const R = 8;
const P = 1;
const KEY_LENGTH = 32;
// Stored parameters are ours, but a hash string is still input: a cost past this is refused
// rather than computed (2^20 with r=8 is already 1 GiB).
const MAX_N = 2 ** 20;

export interface ScryptParams {
  N: number;
  r: number;
  p: number;
}

export const scryptParams = (log2N: number = DEFAULT_LOG2_N): ScryptParams => ({ N: 2 ** log2N, r: R, p: P });

// scrypt needs 128·N·r bytes; Node refuses anything over `maxmem` (32 MiB by default), so it is
// set from the parameters, with room for the small extra scrypt allocates beside that block.
const maxmem = (q: ScryptParams): number => 128 * q.N * q.r * 2 + 1024 * 1024;

export async function hashPassword(password: string, params: ScryptParams = scryptParams()): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, { ...params, maxmem: maxmem(params) });
  return `scrypt$${params.N}$${params.r}$${params.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

function parse(stored: string): { params: ScryptParams; salt: Buffer; hash: Buffer } | null {
  const [scheme, n, r, p, salt, hash, ...rest] = stored.split('$');
  const params = { N: Number(n), r: Number(r), p: Number(p) };
  if (scheme !== 'scrypt' || !salt || !hash || rest.length) return null;
  if (!Number.isInteger(params.N) || params.N < 2 || params.N > MAX_N || (params.N & (params.N - 1)) !== 0) return null;
  const { r: rr, p: pp } = params;
  if (!Number.isInteger(rr) || !Number.isInteger(pp) || rr < 1 || pp < 1 || rr * pp > 64) return null;
  return { params, salt: Buffer.from(salt, 'base64'), hash: Buffer.from(hash, 'base64') };
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parse(stored);
  if (!parsed || parsed.hash.length === 0) return false;
  const options = { ...parsed.params, maxmem: maxmem(parsed.params) };
  const actual = await scrypt(password, parsed.salt, parsed.hash.length, options);
  return crypto.timingSafeEqual(actual, parsed.hash);
}

/** Whether a stored hash was made with other parameters than `params` (then it is redone at sign-in). */
export function needsRehash(stored: string, params: ScryptParams): boolean {
  const parsed = parse(stored);
  return !parsed || parsed.params.N !== params.N || parsed.params.r !== params.r || parsed.params.p !== params.p;
}

/** A generated password the CLI prints once: 20 characters of base64url (120 bits). */
export function generatePassword(): string {
  return crypto.randomBytes(15).toString('base64url');
}

const dummies = new Map<number, Promise<string>>();
/**
 * A hash of a random password at the current cost, checked when the account does not exist, so
 * the answer's timing does not tell whether it does.
 */
export function dummyHash(params: ScryptParams = scryptParams()): Promise<string> {
  let dummy = dummies.get(params.N);
  if (!dummy) dummies.set(params.N, (dummy = hashPassword(generatePassword(), params)));
  return dummy;
}

import crypto from 'node:crypto';
import { promisify } from 'node:util';

// Operators' passwords: Node's scrypt (no native add-on to build), parameters stored with each
// hash so they can be raised later without invalidating old hashes.

const scrypt = promisify(crypto.scrypt) as (password: string, salt: Buffer, keylen: number, options: crypto.ScryptOptions) => Promise<Buffer>;
const PARAMS = { N: 16_384, r: 8, p: 1 };
const KEY_LENGTH = 32;

export async function hashPassword(password: string): Promise<string> {
  const salt = crypto.randomBytes(16);
  const hash = await scrypt(password, salt, KEY_LENGTH, PARAMS);
  return `scrypt$${PARAMS.N}$${PARAMS.r}$${PARAMS.p}$${salt.toString('base64')}$${hash.toString('base64')}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scrypt(password, Buffer.from(salt, 'base64'), expected.length, { N: Number(n), r: Number(r), p: Number(p) });
  return crypto.timingSafeEqual(actual, expected);
}

/** A generated password the CLI prints once: 20 characters of base64url (120 bits). */
export function generatePassword(): string {
  return crypto.randomBytes(15).toString('base64url');
}

let dummy: Promise<string> | undefined;
/** A hash of a random password, checked when the account does not exist, so the answer's timing does not tell. */
export function dummyHash(): Promise<string> {
  return (dummy ??= hashPassword(generatePassword()));
}

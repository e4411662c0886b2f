import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

/**
 * A secret the installation generates once and keeps in a file only its owner may read (mode
 * 0600): the encryption key, the embedded database's passwords. Created with `wx`, so two
 * processes starting at once agree on the first one written; a file found readable by others
 * is narrowed to 0600. Returns the file's text, trimmed.
 */
export function readOrCreateSecretFile(file: string, generate: () => string = randomHex): string {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  try {
    fs.writeFileSync(file, `${generate()}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    if ((fs.statSync(file).mode & 0o077) !== 0) fs.chmodSync(file, 0o600);
  }
  return fs.readFileSync(file, 'utf8').trim();
}

/** 32 random bytes as 64 hex characters. */
export function randomHex(): string {
  return crypto.randomBytes(32).toString('hex');
}

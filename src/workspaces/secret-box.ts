import crypto from 'node:crypto';
import path from 'node:path';
import { readOrCreateSecretFile } from '../shared/secret-file.ts';

// AES-256-GCM for provider settings at rest. Layout: version byte | 12-byte IV | 16-byte tag |
// ciphertext. The associated data binds a blob to its workspace: moved to another row, it
// fails authentication instead of leaking one tenant's credentials into another.
const VERSION = 1;

export class SecretBox {
  readonly #key: Buffer;

  constructor(key: Buffer) {
    if (key.length !== 32) throw new Error('The encryption key must be 32 bytes.');
    this.#key = key;
  }

  seal(value: unknown, boundTo: string): Buffer {
    const iv = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.#key, iv);
    cipher.setAAD(Buffer.from(boundTo));
    const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
    return Buffer.concat([Buffer.from([VERSION]), iv, cipher.getAuthTag(), body]);
  }

  /**
   * A key for one other purpose (the hosted form's signed fields, visitors' address hashes),
   * derived from the installation's key by HKDF: the key itself never leaves this class.
   */
  derive(purpose: string): Buffer {
    return Buffer.from(crypto.hkdfSync('sha256', this.#key, Buffer.alloc(0), `leadintake:${purpose}`, 32));
  }

  open(blob: Buffer, boundTo: string): unknown {
    if (blob.length < 29 || blob[0] !== VERSION) throw new Error('Unknown secret format.');
    const decipher = crypto.createDecipheriv('aes-256-gcm', this.#key, blob.subarray(1, 13), { authTagLength: 16 });
    decipher.setAAD(Buffer.from(boundTo));
    decipher.setAuthTag(blob.subarray(13, 29));
    const text = Buffer.concat([decipher.update(blob.subarray(29)), decipher.final()]).toString('utf8');
    return JSON.parse(text);
  }
}

/** Accepts 32 bytes as 64 hex characters or as base64. */
export function parseEncryptionKey(text: string): Buffer {
  const trimmed = text.trim();
  const key = /^[0-9a-fA-F]{64}$/.test(trimmed) ? Buffer.from(trimmed, 'hex') : Buffer.from(trimmed, 'base64');
  if (key.length !== 32) {
    throw new Error('LEADINTAKE_ENCRYPTION_KEY must be 32 bytes, given as 64 hex characters or base64.');
  }
  return key;
}

/**
 * The key from LEADINTAKE_ENCRYPTION_KEY; for the embedded default (no DATABASE_URL) a key
 * generated once and kept beside the data in the data folder.
 */
export function resolveEncryptionKey(opts: { envKey?: string; databaseUrl?: string; dataDir: string }): Buffer {
  if (opts.envKey) return parseEncryptionKey(opts.envKey);
  if (opts.databaseUrl) {
    throw new Error(
      'LEADINTAKE_ENCRYPTION_KEY is required when DATABASE_URL is set (generate one with: openssl rand -hex 32).',
    );
  }
  return parseEncryptionKey(readOrCreateSecretFile(path.join(path.resolve(opts.dataDir), 'encryption.key')));
}

import crypto from 'node:crypto';
import { retryOnLostConnection, type Pool } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import { hashApiKey } from '../workspaces/api-key.ts';
import { findApiKeyByHash, touchApiKeys, type ApiKeyRecord } from '../workspaces/api-key-queries.ts';

export type AuthOutcome =
  | { ok: true; key: ApiKeyRecord }
  | { ok: false; reason: 'missing_authorization' | 'bad_scheme' | 'invalid_key' | 'workspace_not_found' };

const MAX_CACHED_KEYS = 10_000;
const LAST_USED_FLUSH_MS = 60_000;

/**
 * Resolves `Authorization: Bearer <key>` to a key and its workspace. Found keys are cached
 * for `cacheTtlMs`, so a revocation or deletion made by another process takes effect within
 * that time; `last_used_at` is written at most once a minute per key, in the background.
 */
export class Authenticator {
  readonly #pool: Pool;
  readonly #clock: Clock;
  readonly #log: Logger;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { expires: number; record: ApiKeyRecord }>();
  /** Lookups running now, by key hash: concurrent requests of an uncached key share one. */
  readonly #pending = new Map<string, Promise<ApiKeyRecord | null>>();
  readonly #lastTouched = new Map<string, number>();

  constructor(opts: { pool: Pool; clock: Clock; log: Logger; cacheTtlMs: number }) {
    this.#pool = opts.pool;
    this.#clock = opts.clock;
    this.#log = opts.log;
    this.#ttlMs = opts.cacheTtlMs;
  }

  async authenticate(header: string | undefined): Promise<AuthOutcome> {
    if (header === undefined || header.trim() === '') return { ok: false, reason: 'missing_authorization' };
    const match = /^Bearer +(\S+) *$/i.exec(header);
    if (!match) return { ok: false, reason: 'bad_scheme' };
    const token = match[1]!;
    const hash = hashApiKey(token);
    const record = await this.#lookup(hash);
    // The lookup is by hash; comparing the stored hash in constant time as well keeps the
    // decision itself free of timing differences.
    // The hosted form's own key (kind 'form') is used by the service itself and never accepted
    // from a client: it is never shown, but a leaked one must not become an API key.
    if (!record || !crypto.timingSafeEqual(record.keyHash, hash) || record.revoked || record.kind === 'form') {
      return { ok: false, reason: 'invalid_key' };
    }
    if (record.workspace.deletedAt) return { ok: false, reason: 'workspace_not_found' };
    this.#noteUse(record.id);
    return { ok: true, key: record };
  }

  /** Drops cached entries, for changes made in this process (revocation, settings). */
  invalidate(): void {
    this.#cache.clear();
  }

  async #lookup(hash: Buffer): Promise<ApiKeyRecord | null> {
    const cacheKey = hash.toString('base64');
    const now = this.#clock().getTime();
    const hit = this.#cache.get(cacheKey);
    if (hit && hit.expires > now) return hit.record;
    // A flood of one key's requests right after a start (or an expiry) would otherwise send one
    // lookup per request, and queue them all for the pool's few connections.
    const running = this.#pending.get(cacheKey);
    if (running) return running;
    // A read: tried again when a failover took its connection, rather than a 500.
    const lookup = retryOnLostConnection(() => findApiKeyByHash(this.#pool, hash))
      .then((record) => {
        if (record && this.#ttlMs > 0) {
          if (this.#cache.size >= MAX_CACHED_KEYS) this.#cache.clear();
          this.#cache.set(cacheKey, { expires: now + this.#ttlMs, record });
        }
        return record;
      })
      .finally(() => this.#pending.delete(cacheKey));
    this.#pending.set(cacheKey, lookup);
    return lookup;
  }

  #noteUse(keyId: string): void {
    const now = this.#clock().getTime();
    const last = this.#lastTouched.get(keyId);
    if (last !== undefined && now - last < LAST_USED_FLUSH_MS) return;
    this.#lastTouched.set(keyId, now);
    touchApiKeys(this.#pool, [keyId], new Date(now)).catch((err) =>
      this.#log.warn({ err }, 'could not record API key use'),
    );
  }
}

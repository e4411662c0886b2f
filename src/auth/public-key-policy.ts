import type { Pool } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import type { ErrorCode } from '../shared/errors.ts';
import type { ApiKeyRecord } from '../workspaces/api-key-queries.ts';

// Which key may be used where (docs/API.md, "Keys in a browser"; docs/SECURITY.md):
//   - a secret key never from a browser: a request with an `Origin` header is one a page made
//     (every browser sends it on a cross-origin fetch and on any POST), so the key is exposed
//     in that page's code; refused with a 401 that says why. Server-side clients send no
//     Origin: for them nothing changes.
//   - a publishable key only creates leads (POST /api/public/leads), and only from a listed
//     origin; its answers then carry the CORS headers for that origin, and no other's.

export interface KeyUse {
  method: string;
  /** The `Origin` request header, undefined when absent. */
  origin: string | undefined;
}

/** The refusal of this key for this use, or null when it may go on. */
export function keyUseRefusal(key: ApiKeyRecord, use: KeyUse): ErrorCode | null {
  if (key.kind === 'secret') return use.origin === undefined ? null : 'secret_key_in_browser';
  if (key.kind !== 'publishable') return 'invalid_key';
  if (use.method !== 'POST') return 'publishable_key_read';
  if (use.origin === undefined || !key.allowedOrigins.includes(use.origin)) return 'origin_not_allowed';
  return null;
}

/** What a browser may read of an answer: the RateLimit headers and the request id besides the body. */
const EXPOSED = 'ratelimit, ratelimit-policy, retry-after, x-request-id';

/** The CORS headers of an answer to an allowed origin (never `*`: each origin is named). */
export function corsHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED, vary: 'Origin' };
}

/** A preflight's answer for an allowed origin: POST with the key and a JSON body. */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': 'POST',
    'access-control-allow-headers': 'authorization, content-type',
    'access-control-max-age': '600',
    vary: 'Origin',
  };
}

const MAX_CACHED_ORIGINS = 10_000;

/**
 * Whether any active publishable key lists an origin. A preflight carries no key (browsers never
 * send Authorization with it), so this is all it can be told; the POST itself is then checked
 * against its own key's list. Answers are cached for the key cache's time, like keys.
 */
export class PublishableOrigins {
  readonly #pool: Pool;
  readonly #clock: Clock;
  readonly #ttlMs: number;
  readonly #cache = new Map<string, { expires: number; allowed: boolean }>();

  constructor(opts: { pool: Pool; clock: Clock; cacheTtlMs: number }) {
    this.#pool = opts.pool;
    this.#clock = opts.clock;
    this.#ttlMs = opts.cacheTtlMs;
  }

  async allowed(origin: string): Promise<boolean> {
    const now = this.#clock().getTime();
    const hit = this.#cache.get(origin);
    if (hit && hit.expires > now) return hit.allowed;
    const { rows } = await this.#pool.query(
      `SELECT EXISTS (SELECT 1 FROM api_keys k JOIN workspaces w ON w.id = k.workspace_id
                       WHERE k.kind = 'publishable' AND k.revoked_at IS NULL AND w.deleted_at IS NULL
                         AND $1 = ANY (k.allowed_origins)) AS allowed`,
      [origin],
    );
    const allowed: boolean = rows[0].allowed;
    if (this.#ttlMs > 0) {
      if (this.#cache.size >= MAX_CACHED_ORIGINS) this.#cache.clear();
      this.#cache.set(origin, { expires: now + this.#ttlMs, allowed });
    }
    return allowed;
  }

  /** Drops cached answers, for changes made in this process. */
  invalidate(): void {
    this.#cache.clear();
  }
}

import { z } from 'zod';
import { withTransaction, type Pool } from '../db/pool.ts';
import { AppError } from '../shared/errors.ts';
import { generateApiKey } from './api-key.ts';
import { insertApiKey, listKeysOfKinds, lockAndCountActiveKeys, type ApiKeyListing } from './api-key-queries.ts';
import { keyCountText, keyHourlyLimitText, type CreatedKey, type KeyCaps } from './workspace-service.ts';

// Publishable keys (`li_pub_live_…`, `li_pub_test_…`; docs/INTAKE.md, "Embed and publishable
// keys"): what the CLI's `key create --publishable` and the dashboard's Form page call. A
// publishable key only creates leads, and only from the browser origins listed here.

/** At most this many origins per key: a site and its few preview hosts, not a wildcard by enumeration. */
export const MAX_ALLOWED_ORIGINS = 20;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOOPBACK_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);

export const ORIGIN_MESSAGE =
  'Each origin must be https://host[:port] (http:// only for localhost), without a path, query or fragment.';

/**
 * An origin as a browser sends it in `Origin`: scheme, host and port, nothing else. https only
 * (a page served over http can be altered on the way, key and all), except for a developer's
 * own machine.
 */
export function normalizeOrigin(text: string): string | null {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash || url.pathname !== '/') return null;
  if (url.protocol === 'https:') return url.origin;
  if (url.protocol === 'http:' && LOOPBACK_HOSTS.has(url.hostname)) return url.origin;
  return null;
}

export const allowedOriginsSchema = z
  .array(z.string(), { error: 'allowedOrigins must be a list of origins.' })
  .min(1, 'A publishable key needs at least one allowed origin.')
  .max(MAX_ALLOWED_ORIGINS, `At most ${MAX_ALLOWED_ORIGINS} origins per key.`)
  .transform((list, ctx) => {
    const out: string[] = [];
    for (const item of list) {
      const origin = normalizeOrigin(item);
      if (!origin) {
        ctx.addIssue({ code: 'custom', message: ORIGIN_MESSAGE });
        return z.NEVER;
      }
      if (!out.includes(origin)) out.push(origin);
    }
    return out;
  });

/** The origins as stored, or `validation_failed` naming the rule. */
export function parseAllowedOrigins(list: unknown): string[] {
  const parsed = allowedOriginsSchema.safeParse(list);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((i) => ({ path: ['allowedOrigins'], message: i.message }));
  throw new AppError('validation_failed', { issues });
}

export interface NewPublishableKey {
  workspaceId: string;
  allowedOrigins: unknown;
  sandbox?: boolean;
  name?: string;
  hourlyLimit?: number;
}

/** The service the CLI and the admin API use; the key itself is only in `create`'s answer. */
export class PublishableKeys {
  readonly #pool: Pool;
  readonly #defaultHourlyLimit: number;

  constructor(pool: Pool, defaultHourlyLimit: number) {
    this.#pool = pool;
    this.#defaultHourlyLimit = defaultHourlyLimit;
  }

  list(workspaceId: string): Promise<ApiKeyListing[]> {
    return listKeysOfKinds(this.#pool, workspaceId, ['publishable']);
  }

  /** Counted with the workspace's other keys against MAX_API_KEYS_PER_WORKSPACE (`caps`), like a secret key. */
  async create(k: NewPublishableKey, caps?: KeyCaps): Promise<CreatedKey & { allowedOrigins: string[] }> {
    const allowedOrigins = parseAllowedOrigins(k.allowedOrigins);
    const hourlyLimit = k.hourlyLimit ?? Math.min(this.#defaultHourlyLimit, caps?.maxHourlyLimit ?? Infinity);
    if (caps && hourlyLimit > caps.maxHourlyLimit) {
      const issue = { path: ['hourlyLimit'], message: keyHourlyLimitText(caps.maxHourlyLimit) };
      throw new AppError('validation_failed', { issues: [issue] });
    }
    const newKey = generateApiKey({ livemode: !k.sandbox, kind: 'publishable' });
    const { id } = await withTransaction(this.#pool, async (tx) => {
      if (caps && (await lockAndCountActiveKeys(tx, k.workspaceId)) >= caps.maxKeys) {
        throw new AppError('limit_reached', { message: keyCountText(caps.maxKeys) });
      }
      return insertApiKey(tx, {
        workspaceId: k.workspaceId,
        name: k.name ?? (k.sandbox ? 'publishable sandbox' : 'publishable'),
        prefix: newKey.prefix,
        hash: newKey.hash,
        hourlyLimit,
        livemode: !k.sandbox,
        kind: 'publishable',
        allowedOrigins,
      });
    });
    return { id, key: newKey.key, prefix: newKey.prefix, allowedOrigins };
  }

  /**
   * Replaces a key's origins; false when the workspace has no such publishable key. Processes
   * that cached the key see the change within API_KEY_CACHE_TTL_MS (callers in this process
   * call Authenticator.invalidate()).
   */
  async setOrigins(workspaceId: string, keyId: string, origins: unknown): Promise<boolean> {
    const allowedOrigins = parseAllowedOrigins(origins);
    if (!UUID.test(keyId)) return false;
    const { rowCount } = await this.#pool.query(
      `UPDATE api_keys SET allowed_origins = $3
        WHERE id = $2 AND workspace_id = $1 AND kind = 'publishable' AND revoked_at IS NULL`,
      [workspaceId, keyId, allowedOrigins],
    );
    return rowCount === 1;
  }

  /** Revokes a publishable key of this workspace only; false when there is none. Twice keeps the first time. */
  async revoke(workspaceId: string, keyId: string): Promise<boolean> {
    if (!UUID.test(keyId)) return false;
    const { rowCount } = await this.#pool.query(
      `UPDATE api_keys SET revoked_at = COALESCE(revoked_at, now())
        WHERE id = $2 AND workspace_id = $1 AND kind = 'publishable'`,
      [workspaceId, keyId],
    );
    return rowCount === 1;
  }
}

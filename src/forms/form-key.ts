import crypto from 'node:crypto';
import { withTransaction, type Pool } from '../db/pool.ts';
import { hashApiKey } from '../workspaces/api-key.ts';

// The hosted form and the connected sources submit through LeadService like every intake path,
// with a Caller whose key is a real api_keys row: one key of kind `form` per workspace and mode,
// made on first use. The sources' deliveries are counted against it and limited by its hourly
// limit; the form's own POSTs are not (their limits are the form's, docs/INTAKE.md). Its secret is
// thrown away at once: nobody can present it, so it never authenticates a request (and the
// authenticator refuses the kind besides).

export interface FormKey {
  id: string;
  hourlyLimit: number;
}

const cache = new Map<string, FormKey>();

export async function formKeyOf(
  pool: Pool,
  workspaceId: string,
  livemode: boolean,
  hourlyLimit: number,
): Promise<FormKey> {
  const cacheKey = `${workspaceId}:${livemode}`;
  const cached = cache.get(cacheKey);
  if (cached) return cached;
  const key = await withTransaction(pool, async (tx) => {
    // Serialises the first use of one workspace's form key, so it is made once.
    await tx.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`form-key:${cacheKey}`]);
    const found = await tx.query(
      `SELECT id, hourly_limit FROM api_keys
        WHERE workspace_id = $1 AND kind = 'form' AND livemode = $2 AND revoked_at IS NULL
        ORDER BY created_at LIMIT 1`,
      [workspaceId, livemode],
    );
    if (found.rows[0]) return { id: found.rows[0].id as string, hourlyLimit: found.rows[0].hourly_limit as number };
    const secret = crypto.randomBytes(24).toString('base64url');
    const { rows } = await tx.query(
      `INSERT INTO api_keys (workspace_id, name, prefix, key_hash, hourly_limit, livemode, kind)
       VALUES ($1, 'hosted form', $2, $3, $4, $5, 'form') RETURNING id`,
      [workspaceId, livemode ? 'li_form_live' : 'li_form_test', hashApiKey(`li_form_${secret}`), hourlyLimit, livemode],
    );
    return { id: rows[0].id as string, hourlyLimit };
  });
  // A revoked form key would fail its count; the cache is per process and small (one per workspace and mode).
  if (cache.size > 5000) cache.clear();
  cache.set(cacheKey, key);
  return key;
}

// The multi-tenant part of the bench: N workspaces with one API key each (an agency with a form
// per client), created through the same service the CLI uses, in this process (N CLI runs
// would take minutes), and leads seeded across them for the GET load.
import crypto from 'node:crypto';
import type { Pool } from '../../src/db/pool.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';

export interface Tenant {
  workspaceId: string;
  key: string;
}

/** `count` WhatsApp workspaces `<prefix>-<i>`, each with its one (default) key and no practical hourly limit. */
export async function createTenants(
  pool: Pool,
  encryptionKey: string,
  count: number,
  prefix: string,
  config?: WorkspaceConfig,
): Promise<Tenant[]> {
  const service = new WorkspaceService(pool, new SecretBox(parseEncryptionKey(encryptionKey)), 100_000_000);
  const tenants: Tenant[] = [];
  for (let i = 0; i < count; i++) {
    const created = await service.create({
      slug: `${prefix}-${i}`,
      name: `Tenant ${i}`,
      channel: 'whatsapp',
      ...(config ? { config } : {}),
    });
    if (created.kind !== 'created') throw new Error(`bench workspace ${prefix}-${i} exists already`);
    tenants.push({ workspaceId: created.workspace.id, key: created.apiKey.key });
  }
  return tenants;
}

/**
 * Seeds `perTenant` leads in each tenant's workspace (ids md5('t' || n)::uuid, phones in the seed
 * range '+1444…' after the single-key seeds, so settling keeps them) and returns (key, id) pairs.
 */
export async function seedTenantLeads(
  pool: Pool,
  tenants: readonly Tenant[],
  perTenant: number,
  firstPhone: number,
): Promise<{ key: string; id: string }[]> {
  const total = tenants.length * perTenant;
  await pool.query(
    `INSERT INTO leads (id, workspace_id, name, phone, phone_normalized,
      email, goal, consented_at, consent_ip, metadata, form_responses)
     SELECT md5('t' || n)::uuid, ($1::uuid[])[1 + n % array_length($1::uuid[], 1)], 'Seed Lead ' || n,
            '+1444' || lpad(($3::int + n)::text, 8, '0'), '+1444' || lpad(($3::int + n)::text, 8, '0'),
            'seed' || n || '@example.com',
            'Learn more', now(), '127.0.0.1', jsonb_build_object('source', 'bench', 'n', n),
            '{"How did you hear of us?":"Search"}'
       FROM generate_series(0, $2::int - 1) AS n`,
    [tenants.map((t) => t.workspaceId), total, firstPhone],
  );
  return Array.from({ length: total }, (_, n) => {
    const hex = crypto.createHash('md5').update(`t${n}`).digest('hex');
    const id = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
    return { key: tenants[n % tenants.length]!.key, id };
  });
}

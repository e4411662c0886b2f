import crypto from 'node:crypto';
import type { Pool } from '../../db/pool.ts';
import type { SecretBox } from '../../workspaces/secret-box.ts';
import * as q from '../lead-source-queries.ts';
import type { MetaSource } from './meta-intake-service.ts';
import {
  metaSourceConfigSchema,
  metaSourceSecretSchema,
  type MetaSourceConfig,
  type MetaSourceSecret,
} from './meta-source-settings.ts';

// Connecting a Page (the Form page's "Connect Meta", F5) and finding its source again: the
// secrets are one sealed object, bound to the source's id like every lead source's secret
// (src/intake/lead-source-service.ts), so a blob copied to another row fails to open.

const boundTo = (sourceId: string): string => `lead-source:${sourceId}`;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class MetaSources {
  readonly #pool: Pool;
  readonly #box: SecretBox;

  constructor(deps: { pool: Pool; secrets: SecretBox }) {
    this.#pool = deps.pool;
    this.#box = deps.secrets;
  }

  /** A new `meta` source; its URL is /api/intake/meta/<token>. Throws ZodError on bad input. */
  async connect(
    workspaceId: string,
    input: { name: string; secret: MetaSourceSecret; config?: MetaSourceConfig },
  ): Promise<q.LeadSourceRow> {
    const secret = metaSourceSecretSchema.parse(input.secret);
    const config = metaSourceConfigSchema.parse(input.config ?? {});
    const id = crypto.randomUUID();
    return q.insertLeadSource(this.#pool, {
      id,
      workspaceId,
      kind: 'meta',
      name: input.name.trim().slice(0, 100) || 'Meta Lead Ads',
      token: crypto.randomBytes(24).toString('base64url'),
      secretCiphertext: this.#box.seal(secret, boundTo(id)),
      config,
    });
  }

  /**
   * Changes the field mapping or the organic-leads flag of a live `meta` source of the workspace,
   * keeping the rest of its config (Page, forms); null when there is none. Throws ZodError on a
   * bad mapping. The next webhook or backfill maps with it (the intake reads the row each time).
   */
  async configure(
    workspaceId: string,
    id: string,
    change: Pick<MetaSourceConfig, 'fieldMapping' | 'organicToSandbox'>,
  ): Promise<q.LeadSourceRow | null> {
    const current = UUID.test(id) ? await q.findSource(this.#pool, workspaceId, id) : null;
    if (!current || current.revokedAt || current.kind !== 'meta') return null;
    const config = metaSourceConfigSchema.parse({
      ...current.config,
      ...(change.fieldMapping !== undefined ? { fieldMapping: change.fieldMapping } : {}),
      ...(change.organicToSandbox !== undefined ? { organicToSandbox: change.organicToSandbox } : {}),
    });
    return q.updateSource(this.#pool, workspaceId, id, { config });
  }

  /** The live `meta` source behind a URL token; null for any other (unknown, revoked, other kind). */
  async byToken(token: string): Promise<MetaSource | null> {
    if (!/^[A-Za-z0-9_-]{20,64}$/.test(token)) return null;
    const row = await q.findActiveSourceByToken(this.#pool, token);
    return row?.kind === 'meta' ? this.#opened(row) : null;
  }

  /** A workspace's `meta` source by id (the backfill command); null when none or revoked. */
  async byId(sourceId: string): Promise<MetaSource | null> {
    if (!UUID.test(sourceId)) return null;
    const { rows } = await this.#pool.query(
      `SELECT s.token FROM lead_sources s JOIN workspaces w ON w.id = s.workspace_id
        WHERE s.id = $1 AND s.kind = 'meta' AND s.revoked_at IS NULL AND w.deleted_at IS NULL`,
      [sourceId],
    );
    return rows[0] ? this.byToken(rows[0].token) : null;
  }

  #opened(row: q.LeadSourceRow): MetaSource | null {
    if (!row.secretCiphertext) return null;
    const secret = metaSourceSecretSchema.safeParse(this.#box.open(row.secretCiphertext, boundTo(row.id)));
    return secret.success
      ? { id: row.id, workspaceId: row.workspaceId, config: row.config, secret: secret.data, row }
      : null;
  }
}

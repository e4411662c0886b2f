import crypto from 'node:crypto';
import type { Pool } from '../db/pool.ts';
import { AppError } from '../shared/errors.ts';
import type { SecretBox } from '../workspaces/secret-box.ts';
import type { FieldMapping } from './field-mapping.ts';
import { sourceConfigOf, sourceConfigSchema } from './lead-source-config.ts';
import * as q from './lead-source-queries.ts';

// A workspace's connected sources for the Form page (F5) and the CLI: create a generic webhook or
// a Google lead form source, list them with their status, edit the mapping, rotate the secret,
// revoke. The URL's token is random and public (it names the source); the secret proves a
// delivery: HMAC or bearer for a generic webhook, the `google_key` Google puts in the body. The
// secret is sealed like the providers' credentials, bound to the source's id, and shown only
// when it is made (create, rotate).

export type ConnectableKind = 'webhook' | 'google';

/** `waiting`: no lead yet; `failing`: its last delivery failed (after its last lead). */
export type SourceStatus = 'waiting' | 'active' | 'failing' | 'revoked';

export interface LeadSourceView {
  id: string;
  kind: q.LeadSourceKind;
  name: string;
  /** Where the source posts: the generic webhook's URL, the webhook URL Google asks for. */
  url: string;
  status: SourceStatus;
  mapping: FieldMapping;
  sandbox: boolean;
  /** lead_sources.config as stored: a `meta` source's own settings are read from it (meta-source-settings.ts). */
  config: Record<string, unknown>;
  createdAt: Date;
  revokedAt: Date | null;
  lastLeadAt: Date | null;
  lastError: string | null;
  lastErrorAt: Date | null;
}

export interface CreateSourceInput {
  kind: ConnectableKind;
  name: string;
  mapping?: FieldMapping;
  sandbox?: boolean;
  /** Google: the key the operator typed into Google Ads, if they chose one; generated otherwise. */
  secret?: string;
}

/** The URL part of an intake route: /api/intake/<kind>/<token>. */
export const SOURCE_TOKEN = /^[A-Za-z0-9_-]{20,64}$/;
const SECRET_PREFIX = 'lis_';

export class LeadSourceService {
  readonly #pool: Pool;
  readonly #box: SecretBox;
  readonly #baseUrl: string;

  constructor(deps: { pool: Pool; secrets: SecretBox; publicBaseUrl: string }) {
    this.#pool = deps.pool;
    this.#box = deps.secrets;
    this.#baseUrl = deps.publicBaseUrl.replace(/\/+$/, '');
  }

  /** Creates the source; its secret is in the answer and nowhere else readable. */
  async create(workspaceId: string, input: CreateSourceInput): Promise<{ source: LeadSourceView; secret: string }> {
    const secret = input.secret?.trim() || newSecret();
    if (secret.length < 8 || secret.length > 200) {
      throw new AppError('validation_failed', {
        issues: [{ path: ['secret'], message: 'The key must be 8 to 200 characters.' }],
      });
    }
    const config = sourceConfigSchema.parse({ mapping: input.mapping ?? {}, sandbox: input.sandbox ?? false });
    const id = crypto.randomUUID();
    const row = await q.insertLeadSource(this.#pool, {
      id,
      workspaceId,
      kind: input.kind,
      name: sourceName(input.name),
      token: crypto.randomBytes(24).toString('base64url'),
      secretCiphertext: this.#box.seal(secret, boundTo(id)),
      config,
    });
    return { source: this.view(row), secret };
  }

  async list(workspaceId: string): Promise<LeadSourceView[]> {
    return (await q.listSources(this.#pool, workspaceId)).map((r) => this.view(r));
  }

  async get(workspaceId: string, id: string): Promise<LeadSourceView | null> {
    const row = UUID.test(id) ? await q.findSource(this.#pool, workspaceId, id) : null;
    return row ? this.view(row) : null;
  }

  /** Edits name, mapping or sandbox flag of a source not revoked; null when there is none. */
  async update(
    workspaceId: string,
    id: string,
    change: { name?: string; mapping?: FieldMapping; sandbox?: boolean },
  ): Promise<LeadSourceView | null> {
    const current = UUID.test(id) ? await q.findSource(this.#pool, workspaceId, id) : null;
    if (!current || current.revokedAt) return null;
    const was = sourceConfigOf(current.config);
    const config =
      change.mapping !== undefined || change.sandbox !== undefined
        ? {
            ...current.config,
            ...sourceConfigSchema.parse({
              mapping: change.mapping ?? was.mapping,
              sandbox: change.sandbox ?? was.sandbox,
            }),
          }
        : undefined;
    const row = await q.updateSource(this.#pool, workspaceId, id, {
      ...(change.name !== undefined ? { name: sourceName(change.name) } : {}),
      ...(config ? { config } : {}),
    });
    return row ? this.view(row) : null;
  }

  /** A new secret (the old one stops working at once); null when there is no such live source. */
  async rotateSecret(workspaceId: string, id: string, chosen?: string): Promise<{ secret: string } | null> {
    const secret = chosen?.trim() || newSecret();
    if (!UUID.test(id)) return null;
    const row = await q.updateSource(this.#pool, workspaceId, id, {
      secretCiphertext: this.#box.seal(secret, boundTo(id)),
    });
    return row ? { secret } : null;
  }

  async revoke(workspaceId: string, id: string): Promise<boolean> {
    return UUID.test(id) && q.revokeSource(this.#pool, workspaceId, id);
  }

  /** The live source behind a URL token, or null (unknown, malformed, revoked, workspace deleted). */
  async findByToken(token: string): Promise<q.LeadSourceRow | null> {
    return SOURCE_TOKEN.test(token) ? q.findActiveSourceByToken(this.#pool, token) : null;
  }

  /** The source's secret in clear, for checking a delivery. */
  secretOf(source: q.LeadSourceRow): string | null {
    if (!source.secretCiphertext) return null;
    const value = this.#box.open(source.secretCiphertext, boundTo(source.id));
    return typeof value === 'string' ? value : null;
  }

  urlOf(source: Pick<q.LeadSourceRow, 'kind' | 'token'>): string {
    return `${this.#baseUrl}/api/intake/${source.kind}/${source.token}`;
  }

  view(r: q.LeadSourceRow): LeadSourceView {
    const config = sourceConfigOf(r.config);
    return {
      id: r.id,
      kind: r.kind,
      name: r.name,
      url: this.urlOf(r),
      status: statusOf(r),
      mapping: config.mapping,
      sandbox: config.sandbox,
      config: r.config,
      createdAt: r.createdAt,
      revokedAt: r.revokedAt,
      lastLeadAt: r.lastLeadAt,
      lastError: r.lastError,
      lastErrorAt: r.lastErrorAt,
    };
  }
}

export function statusOf(r: Pick<q.LeadSourceRow, 'revokedAt' | 'lastLeadAt' | 'lastErrorAt'>): SourceStatus {
  if (r.revokedAt) return 'revoked';
  if (r.lastErrorAt && (!r.lastLeadAt || r.lastErrorAt > r.lastLeadAt)) return 'failing';
  return r.lastLeadAt ? 'active' : 'waiting';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function newSecret(): string {
  return SECRET_PREFIX + crypto.randomBytes(24).toString('base64url');
}

// Sealed to the source's own id: a blob copied to another source's row fails to open.
function boundTo(sourceId: string): string {
  return `lead-source:${sourceId}`;
}

function sourceName(name: string): string {
  const trimmed = name.trim().slice(0, 100);
  if (trimmed === '') {
    throw new AppError('validation_failed', { issues: [{ path: ['name'], message: 'Name must not be empty.' }] });
  }
  return trimmed;
}

import { agentFromColumn, type AgentConfig } from './agent-config.ts';
import type { Queryable } from '../db/pool.ts';

export type Channel = 'voice' | 'whatsapp';

/** A workspace as stored: settings still sealed (see workspace-service.ts to open them). */
export interface WorkspaceRow {
  id: string;
  slug: string;
  name: string;
  channel: Channel;
  settingsCiphertext: Buffer | null;
  /** The agent section of the config (persona, criteria, time zone, questions); null until configured. */
  agent: AgentConfig | null;
  createdAt: Date;
  deletedAt: Date | null;
}

export function workspaceFromRow(r: Record<string, any>): WorkspaceRow {
  return {
    id: r.id,
    slug: r.slug,
    name: r.name,
    channel: r.channel,
    settingsCiphertext: r.settings_ciphertext,
    agent: agentFromColumn(r.agent),
    createdAt: r.created_at,
    deletedAt: r.deleted_at,
  };
}

export async function insertWorkspace(
  db: Queryable,
  w: {
    id: string;
    slug: string;
    name: string;
    channel: Channel;
    settingsCiphertext: Buffer | null;
    agent: AgentConfig | null;
  },
): Promise<WorkspaceRow> {
  const { rows } = await db.query(
    `INSERT INTO workspaces (id, slug, name, channel,
      settings_ciphertext, agent) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *`,
    [w.id, w.slug, w.name, w.channel, w.settingsCiphertext, JSON.stringify(w.agent ?? {})],
  );
  return workspaceFromRow(rows[0]);
}

export async function findLiveWorkspaceBySlug(db: Queryable, slug: string): Promise<WorkspaceRow | null> {
  const { rows } = await db.query('SELECT * FROM workspaces WHERE slug = $1 AND deleted_at IS NULL', [slug]);
  return rows[0] ? workspaceFromRow(rows[0]) : null;
}

/** The live workspaces of these slugs, in no particular order (a slug without one is left out). */
export async function findLiveWorkspacesBySlugs(db: Queryable, slugs: readonly string[]): Promise<WorkspaceRow[]> {
  const { rows } = await db.query({
    name: 'workspaces-by-slugs',
    text: 'SELECT * FROM workspaces WHERE slug = ANY($1::text[]) AND deleted_at IS NULL',
    values: [slugs],
  });
  return rows.map(workspaceFromRow);
}

/** The live workspace, locked until the transaction ends (settings are read-modify-written). */
export async function lockLiveWorkspaceBySlug(db: Queryable, slug: string): Promise<WorkspaceRow | null> {
  const { rows } = await db.query('SELECT * FROM workspaces WHERE slug = $1 AND deleted_at IS NULL FOR UPDATE', [slug]);
  return rows[0] ? workspaceFromRow(rows[0]) : null;
}

export async function listLiveWorkspaces(db: Queryable): Promise<WorkspaceRow[]> {
  const { rows } = await db.query('SELECT * FROM workspaces WHERE deleted_at IS NULL ORDER BY created_at, slug');
  return rows.map(workspaceFromRow);
}

export async function updateWorkspaceSettings(db: Queryable, id: string, ciphertext: Buffer): Promise<void> {
  await db.query('UPDATE workspaces SET settings_ciphertext = $2 WHERE id = $1', [id, ciphertext]);
}

export async function updateWorkspaceAgent(db: Queryable, id: string, agent: AgentConfig): Promise<void> {
  await db.query('UPDATE workspaces SET agent = $2 WHERE id = $1', [id, JSON.stringify(agent)]);
}

export async function softDeleteWorkspace(db: Queryable, id: string): Promise<void> {
  await db.query('UPDATE workspaces SET deleted_at = now() WHERE id = $1 AND deleted_at IS NULL', [id]);
}

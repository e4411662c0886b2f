import crypto from 'node:crypto';
import { withQuestionIds, type AgentConfig } from './agent-config.ts';
import { generateApiKey } from './api-key.ts';
import { insertApiKey, lockAndCountActiveKeys } from './api-key-queries.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { StatementBatcher } from '../db/statement-batcher.ts';
import { AppError } from '../shared/errors.ts';
import type { SecretBox } from './secret-box.ts';
import {
  mergeSettings,
  splitWorkspaceConfig,
  type WorkspaceConfig,
  type WorkspaceSettings,
} from './workspace-config.ts';
import * as q from './workspace-queries.ts';

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
}

/** The installation's caps on a workspace's API keys (MAX_KEY_HOURLY_LIMIT, MAX_API_KEYS_PER_WORKSPACE). */
export interface KeyCaps {
  maxHourlyLimit: number;
  maxKeys: number;
}
export const keyHourlyLimitText = (max: number) =>
  `The hourly limit of a key can be at most ${max} on this installation.`;
export const keyCountText = (max: number) =>
  `This workspace has ${max} active API keys, the most this installation allows: revoke one before creating another.`;

export type CreateWorkspaceResult =
  | { kind: 'created'; workspace: q.WorkspaceRow; apiKey: CreatedKey; sandboxKey: CreatedKey }
  | { kind: 'slug_taken' };

/** Workspace administration shared by the CLI and (later) the admin dashboard. */
/** Opened settings kept per process (oldest dropped first): one per workspace in use. */
const OPENED_SETTINGS_CACHED = 2000;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

export class WorkspaceService {
  readonly #pool: Pool;
  readonly #box: SecretBox;
  readonly #opened = new Map<string, WorkspaceSettings>();
  readonly #defaultHourlyLimit: number;
  readonly #bySlug: StatementBatcher<string, q.WorkspaceRow | null>;

  constructor(pool: Pool, box: SecretBox, defaultHourlyLimit: number) {
    this.#pool = pool;
    this.#box = box;
    this.#defaultHourlyLimit = defaultHourlyLimit;
    // Every provider callback starts by finding its workspace: the lookups of one moment are one
    // statement (src/db/statement-batcher.ts).
    this.#bySlug = new StatementBatcher({
      run: async (slugs) => {
        const found = new Map((await q.findLiveWorkspacesBySlugs(pool, [...new Set(slugs)])).map((w) => [w.slug, w]));
        return slugs.map((slug) => found.get(slug) ?? null);
      },
    });
  }

  /** Creates the workspace, its first live API key and its first sandbox key in one transaction. */
  async create(input: {
    slug: string;
    name: string;
    channel: q.Channel;
    config?: WorkspaceConfig;
  }): Promise<CreateWorkspaceResult> {
    const id = crypto.randomUUID();
    const { settings, agent } = splitWorkspaceConfig(input.config ?? {});
    const sealed = Object.keys(settings).length > 0 ? this.#box.seal(settings, id) : null;
    const newKey = generateApiKey();
    const newSandboxKey = generateApiKey({ livemode: false });
    try {
      return await withTransaction(this.#pool, async (tx) => {
        const workspace = await q.insertWorkspace(tx, {
          id,
          slug: input.slug,
          name: input.name,
          channel: input.channel,
          settingsCiphertext: sealed,
          agent: agent ? withQuestionIds(agent, null) : null,
        });
        const key = await insertApiKey(tx, {
          workspaceId: id,
          name: 'default',
          prefix: newKey.prefix,
          hash: newKey.hash,
          hourlyLimit: this.#defaultHourlyLimit,
        });
        const sandbox = await insertApiKey(tx, {
          workspaceId: id,
          name: 'sandbox',
          prefix: newSandboxKey.prefix,
          hash: newSandboxKey.hash,
          hourlyLimit: this.#defaultHourlyLimit,
          livemode: false,
        });
        return {
          kind: 'created' as const,
          workspace,
          apiKey: { id: key.id, key: newKey.key, prefix: newKey.prefix },
          sandboxKey: { id: sandbox.id, key: newSandboxKey.key, prefix: newSandboxKey.prefix },
        };
      });
    } catch (err) {
      if ((err as { code?: string }).code === '23505') return { kind: 'slug_taken' };
      throw err;
    }
  }

  /** The live workspace of this slug (null: none, or deleted). */
  async findBySlug(slug: string): Promise<q.WorkspaceRow | null> {
    return this.#bySlug.submit(slug);
  }

  async list(): Promise<q.WorkspaceRow[]> {
    return q.listLiveWorkspaces(this.#pool);
  }

  settingsOf(workspace: q.WorkspaceRow): WorkspaceSettings {
    const blob = workspace.settingsCiphertext;
    if (!blob) return {};
    // Every turn and every provider callback reads the settings, and opening them was ~6 % of a
    // burst's CPU. Cached by the sealed blob itself (its random IV and tag), so a changed row is
    // a new entry: never stale, also when another process changed it. Frozen: callers share it.
    const cacheKey = `${workspace.id}:${blob.subarray(0, 29).toString('base64')}`;
    const cached = this.#opened.get(cacheKey);
    if (cached) return cached;
    const settings = deepFreeze(this.#box.open(blob, workspace.id) as WorkspaceSettings);
    if (this.#opened.size >= OPENED_SETTINGS_CACHED) this.#opened.delete(this.#opened.keys().next().value!);
    this.#opened.set(cacheKey, settings);
    return settings;
  }

  /**
   * Each section given replaces the stored one: secret sections inside the encrypted settings,
   * the agent section in its own column. Returns the updated workspace; null when unknown.
   */
  async update(slug: string, config: WorkspaceConfig): Promise<q.WorkspaceRow | null> {
    const { settings, agent } = splitWorkspaceConfig(config);
    return withTransaction(this.#pool, async (tx) => {
      let workspace = await q.lockLiveWorkspaceBySlug(tx, slug);
      if (!workspace) return null;
      if (Object.keys(settings).length > 0) {
        const sealed = this.#box.seal(mergeSettings(this.settingsOf(workspace), settings), workspace.id);
        await q.updateWorkspaceSettings(tx, workspace.id, sealed);
        workspace = { ...workspace, settingsCiphertext: sealed };
      }
      if (agent) {
        const agentConfig = withQuestionIds(agent, workspace.agent);
        await q.updateWorkspaceAgent(tx, workspace.id, agentConfig);
        workspace = { ...workspace, agent: agentConfig };
      }
      return workspace;
    });
  }

  /**
   * A read-modify-write of one workspace under its row lock (the dashboard's settings pages):
   * `change` sees the stored workspace and its opened settings and returns the new agent section
   * and/or whole settings to store, or throws to change nothing. Null when the workspace is unknown.
   */
  async modify<T>(
    slug: string,
    change: (
      workspace: q.WorkspaceRow,
      settings: WorkspaceSettings,
    ) => { agent?: AgentConfig; settings?: WorkspaceSettings; result: T },
  ): Promise<{ workspace: q.WorkspaceRow; result: T } | null> {
    return withTransaction(this.#pool, async (tx) => {
      let workspace = await q.lockLiveWorkspaceBySlug(tx, slug);
      if (!workspace) return null;
      const { agent, settings, result } = change(workspace, this.settingsOf(workspace));
      if (settings) {
        const sealed = this.#box.seal(settings, workspace.id);
        await q.updateWorkspaceSettings(tx, workspace.id, sealed);
        workspace = { ...workspace, settingsCiphertext: sealed };
      }
      if (agent) {
        await q.updateWorkspaceAgent(tx, workspace.id, agent);
        workspace = { ...workspace, agent };
      }
      return { workspace, result };
    });
  }

  /** Soft-deletes: its keys then answer 404 `Workspace not found.` */
  async delete(slug: string): Promise<boolean> {
    const workspace = await q.findLiveWorkspaceBySlug(this.#pool, slug);
    if (!workspace) return false;
    await q.softDeleteWorkspace(this.#pool, workspace.id);
    return true;
  }

  /**
   * Another key of the workspace; `sandbox: true` gives a `li_test_…` key (docs/SANDBOX.md).
   * `caps`: the installation's per-workspace limits (the dashboard and the CLI pass them; keys
   * made before a limit was lowered keep working as they are). Throws `validation_failed` for an
   * hourly limit over the cap and `limit_reached` when the workspace has as many active keys as allowed.
   */
  async createKey(
    slug: string,
    opts: { name?: string; hourlyLimit?: number; sandbox?: boolean },
    caps?: KeyCaps,
  ): Promise<CreatedKey | null> {
    const hourlyLimit = opts.hourlyLimit ?? Math.min(this.#defaultHourlyLimit, caps?.maxHourlyLimit ?? Infinity);
    if (caps && hourlyLimit > caps.maxHourlyLimit) {
      const issue = { path: ['hourlyLimit'], message: keyHourlyLimitText(caps.maxHourlyLimit) };
      throw new AppError('validation_failed', { issues: [issue] });
    }
    const workspace = await q.findLiveWorkspaceBySlug(this.#pool, slug);
    if (!workspace) return null;
    const newKey = generateApiKey({ livemode: !opts.sandbox });
    // Counted under the workspace's lock: concurrent creations cannot pass the cap together.
    const { id } = await withTransaction(this.#pool, async (tx) => {
      if (caps && (await lockAndCountActiveKeys(tx, workspace.id)) >= caps.maxKeys) {
        throw new AppError('limit_reached', { message: keyCountText(caps.maxKeys) });
      }
      return insertApiKey(tx, {
        workspaceId: workspace.id,
        name: opts.name ?? (opts.sandbox ? 'sandbox' : 'default'),
        prefix: newKey.prefix,
        hash: newKey.hash,
        hourlyLimit,
        livemode: !opts.sandbox,
      });
    });
    return { id, key: newKey.key, prefix: newKey.prefix };
  }
}

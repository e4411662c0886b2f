import type { PgBoss } from 'pg-boss';
import type { Queryable } from '../../db/pool.ts';
import { listDeadTurns, retryDeadTurns, type DeadTurn } from '../../jobs/dead-letters.ts';
import { leadsOfWorkspace } from './logs-queries.ts';

// The dashboard's dead letters: the same list and retry as `leadintake jobs dead|retry`
// (src/jobs/dead-letters.ts), scoped to one workspace. The dead-letter queue is shared by every
// workspace, so each turn is kept only when its lead belongs to the operator's workspace: another
// workspace's turn is neither listed nor retried (it is "not found"). A turn whose lead was erased
// belongs to nobody's dashboard any more; `leadintake jobs` still lists it.

export interface WorkspaceDeadTurn extends DeadTurn {
  leadId: string;
  leadName: string;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export class DeadLetterAdmin {
  readonly #db: Queryable;
  readonly #boss: () => PgBoss;

  /** `boss` is read when needed: the app's one handle, held by the outbox relay. */
  constructor(db: Queryable, boss: () => PgBoss) {
    this.#db = db;
    this.#boss = boss;
  }

  /** The workspace's dead-lettered turns, newest first. */
  async list(workspaceId: string): Promise<WorkspaceDeadTurn[]> {
    const dead = await listDeadTurns(this.#boss());
    const leadIds = [...new Set(dead.map((d) => d.leadId).filter((id): id is string => id !== null && UUID.test(id)))];
    const names = await leadsOfWorkspace(this.#db, workspaceId, leadIds);
    return dead
      .filter((d): d is DeadTurn & { leadId: string } => d.leadId !== null && names.has(d.leadId))
      .map((d) => ({ ...d, leadName: names.get(d.leadId)! }))
      .reverse();
  }

  /** Sends one turn (`id`) or all of the workspace's back to the queue; how many moved. */
  async retry(workspaceId: string, id: string | 'all'): Promise<number> {
    const mine = (await this.list(workspaceId)).map((d) => d.id);
    const ids = id === 'all' ? mine : mine.filter((m) => m === id.toLowerCase());
    return ids.length === 0 ? 0 : retryDeadTurns(this.#boss(), ids);
  }
}

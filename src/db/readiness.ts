import type { Queryable } from './pool.ts';

// A load balancer may poll every process every second or faster; one probe answers all polls
// of this window, and polls that arrive while a probe runs wait for that probe.
const CACHE_MS = 1_000;
// Longer than a healthy `SELECT 1` ever takes, even queued behind a busy pool, and short enough
// for a balancer's own timeout (commonly 2–5 s) to see a 503 rather than no answer.
const TIMEOUT_MS = 2_000;

/** `unreachable`: no answer in time; `schema_behind`: a migration this process knows is not applied. */
export type ReadinessState = 'ready' | 'unreachable' | 'schema_behind';

export interface ReadinessOptions {
  now?: () => number;
  /**
   * The migration versions this process's code needs (readMigrations()); each must be in
   * schema_migrations. A schema ahead of the process (a newer release migrated it during a
   * rolling upgrade) is ready: migrations are forward-only and keep the previous release working.
   * Unset: only whether the database answers.
   */
  schemaVersions?: readonly number[];
}

/**
 * Whether the database answers, on the API's own pool, so "ready" also means this process can
 * get a connection, and whether its schema is current (with MIGRATE_ON_START=false the process
 * starts before `leadintake migrate` has run). No answer within the timeout counts as unreachable
 * (a host that drops packets never refuses). The result is kept for a moment, so polls cost at
 * most one query per window whatever their rate, and a dead database cannot make them pile up.
 */
export class DatabaseReadiness {
  readonly #db: Queryable;
  readonly #now: () => number;
  readonly #versions: number[] | undefined;
  #last: { state: ReadinessState; at: number } | undefined;
  #probe: Promise<ReadinessState> | undefined;

  constructor(db: Queryable, opts: ReadinessOptions = {}) {
    this.#db = db;
    this.#now = opts.now ?? Date.now;
    this.#versions = opts.schemaVersions ? [...opts.schemaVersions] : undefined;
  }

  async ready(): Promise<boolean> {
    return (await this.state()) === 'ready';
  }

  state(): Promise<ReadinessState> {
    if (this.#last && this.#now() - this.#last.at < CACHE_MS) return Promise.resolve(this.#last.state);
    this.#probe ??= this.#run().finally(() => (this.#probe = undefined));
    return this.#probe;
  }

  async #run(): Promise<ReadinessState> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<ReadinessState>((resolve) => (timer = setTimeout(resolve, TIMEOUT_MS, 'unreachable')));
    const state = await Promise.race([this.#query(), timeout]);
    clearTimeout(timer);
    this.#last = { state, at: this.#now() };
    return state;
  }

  async #query(): Promise<ReadinessState> {
    const versions = this.#versions;
    try {
      if (!versions) {
        await this.#db.query('SELECT 1');
        return 'ready';
      }
      const { rows } = await this.#db.query(
        'SELECT count(*)::int AS applied FROM schema_migrations WHERE version = ANY($1::int[])',
        [versions],
      );
      return rows[0].applied === versions.length ? 'ready' : 'schema_behind';
    } catch (err) {
      // 42P01: no schema_migrations yet, a database never migrated (MIGRATE_ON_START=false).
      return (err as { code?: string }).code === '42P01' ? 'schema_behind' : 'unreachable';
    }
  }
}

import type { Queryable } from './pool.ts';

// A load balancer may poll every process every second or faster; one probe answers all polls
// of this window, and polls that arrive while a probe runs wait for that probe.
const CACHE_MS = 1_000;
// Longer than a healthy `SELECT 1` ever takes, even queued behind a busy pool, and short enough
// for a balancer's own timeout (commonly 2–5 s) to see a 503 rather than no answer.
const TIMEOUT_MS = 2_000;

/**
 * Whether the database answers: `SELECT 1` on the API's own pool, so "ready" also means this
 * process can get a connection. No answer within the timeout counts as unreachable (a host that
 * drops packets never refuses). The result is kept for a moment, so polls cost at most one query
 * per window whatever their rate, and a dead database cannot make them pile up.
 */
export class DatabaseReadiness {
  readonly #db: Queryable;
  readonly #now: () => number;
  #last: { ok: boolean; at: number } | undefined;
  #probe: Promise<boolean> | undefined;

  constructor(db: Queryable, now: () => number = Date.now) {
    this.#db = db;
    this.#now = now;
  }

  ready(): Promise<boolean> {
    if (this.#last && this.#now() - this.#last.at < CACHE_MS) return Promise.resolve(this.#last.ok);
    this.#probe ??= this.#run().finally(() => (this.#probe = undefined));
    return this.#probe;
  }

  async #run(): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<boolean>((resolve) => (timer = setTimeout(resolve, TIMEOUT_MS, false)));
    const query = this.#db.query('SELECT 1').then(
      () => true,
      () => false,
    );
    const ok = await Promise.race([query, timeout]);
    clearTimeout(timer);
    this.#last = { ok, at: this.#now() };
    return ok;
  }
}

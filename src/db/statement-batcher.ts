// Many callers' small statements as one (docs/decisions/0001-batch-the-public-api.md,
// docs/decisions/0004-record-sends-by-set.md). A round trip to PostgreSQL costs more CPU, in our
// process and in PostgreSQL's, than the statement's own work, and each one wakes a backend; a
// burst of leads once made dozens of them per lead. What callers submit while the previous
// statement of the same kind runs (or in the same pass of the event loop) is therefore done by
// the next statement together: one round
// trip and one commit for all of them. The public API counts its requests
// (src/auth/rate-limiter.ts) and writes and reads its leads (src/leads/lead-batch-statement.ts)
// the same way, whatever their keys and workspaces.

export interface StatementBatcherOptions<In, Out> {
  /**
   * Runs one statement for `items` and returns one output per item, in their order. The statement
   * must be atomic (one statement, or a function): when it fails it changed nothing, so the items
   * can be tried again in smaller batches.
   */
  run(items: In[]): Promise<Out[]>;
  /** At most this many items per statement. */
  maxBatch?: number;
  /**
   * At most this many statements of this kind in flight (default 1): with two, a statement that
   * keeps its PostgreSQL backend busy until its commit (a batch of new leads) does not leave the
   * second core idle while the items behind it wait.
   */
  maxInFlight?: number;
}

interface Waiting<In, Out> {
  item: In;
  resolve(out: Out): void;
  reject(err: unknown): void;
}

export class StatementBatcher<In, Out> {
  readonly #run: (items: In[]) => Promise<Out[]>;
  readonly #max: number;
  readonly #maxInFlight: number;
  #waiting: Waiting<In, Out>[] = [];
  #inFlight = 0;
  /** A statement is being gathered: it starts once the event loop's current pass has run. */
  #gathering = false;

  constructor(opts: StatementBatcherOptions<In, Out>) {
    this.#run = opts.run;
    this.#max = opts.maxBatch ?? 500;
    this.#maxInFlight = opts.maxInFlight ?? 1;
  }

  /** Resolves with the item's output once the statement that carried it has committed. */
  submit(item: In): Promise<Out> {
    return new Promise((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#pump();
    });
  }

  /** Items waiting for the next statement (for tests and the metrics). */
  get waiting(): number {
    return this.#waiting.length;
  }

  // While `maxInFlight` statements run, what arrives makes the next one. A statement waits for
  // the event loop's current pass first, so what arrived in the same pass joins it: under load
  // that doubled the public API's batches at 64 connections
  // (docs/decisions/0001-batch-the-public-api.md).
  #pump(): void {
    if (this.#gathering || this.#inFlight >= this.#maxInFlight || this.#waiting.length === 0) return;
    this.#gathering = true;
    setImmediate(() => {
      this.#gathering = false;
      if (this.#inFlight >= this.#maxInFlight || this.#waiting.length === 0) return;
      this.#inFlight += 1;
      void this.#settle(this.#waiting.splice(0, this.#max)).finally(() => {
        this.#inFlight -= 1;
        this.#pump();
      });
      this.#pump();
    });
  }

  // One item's failure (data the database refuses, a deadlock it broke) must not fail the others:
  // a failed batch is split in halves until the failing item runs alone, and only its own failure
  // is its answer. A failure no item can have caused (the connection lost, the server shutting
  // down) fails the whole batch at once: split, it would only fail again, once per item.
  async #settle(batch: Waiting<In, Out>[]): Promise<void> {
    let outputs: Out[];
    try {
      outputs = await this.#run(batch.map((w) => w.item));
      if (outputs.length !== batch.length)
        throw new Error(`statement batch: ${outputs.length} outputs for ${batch.length} items`);
    } catch (err) {
      if (batch.length === 1 || !itemMayBeTheCause(err)) {
        for (const w of batch) w.reject(err);
        return;
      }
      const half = Math.ceil(batch.length / 2);
      await this.#settle(batch.slice(0, half));
      await this.#settle(batch.slice(half));
      return;
    }
    batch.forEach((w, i) => w.resolve(outputs[i]!));
  }
}

/**
 * SQLSTATE classes an item's own data can cause: 21 cardinality, 22 data exception, 23 integrity
 * constraint, 40 transaction rollback (a deadlock or serialization failure among some items'
 * locks), P0 a PL/pgSQL raise.
 */
function itemMayBeTheCause(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && ['21', '22', '23', '40', 'P0'].includes(code.slice(0, 2));
}

import v8 from 'node:v8';
import vm from 'node:vm';
import type { Logger } from '../shared/logger.ts';
import type { PressureReport } from './overload-guard.ts';

// Why this exists (docs/PERFORMANCE.md, "Overload"): under a flood V8 grows its heap and keeps the
// pages it freed in a pool for reuse. V8 gives them back only from its own memory reducer, which
// waits for the process to allocate little — and after a flood it does not: the worker drains the
// backlog of turns the flood created for minutes. RSS then stayed at ~190 MB long after the load
// (measured: a pool of 40–45 MB, a heap committed 59 MB with 33 MB in use). One memory-reducing
// collection, once the HTTP side is quiet again, took it from 199 to 140 MB.

export interface MemoryReducerOptions {
  /** The process's resident memory now, in bytes. */
  rss: () => number;
  /** Whether a pause now would hold up few requests (nothing shed, hardly anything in flight). */
  quiet: () => boolean;
  /** The memory-reducing collection (a pause of some 50–150 ms on a heap of this size). */
  collect: () => void;
  /** Growth of RSS over the last low point that is worth a collection. */
  growthBytes: number;
  /** At most one collection per this many milliseconds. */
  minIntervalMs: number;
  now?: () => number;
}

/**
 * Decides, on each `tick` (a timer in `serve`), whether to run the collection: RSS has grown by
 * `growthBytes` over its lowest point since the last collection, the process is quiet, and the
 * last collection is long enough ago. A busy process is never paused by it, and a process whose
 * memory is steady is never collected twice for the same growth.
 */
export class MemoryReducer {
  readonly #o: MemoryReducerOptions;
  readonly #now: () => number;
  #low: number;
  #last = Number.NEGATIVE_INFINITY;

  constructor(opts: MemoryReducerOptions) {
    this.#o = opts;
    this.#now = opts.now ?? Date.now;
    this.#low = opts.rss();
  }

  /** True when it collected. */
  tick(): boolean {
    const rss = this.#o.rss();
    this.#low = Math.min(this.#low, rss);
    if (rss - this.#low < this.#o.growthBytes) return false;
    if (this.#now() - this.#last < this.#o.minIntervalMs || !this.#o.quiet()) return false;
    this.#o.collect();
    this.#last = this.#now();
    this.#low = this.#o.rss();
    return true;
  }
}

/**
 * V8's "last resort" collection: full, compacting, several passes, and it returns the pooled pages
 * to the system (an ordinary major collection keeps them). Reached through the gc function that
 * `--expose-gc` installs, here in a context of its own so that no other code sees a global `gc`
 * and no flag has to be passed on the command line (`npm start`, the bin and a container all get it).
 */
export function memoryReducingCollection(): () => void {
  v8.setFlagsFromString('--expose-gc');
  const gc = vm.runInNewContext('gc') as (options: { type: 'major'; execution: 'sync'; flavor: 'last-resort' }) => void;
  return () => gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
}

/**
 * A pause now holds up few requests: nothing is shed or waiting, at most two are in flight, and
 * at most `calmArrivals` public-API requests arrived since the last look. The last keeps a flood's
 * first moment (thousands of connections opening, none of their requests read yet, so nothing in
 * flight) from looking quiet: a collection then made the first wave wait longer.
 */
export function quietEnough(p: PressureReport, arrivedSinceLastLook = 0, calmArrivals = 25): boolean {
  return !p.underPressure && p.waiting === 0 && p.inFlight <= 2 && arrivedSinceLastLook <= calmArrivals;
}

/**
 * `serve`'s reducer: looks every 5 s, collects after 8 MB of growth, at most every 10 s, and logs
 * what it gave back. Returns the stop function. Why so often: after a flood the worker drains the
 * flood's backlog of turns for minutes, and RSS grew back by about 1 MB a second after each
 * collection (measured: 138 → 160 MB in 20 s), so a collection every 20 s left it over 150 MB at
 * times; every 10 s keeps it within 8–12 MB of the collected size, at one pause of 50–150 ms per
 * 10 s while the public API is quiet.
 */
export function startMemoryReducer(pressure: () => PressureReport, log: Logger): () => void {
  const collect = memoryReducingCollection();
  let lastArrived = pressure().arrived;
  let arrivedSinceLastLook = 0;
  const reducer = new MemoryReducer({
    rss: () => process.memoryUsage.rss(),
    quiet: () => quietEnough(pressure(), arrivedSinceLastLook),
    collect: () => {
      const before = process.memoryUsage.rss();
      collect();
      log.info({ rssMbBefore: Math.round(before / 1e6), rssMbAfter: Math.round(process.memoryUsage.rss() / 1e6) }, 'memory given back after a load');
    },
    growthBytes: 8 * 1024 * 1024,
    minIntervalMs: 10_000,
  });
  const timer = setInterval(() => {
    const arrived = pressure().arrived;
    arrivedSinceLastLook = arrived - lastArrived;
    lastArrived = arrived;
    reducer.tick();
  }, 5_000);
  timer.unref();
  return () => clearInterval(timer);
}

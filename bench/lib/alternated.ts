// The multi-tenant ratio, alternated: on a machine whose speed drifts from one run to the next
// (docs/PERFORMANCE.md, "Reading the figures": identical code gave 0.67–1.13 in 10-s runs),
// two 10-s runs one after the other compare the machine's moments as much as the two loads.
// Here the two loads take turns in short runs, the order swapped every pair, so a drift hits
// both alike; the ratio is of the summed rates.
import type { LoadResult } from './load.ts';

export interface AlternatedPair {
  one: number;
  multi: number;
}

export interface Alternated {
  pairs: AlternatedPair[];
  seconds: number;
  /** Σ multi-key req/s / Σ one-key req/s. */
  ratio: number;
  /** Non-2xx answers and socket errors over every run. */
  bad: number;
}

export async function alternate(
  pairs: number,
  seconds: number,
  one: (seconds: number) => Promise<LoadResult>,
  multi: (seconds: number) => Promise<LoadResult>,
): Promise<Alternated> {
  const out: AlternatedPair[] = [];
  let bad = 0;
  for (let i = 0; i < pairs; i++) {
    const [first, second] = i % 2 === 0 ? [one, multi] : [multi, one];
    const a = await first(seconds);
    const b = await second(seconds);
    const [o, m] = i % 2 === 0 ? [a, b] : [b, a];
    out.push({ one: o.rps, multi: m.rps });
    bad += a.non2xx + a.errors + b.non2xx + b.errors;
  }
  const sum = (k: keyof AlternatedPair) => out.reduce((n, p) => n + p[k], 0);
  return { pairs: out, seconds, ratio: sum('multi') / sum('one'), bad };
}

/** "0.91 (6 pairs of 3 s; pairs 0.84–0.99)". */
export function describeAlternated(a: Alternated): string {
  const r = a.pairs.map((p) => p.multi / p.one);
  const lo = Math.min(...r).toFixed(2);
  const hi = Math.max(...r).toFixed(2);
  return `${a.ratio.toFixed(2)} (${a.pairs.length} pairs of ${a.seconds} s; pairs ${lo}–${hi})`;
}

// HTTP load with autocannon's programmatic API, when wrk is not installed (bench/lib/load.ts).
// Latency percentiles are computed here from autocannon's per-response timings (hrtime,
// fractional ms): autocannon's own histogram records whole milliseconds, too coarse for
// sub-millisecond GETs.
import { createRequire } from 'node:module';
import type { LoadResult, LoadSpec, Workload } from './load.ts';

interface AutocannonRequest {
  method?: string;
  path?: string;
  headers?: Record<string, string>;
  body?: string | Buffer;
  setupRequest?: (req: AutocannonRequest, context: object) => AutocannonRequest;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  pipelining?: number;
  timeout?: number;
  method?: string;
  headers?: Record<string, string>;
  requests?: AutocannonRequest[];
}

interface AutocannonResult {
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats: Record<string, { count: number }>;
}

interface AutocannonInstance extends PromiseLike<AutocannonResult> {
  on(
    event: 'response',
    fn: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void,
  ): void;
  stop(): void;
}

const autocannon = createRequire(import.meta.url)('autocannon') as (opts: AutocannonOptions) => AutocannonInstance;

/** The body of the n-th lead of a POST run; bench/lib/wrk/load.lua builds the same. */
function benchLeadBody(run: number, n: number): string {
  // A possible Berlin number (+49 30, then 10 digits): the API refuses numbers that cannot exist.
  const phone = `+4930${String(run).padStart(3, '0')}${String(n).padStart(7, '0')}`;
  return JSON.stringify({ name: `Bench Lead ${n}`, phone, email: `lead${run}-${n}@example.com`, consent: true });
}

function requestFor(w: Workload): AutocannonRequest {
  if (w.kind === 'fixed') return { method: 'GET', path: w.path };
  if (w.kind === 'lead-get') {
    const ids = w.ids;
    return {
      method: 'GET',
      setupRequest: (req) => ({ ...req, path: `/api/public/leads/${ids[Math.floor(Math.random() * ids.length)]}` }),
    };
  }
  if (w.kind === 'lead-get-multi') {
    const pairs = w.pairs;
    return {
      method: 'GET',
      setupRequest: (req) => {
        const p = pairs[Math.floor(Math.random() * pairs.length)]!;
        return {
          ...req,
          path: `/api/public/leads/${p.id}`,
          headers: { ...req.headers, authorization: `Bearer ${p.key}` },
        };
      },
    };
  }
  let n = 0;
  const run = w.run;
  const keys = w.kind === 'lead-post-multi' ? w.keys : null;
  return {
    method: 'POST',
    path: '/api/public/leads',
    setupRequest: (req) => ({
      ...req,
      body: benchLeadBody(run, ++n),
      ...(keys
        ? {
            headers: {
              ...req.headers,
              'content-type': 'application/json',
              authorization: `Bearer ${keys[Math.floor(Math.random() * keys.length)]}`,
            },
          }
        : {}),
    }),
  };
}

export async function runAutocannon(spec: LoadSpec): Promise<LoadResult> {
  const request = requestFor(spec.workload);
  const latencies = new Latencies();
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    duration: spec.seconds,
    pipelining: 1,
    timeout: 10,
    ...(spec.headers ? { headers: spec.headers } : {}),
    requests: [request],
  });
  instance.on('response', (_client, _status, _bytes, ms) => latencies.add(ms));
  // autocannon stops itself after `duration`; this guard bounds a run that hangs anyway.
  const guard = setTimeout(() => instance.stop(), (spec.seconds + 20) * 1000);
  let result: AutocannonResult;
  try {
    result = await instance;
  } finally {
    clearTimeout(guard);
  }
  const statusCodes: Record<string, number> = {};
  for (const [code, { count }] of Object.entries(result.statusCodeStats)) statusCodes[code] = count;
  const total = latencies.count;
  return {
    connections: spec.connections,
    seconds: result.duration,
    requests: total,
    rps: total / result.duration,
    p50: latencies.percentile(50),
    p99: latencies.percentile(99),
    non2xx: result.non2xx,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCodes,
  };
}

/** Growable array of response times in ms. */
class Latencies {
  #data = new Float64Array(1 << 16);
  count = 0;

  add(ms: number): void {
    if (this.count === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.count++] = ms;
  }

  percentile(p: number): number {
    if (this.count === 0) return NaN;
    const sorted = this.#data.subarray(0, this.count).sort();
    const rank = Math.min(this.count - 1, Math.max(0, Math.ceil((p / 100) * this.count) - 1));
    return sorted[rank]!;
  }
}

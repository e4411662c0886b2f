// HTTP load with autocannon's programmatic API. Latency percentiles are computed here from
// autocannon's per-response timings (hrtime, fractional ms): autocannon's own histogram
// records whole milliseconds, too coarse for sub-millisecond GETs.
import { createRequire } from 'node:module';

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
  on(event: 'response', fn: (client: unknown, statusCode: number, resBytes: number, responseTime: number) => void): void;
  stop(): void;
}

const autocannon = createRequire(import.meta.url)('autocannon') as (opts: AutocannonOptions) => AutocannonInstance;

export interface LoadResult {
  connections: number;
  seconds: number;
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  statusCodes: Record<string, number>;
}

export interface LoadSpec {
  url: string;
  connections: number;
  seconds: number;
  method: 'GET' | 'POST';
  headers?: Record<string, string>;
  /** Called for every request: the path and (for POST) the body of that request. */
  next?: () => { path: string; body?: string };
  path?: string;
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const request: AutocannonRequest = { method: spec.method, path: spec.path ?? '/' };
  const next = spec.next;
  if (next) {
    request.setupRequest = (req) => {
      const r = next();
      req.path = r.path;
      if (r.body !== undefined) req.body = r.body;
      return req;
    };
  }
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

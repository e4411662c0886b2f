// HTTP load with wrk (one thread, as in the research baseline): the workload is made by
// bench/lib/wrk/load.lua, and its done() hook prints the figures as one JSON line.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { LoadResult, LoadSpec, Workload } from './load.ts';
import { runChild } from './procs.ts';

export const WRK = process.env.WRK ?? 'wrk';
const SCRIPT = fileURLToPath(new URL('./wrk/load.lua', import.meta.url));

// The ids of a GET workload go to the Lua script in a file of the run's own temp folder.
function scriptArgs(w: Workload, dir: string): string[] {
  if (w.kind === 'lead-post') return ['lead-post', String(w.run)];
  if (w.kind === 'lead-post-multi') {
    const file = path.join(dir, 'keys.txt');
    fs.writeFileSync(file, `${w.keys.join('\n')}\n`);
    return ['lead-post-multi', String(w.run), file];
  }
  if (w.kind === 'lead-get-multi') {
    const file = path.join(dir, 'pairs.txt');
    fs.writeFileSync(file, `${w.pairs.map((p) => `${p.key} ${p.id}`).join('\n')}\n`);
    return ['lead-get-multi', file];
  }
  if (w.kind !== 'lead-get') return ['fixed'];
  const file = path.join(dir, 'ids.txt');
  fs.writeFileSync(file, `${w.ids.join('\n')}\n`);
  return ['lead-get', file];
}

interface WrkSummary {
  requests: number;
  duration_us: number;
  connect: number;
  read: number;
  write: number;
  status: number;
  timeout: number;
  p50_us: number;
  p99_us: number;
}

export async function runWrk(spec: LoadSpec): Promise<LoadResult> {
  const url = new URL(spec.workload.kind === 'fixed' ? spec.workload.path : '/', spec.url).toString();
  const headers = Object.entries(spec.headers ?? {}).flatMap(([k, v]) => ['-H', `${k}: ${v}`]);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-bench-wrk-'));
  let out: string;
  try {
    const args = [
      '-t1',
      `-c${spec.connections}`,
      `-d${spec.seconds}s`,
      '--timeout',
      '10s',
      '--latency',
      ...headers,
      '-s',
      SCRIPT,
      url,
      '--',
      ...scriptArgs(spec.workload, dir),
    ];
    out = await runChild('wrk', WRK, args, { timeoutMs: (spec.seconds + 30) * 1000 });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const line = out.split('\n').find((l) => l.startsWith('WRK_RESULT '));
  if (!line) throw new Error(`wrk printed no result: ${out.slice(-2000)}`);
  const r = JSON.parse(line.slice('WRK_RESULT '.length)) as WrkSummary;
  const seconds = r.duration_us / 1e6;
  return {
    connections: spec.connections,
    seconds,
    requests: r.requests,
    rps: r.requests / seconds,
    p50: r.p50_us / 1000,
    p99: r.p99_us / 1000,
    // wrk counts responses with a status of 400 or more; the service sends no 3xx.
    non2xx: r.status,
    errors: r.connect + r.read + r.write + r.timeout,
    timeouts: r.timeout,
    statusCodes: {},
  };
}

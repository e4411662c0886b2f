// The API part's memory figure on a small host: the same service, plain `node`, started inside a
// memory limit (a cgroup, bench/lib/memory-limit.ts), under the API part's loads at 64
// connections. Its peak RSS and throughput are reported beside those of the unlimited run, which
// on a large build machine shows what V8 takes when the host has memory to spare.
import path from 'node:path';
import { apiLoads } from '../lib/api-loads.ts';
import { loadGenerator, type LoadResult } from '../lib/load.ts';
import { createMemoryCgroup } from '../lib/memory-limit.ts';
import { freePort, procStatusMb, progress, RssSampler, startChild, stopChild, waitForHttp200 } from '../lib/procs.ts';

export interface MemoryLimitOptions {
  root: string;
  env: NodeJS.ProcessEnv;
  limitMb: number;
  apiKey: string;
  seeded: string[];
  tenantKeys: string[];
  tenantPairs: readonly { key: string; id: string }[];
  seconds: number;
  warmupSeconds: number;
  /** The API part's runs at 64 connections, to compare against. */
  unlimited: { post: number; postMulti: number; get: number; getMulti: number };
}

export type MemoryLimitResult =
  | { limitMb: number; unavailable: string }
  | {
      limitMb: number;
      heapLimitMb: number;
      hwmMb: number | null;
      peakSampledMb: number;
      rps: { post: number; postMulti: number; get: number; getMulti: number };
      unlimited: MemoryLimitOptions['unlimited'];
      bad: number;
    };

export async function runMemoryLimitPart(o: MemoryLimitOptions): Promise<MemoryLimitResult> {
  const cgroup = createMemoryCgroup(o.limitMb);
  if ('unavailable' in cgroup) {
    progress(`memory limit: not measured (${cgroup.unavailable})`);
    return { limitMb: o.limitMb, unavailable: cgroup.unavailable };
  }
  try {
    const heapLimitMb = cgroup.heapLimitMb();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const service = path.join(o.root, 'dist', 'cli', 'main.js');
    const w = cgroup.wrap(process.execPath, [service, 'serve', '--no-worker', '--port', String(port)]);
    progress(`memory limit ${o.limitMb} MB: the service on ${url} (V8 heap limit there ${heapLimitMb.toFixed(0)} MB)`);
    const child = startChild('leadintake serve (memory limit)', w.cmd, w.args, { cwd: o.root, env: o.env });
    try {
      await waitForHttp200(`${url}/readyz`, child, 60_000);
      const pid = child.child.pid!;
      const sampler = new RssSampler(pid, 250);
      const load = loadGenerator();
      // Runs numbered apart from the API part's (its POST phones must not repeat).
      const { post, get, postMulti, getMulti } = apiLoads(load, url, o, 900);
      await post(16, o.warmupSeconds);
      await get(16, o.warmupSeconds);
      const results: Record<keyof MemoryLimitOptions['unlimited'], LoadResult> = {
        post: await post(64, o.seconds),
        postMulti: await postMulti(64, o.seconds),
        get: await get(64, o.seconds),
        getMulti: await getMulti(64, o.seconds),
      };
      sampler.stop();
      const hwmMb = procStatusMb(pid, 'VmHWM');
      const rps = {
        post: results.post.rps,
        postMulti: results.postMulti.rps,
        get: results.get.rps,
        getMulti: results.getMulti.rps,
      };
      const bad = Object.values(results).reduce((n, r) => n + r.non2xx + r.errors, 0);
      progress(
        `  → peak RSS ${hwmMb?.toFixed(1) ?? 'n/a'} MB (VmHWM); ` +
          `POST ${rps.post.toFixed(0)} req/s, GET ${rps.get.toFixed(0)} req/s`,
      );
      return { limitMb: o.limitMb, heapLimitMb, hwmMb, peakSampledMb: sampler.peak, rps, unlimited: o.unlimited, bad };
    } finally {
      await stopChild(child);
    }
  } finally {
    cgroup.remove();
  }
}

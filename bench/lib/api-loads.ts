// The API part's four loads against one service (bench/suite/api.ts, and again in a memory limit
// in bench/suite/api-memory-limit.ts): POST and GET with the bench workspace's key, and the
// multi-tenant ones, each request on one of the tenants' keys at random (a GET reads a lead of
// that key's workspace).
import type { LoadGenerator, LoadResult } from './load.ts';

export interface ApiLoadKeys {
  apiKey: string;
  /** The ids of the bench workspace's seeded leads. */
  seeded: string[];
  tenantKeys: string[];
  tenantPairs: readonly { key: string; id: string }[];
}

type Load = (connections: number, seconds: number) => Promise<LoadResult>;

/** Each POST run takes the next `run` number after `firstRun`, so no two runs submit the same phone. */
export function apiLoads(
  load: LoadGenerator,
  url: string,
  k: ApiLoadKeys,
  firstRun: number,
): { post: Load; get: Load; postMulti: Load; getMulti: Load } {
  const headers = { authorization: `Bearer ${k.apiKey}`, 'content-type': 'application/json' };
  let run = firstRun;
  return {
    post: (connections, seconds) =>
      load.run({ url, connections, seconds, headers, workload: { kind: 'lead-post', run: ++run } }),
    get: (connections, seconds) =>
      load.run({ url, connections, seconds, headers, workload: { kind: 'lead-get', ids: k.seeded } }),
    postMulti: (connections, seconds) =>
      load.run({ url, connections, seconds, workload: { kind: 'lead-post-multi', run: ++run, keys: k.tenantKeys } }),
    getMulti: (connections, seconds) =>
      load.run({ url, connections, seconds, workload: { kind: 'lead-get-multi', pairs: k.tenantPairs } }),
  };
}

// The benchmark's Markdown report: measured figures, then the ratio targets as PASS/FAIL.
import { describeAlternated, type Alternated } from '../lib/alternated.ts';
import type { CpuUse } from '../lib/cpu.ts';
import type { LoadResult } from '../lib/load.ts';
import type { MemoryLimitResult } from './api-memory-limit.ts';
import type { PgbenchResult } from './pgbench.ts';

export const CONNECTIONS = [16, 64] as const;
export type Conns = (typeof CONNECTIONS)[number];

/** A measured run with the CPU and database writes during it. */
export interface Measured<T> {
  result: T;
  cpu: CpuUse;
  /** Writing transactions and WAL bytes during the run (the whole database server). */
  db: { xacts: number; walBytes: number };
}

export interface BenchResults {
  post: Record<Conns, Measured<LoadResult>>;
  get: Record<Conns, Measured<LoadResult>>;
  /** The same loads with each request on one of `tenants` keys (one per workspace) at random. */
  postMulti: Record<Conns, Measured<LoadResult>>;
  getMulti: Record<Conns, Measured<LoadResult>>;
  /** The multi-tenant / one-key ratios at 64 connections from alternated short runs. */
  alternated: { post: Alternated; get: Alternated };
  tenants: number;
  hello: Record<Conns, Measured<LoadResult>>;
  pgWrite: Record<Conns, Measured<PgbenchResult>>;
  pgRead: Record<Conns, Measured<PgbenchResult>>;
  /** Outbox rows not yet relayed to pg-boss when each POST run ended. */
  outboxBacklog: Record<Conns, number>;
  rss: { afterStartMb: number; peakSampledMb: number; hwmMb: number | null };
  /** The same service in a memory limit (BENCH_MEMORY_LIMIT_MB), or null when set to 0. */
  memoryLimit: MemoryLimitResult | null;
  meta: {
    date: string;
    seconds: number;
    warmupSeconds: number;
    seeded: number;
    node: string;
    postgres: string;
    pgbench: string;
    cpus: number;
    /** The machine's memory, which V8 sizes its heap from when no limit is set. */
    memoryMb: number;
    database: string;
    loadGenerator: string;
    nodeFlags: string[];
    /** The service's MALLOC_ARENA_MAX, when the caller set one. */
    mallocArenaMax: string | null;
  };
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

/** Above this many cores used by processes not ours, a run's figures are suspect. */
export const NOISY_CORES = 0.25;

function statusNote(r: LoadResult): string {
  const codes = Object.entries(r.statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, n]) => `${code}×${n}`);
  const errs = r.errors > 0 ? [`socket errors ${r.errors}${r.timeouts ? ` (timeouts ${r.timeouts})` : ''}`] : [];
  return [String(r.non2xx), ...(codes.length || errs.length ? [`(${[...codes, ...errs].join(', ')})`] : [])].join(' ');
}

/** CPU columns: service, postgres, load generator, other; machine busy; µs per request; DB writes per request. */
function cpuCells(m: Measured<unknown>, rate: number, count: number, service: boolean): string {
  const c = m.cpu;
  const pg = c.pg === null ? '?' : f2(c.pg);
  const perReq = (cores: number | null) => (cores === null ? '?' : f0((cores / rate) * 1e6));
  const noisy = c.other >= NOISY_CORES ? ' ⚠' : '';
  const us = service ? `${perReq(c.service)} / ${perReq(c.pg)}` : `– / ${perReq(c.pg)}`;
  const writes = count > 0 ? `${f2(m.db.xacts / count)} / ${f0(m.db.walBytes / count)}` : 'n/a';
  const cores = `${service ? f2(c.service) : '–'} / ${pg} / ${f2(c.loadgen)} / ${f2(c.other)}${noisy}`;
  return `${cores}; ${f2(c.busy)} | ${us} | ${writes}`;
}

interface Check {
  name: string;
  measured: string;
  detail: string;
  target: string;
  pass: boolean;
}

function checks(r: BenchResults): Check[] {
  const out: Check[] = [];
  const ratio = (name: string, a: number, b: number, min: number, detail: string) => {
    const v = a / b;
    out.push({ name, measured: f2(v), detail: `${detail}: ${f0(a)} / ${f0(b)}`, target: `≥ ${min}`, pass: v >= min });
  };
  // The headline: many workspaces with a key each.
  const n = r.tenants;
  // The two ratios to one key from the alternated runs (bench/lib/alternated.ts); the 10-s runs' ratios are printed
  // above them.
  const alternated = (name: string, a: Alternated, multi: Measured<LoadResult>, one: Measured<LoadResult>) => {
    const r10 = multi.result.rps / one.result.rps;
    out.push({
      name: `${name} ${n} keys / ${name} one key, 64 conns, alternated`,
      measured: f2(a.ratio),
      detail: `${describeAlternated(a)}; the 10-s runs: ${f2(r10)}`,
      target: '≥ 0.9',
      pass: a.ratio >= 0.9,
    });
  };
  alternated('POST', r.alternated.post, r.postMulti[64], r.post[64]);
  ratio(
    `POST ${n} keys / pgbench bare write, 64 conns`,
    r.postMulti[64].result.rps,
    r.pgWrite[64].result.tps,
    1.0,
    'req/s / tps',
  );
  {
    const res = r.postMulti[64].result;
    out.push({
      name: `POST ${n} keys p99 at 64 conns`,
      measured: `${f1(res.p99)} ms`,
      detail: `p50 ${f2(res.p50)} ms`,
      target: '≤ 40 ms',
      pass: res.p99 <= 40,
    });
  }
  alternated('GET', r.alternated.get, r.getMulti[64], r.get[64]);
  ratio(
    `GET ${n} keys / fastify hello, 64 conns`,
    r.getMulti[64].result.rps,
    r.hello[64].result.rps,
    0.25,
    'req/s / req/s',
  );
  // One key.
  ratio('POST / pgbench bare write, 64 conns', r.post[64].result.rps, r.pgWrite[64].result.tps, 0.6, 'req/s / tps');
  for (const c of CONNECTIONS)
    ratio(`GET / fastify hello, ${c} conns`, r.get[c].result.rps, r.hello[c].result.rps, 0.2, 'req/s / req/s');
  for (const c of CONNECTIONS)
    ratio(`GET / pgbench read, ${c} conns`, r.get[c].result.rps, r.pgRead[c].result.tps, 0.3, 'req/s / tps');
  for (const [label, res] of [
    ['POST', r.post[64].result],
    ['GET', r.get[64].result],
  ] as const) {
    out.push({
      name: `${label} p99 at 64 conns`,
      measured: `${f1(res.p99)} ms`,
      detail: `p50 ${f2(res.p50)} ms`,
      target: '≤ 30 ms',
      pass: res.p99 <= 30,
    });
  }
  const rss = Math.max(r.rss.peakSampledMb, r.rss.hwmMb ?? 0);
  out.push({
    name: `service peak RSS, no memory limit (host: ${f0(r.meta.memoryMb)} MB)`,
    measured: `${f1(rss)} MB`,
    detail: `sampled peak ${f1(r.rss.peakSampledMb)}, VmHWM ${r.rss.hwmMb === null ? 'n/a' : f1(r.rss.hwmMb)}`,
    target: '≤ 250 MB',
    pass: rss <= 250,
  });
  const m = r.memoryLimit;
  if (m && 'unavailable' in m) {
    out.push({
      name: `service peak RSS in a ${f0(m.limitMb)} MB memory limit`,
      measured: 'not measured',
      detail: m.unavailable,
      target: '≤ 250 MB',
      pass: false,
    });
  } else if (m) {
    const peak = Math.max(m.peakSampledMb, m.hwmMb ?? 0);
    const ratios = (['post', 'postMulti', 'get', 'getMulti'] as const)
      .map((k) => `${k} ${f2(m.rps[k] / m.unlimited[k])}`)
      .join(', ');
    out.push({
      name: `service peak RSS in a ${f0(m.limitMb)} MB memory limit (V8 heap limit ${f0(m.heapLimitMb)} MB)`,
      measured: `${f1(peak)} MB`,
      detail: `req/s at 64 conns against no limit: ${ratios}; non-2xx + errors ${m.bad}`,
      target: '≤ 250 MB',
      pass: peak <= 250 && m.bad === 0,
    });
  }
  const bad =
    CONNECTIONS.flatMap((c) => [r.post[c], r.get[c], r.postMulti[c], r.getMulti[c], r.hello[c]]).reduce(
      (n, x) => n + x.result.non2xx + x.result.errors,
      0,
    ) +
    r.alternated.post.bad +
    r.alternated.get.bad;
  out.push({
    name: 'non-2xx + socket errors, all HTTP runs',
    measured: f0(bad),
    detail: 'sanity check',
    target: '= 0',
    pass: bad === 0,
  });
  return out;
}

export function renderReport(r: BenchResults): string {
  const m = r.meta;
  const lines: string[] = [];
  const arena = m.mallocArenaMax === null ? '' : `MALLOC_ARENA_MAX=${m.mallocArenaMax} `;
  const asNpmStart =
    m.nodeFlags.length === 0 && m.mallocArenaMax === null
      ? ', run as it runs it'
      : '; BENCH_NODE_FLAGS or MALLOC_ARENA_MAX, not as `npm start` runs it';
  lines.push(`# leadintake benchmark (${m.date})`, '');
  lines.push(
    `${m.cpus} CPUs; Node ${m.node}; ${m.postgres}; ${m.pgbench}; database: ${m.database}.`,
    `Each configuration ran ${m.seconds} s after a ${m.warmupSeconds} s warm-up per server/script; ` +
      'before each: non-seed leads and outbox rows deleted, VACUUM ANALYZE, CHECKPOINT, ' +
      'and a wait (≤ 15 s) for other processes on the machine to go quiet.',
    `Service: \`${arena}${['node', ...m.nodeFlags].join(' ')} dist/cli/main.js serve --no-worker\` ` +
      `(built as \`npm start\` does${asNpmStart}) with LOG_LEVEL=info, ` +
      'its stdout (the pino log) sent to /dev/null; ' +
      'one messaging workspace and one API key for the single-key load, ' +
      `and ${f0(r.tenants)} workspaces with one key each for the multi-tenant load ` +
      `(each request on one of them at random); ${f0(m.seeded)} seeded leads in each of the two setups.`,
    `Load generator: ${m.loadGenerator}, one request at a time per connection, on the same 2 cores; ` +
      'closed-loop latencies.',
    '',
  );
  lines.push('## Measurements', '');
  lines.push(
    '| what | conns | req/s (tps) | p50 ms | p99 ms | non-2xx ' +
      '| CPU cores: service / postgres / load gen / other; machine ' +
      '| CPU µs per req: node / pg | per req: write xacts / WAL bytes |',
    '|---|---|---|---|---|---|---|---|---|',
  );
  const http = (what: string, rows: Record<Conns, Measured<LoadResult>>, service: boolean) => {
    for (const c of CONNECTIONS) {
      const x = rows[c].result;
      lines.push(
        `| ${what} | ${c} | **${f0(x.rps)}** | ${f2(x.p50)} | ${f2(x.p99)} | ${statusNote(x)} | ` +
          `${cpuCells(rows[c], x.rps, x.requests, service)} |`,
      );
    }
  };
  const pgb = (what: string, rows: Record<Conns, Measured<PgbenchResult>>) => {
    for (const c of CONNECTIONS) {
      const x = rows[c].result;
      lines.push(
        `| ${what} | ${c} | **${f0(x.tps)}** | avg ${f2(x.latencyAvgMs)} | – | failed ${x.failed} | ` +
          `${cpuCells(rows[c], x.tps, x.transactions, false)} |`,
      );
    }
  };
  http('service POST /api/public/leads (messaging, unique phone)', r.post, true);
  http(`service POST, **${r.tenants} keys** (one per workspace, at random)`, r.postMulti, true);
  http('service GET /api/public/leads/:id (random seeded id)', r.get, true);
  http(`service GET, **${r.tenants} keys** (a lead of the key's workspace)`, r.getMulti, true);
  pgb('pgbench bare write (BEGIN; lead; outbox; COMMIT)', r.pgWrite);
  pgb('pgbench read by id + workspace', r.pgRead);
  http('fastify hello (separate process; its CPU in "service")', r.hello, true);
  lines.push('');
  const perConns = (value: (c: Conns) => string) => CONNECTIONS.map((c) => `${value(c)} at ${c} conns`).join(', ');
  const hwm = r.rss.hwmMb === null ? 'n/a' : `${f1(r.rss.hwmMb)} MB`;
  const backlog = perConns((c) => f0(r.outboxBacklog[c]));
  lines.push(
    `Service RSS: ${f1(r.rss.afterStartMb)} MB after start, ` +
      `peak sampled (every 250 ms) ${f1(r.rss.peakSampledMb)} MB, VmHWM ${hwm}.`,
    `Outbox rows not yet relayed to pg-boss when the POST run ended: ${backlog}.`,
  );
  lines.push(
    `Multi-tenant / one key: POST ${perConns((c) => f2(r.postMulti[c].result.rps / r.post[c].result.rps))}; ` +
      `GET ${perConns((c) => f2(r.getMulti[c].result.rps / r.get[c].result.rps))}. ` +
      'Alternated at 64 conns (the two loads taking turns in short runs, bench/lib/alternated.ts): ' +
      `POST ${describeAlternated(r.alternated.post)}; GET ${describeAlternated(r.alternated.get)}.`,
  );
  const all = [r.post, r.get, r.postMulti, r.getMulti, r.pgWrite, r.pgRead, r.hello].flatMap((rows) =>
    CONNECTIONS.map((c) => rows[c] as Measured<unknown>),
  );
  const worst = Math.max(...all.map((x) => x.cpu.other));
  if (worst >= NOISY_CORES) {
    lines.push(
      `**Warning:** other processes on the machine used up to ${f2(worst)} cores during a measured run (⚠ rows); ` +
        'those figures and the ratios built on them are not reliable. Rerun on a quiet machine.',
    );
  }
  lines.push('');
  lines.push('## Targets', '');
  lines.push('| check | measured | detail | target | result |', '|---|---|---|---|---|');
  for (const c of checks(r))
    lines.push(`| ${c.name} | ${c.measured} | ${c.detail} | ${c.target} | ${c.pass ? 'PASS' : '**FAIL**'} |`);
  lines.push(
    '',
    `Informational: POST / pgbench write at 16 conns = ${f2(r.post[16].result.rps / r.pgWrite[16].result.tps)}; ` +
      `GET p99 at 16 conns = ${f2(r.get[16].result.p99)} ms. ` +
      'The load generator shares the 2 cores (load gen column): ' +
      'what it spends per request is taken from the server it drives.',
    '',
  );
  return lines.join('\n');
}

// The benchmark's Markdown report: measured figures, then the ratio targets as PASS/FAIL.
import type { LoadResult } from './load.ts';
import type { PgbenchResult } from './pgbench.ts';

export const CONNECTIONS = [16, 64] as const;
export type Conns = (typeof CONNECTIONS)[number];

export interface BenchResults {
  post: Record<Conns, LoadResult>;
  get: Record<Conns, LoadResult>;
  hello: Record<Conns, LoadResult>;
  pgWrite: Record<Conns, PgbenchResult>;
  pgRead: Record<Conns, PgbenchResult>;
  /** Outbox rows not yet relayed to pg-boss when each POST run ended. */
  outboxBacklog: Record<Conns, number>;
  rss: { afterStartMb: number; peakSampledMb: number; hwmMb: number | null };
  meta: {
    date: string;
    seconds: number;
    warmupSeconds: number;
    seeded: number;
    node: string;
    postgres: string;
    pgbench: string;
    cpus: number;
    database: string;
  };
}

const f0 = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : 'n/a');
const f2 = (n: number) => (Number.isFinite(n) ? n.toFixed(2) : 'n/a');
const f1 = (n: number) => (Number.isFinite(n) ? n.toFixed(1) : 'n/a');

function statusNote(r: LoadResult): string {
  const codes = Object.entries(r.statusCodes)
    .filter(([code]) => !code.startsWith('2'))
    .map(([code, n]) => `${code}×${n}`);
  const errs = r.errors > 0 ? [`socket errors ${r.errors}${r.timeouts ? ` (timeouts ${r.timeouts})` : ''}`] : [];
  return [String(r.non2xx), ...(codes.length || errs.length ? [`(${[...codes, ...errs].join(', ')})`] : [])].join(' ');
}

interface Check {
  name: string;
  measured: number;
  detail: string;
  target: string;
  pass: boolean;
}

function checks(r: BenchResults): Check[] {
  const out: Check[] = [];
  const ratio = (name: string, a: number, b: number, min: number, detail: string) => {
    const v = a / b;
    out.push({ name, measured: v, detail: `${detail}: ${f0(a)} / ${f0(b)}`, target: `≥ ${min}`, pass: v >= min });
  };
  ratio('POST / pgbench bare write, 64 conns', r.post[64].rps, r.pgWrite[64].tps, 0.6, 'req/s / tps');
  for (const c of CONNECTIONS) ratio(`GET / fastify hello, ${c} conns`, r.get[c].rps, r.hello[c].rps, 0.2, 'req/s / req/s');
  for (const c of CONNECTIONS) ratio(`GET / pgbench read, ${c} conns`, r.get[c].rps, r.pgRead[c].tps, 0.3, 'req/s / tps');
  for (const [label, res] of [['POST', r.post[64]], ['GET', r.get[64]]] as const) {
    out.push({ name: `${label} p99 at 64 conns (ms)`, measured: res.p99, detail: `p50 ${f2(res.p50)} ms`, target: '≤ 30 ms', pass: res.p99 <= 30 });
  }
  const rss = Math.max(r.rss.peakSampledMb, r.rss.hwmMb ?? 0);
  out.push({
    name: 'service peak RSS (MB)',
    measured: rss,
    detail: `sampled peak ${f1(r.rss.peakSampledMb)}, VmHWM ${r.rss.hwmMb === null ? 'n/a' : f1(r.rss.hwmMb)}`,
    target: '≤ 150 MB',
    pass: rss <= 150,
  });
  const bad = [...CONNECTIONS.flatMap((c) => [r.post[c], r.get[c], r.hello[c]])].reduce((n, x) => n + x.non2xx + x.errors, 0);
  out.push({ name: 'non-2xx + socket errors, all HTTP runs', measured: bad, detail: 'sanity', target: '= 0', pass: bad === 0 });
  return out;
}

export function renderReport(r: BenchResults): string {
  const m = r.meta;
  const lines: string[] = [];
  lines.push(`# leadintake benchmark (${m.date})`, '');
  lines.push(
    `${m.cpus} CPUs; Node ${m.node}; ${m.postgres}; ${m.pgbench}; database: ${m.database}.`,
    `Each configuration ran ${m.seconds} s after a ${m.warmupSeconds} s warm-up per server/script; between configurations: non-seed leads and outbox rows deleted, VACUUM ANALYZE, CHECKPOINT.`,
    `Service: \`node bin/leadintake.js serve\` with LOG_LEVEL=info, its stdout (the pino log) sent to /dev/null; one messaging workspace and one API key for all load; ${f0(m.seeded)} seeded leads.`,
    'Load generator: autocannon (programmatic, in the bench process, pipelining 1) on the same machine; latencies are closed-loop, from autocannon\'s per-response timings.',
    '',
  );
  lines.push('## Measurements', '');
  lines.push('| what | conns | req/s (tps) | p50 ms | p99 ms | non-2xx |', '|---|---|---|---|---|---|');
  for (const c of CONNECTIONS) {
    const p = r.post[c];
    lines.push(`| service POST /api/public/leads (messaging, unique phone) | ${c} | **${f0(p.rps)}** | ${f2(p.p50)} | ${f2(p.p99)} | ${statusNote(p)} |`);
  }
  for (const c of CONNECTIONS) {
    const g = r.get[c];
    lines.push(`| service GET /api/public/leads/:id (random seeded id) | ${c} | **${f0(g.rps)}** | ${f2(g.p50)} | ${f2(g.p99)} | ${statusNote(g)} |`);
  }
  for (const c of CONNECTIONS) {
    const w = r.pgWrite[c];
    lines.push(`| pgbench bare write (BEGIN; lead; outbox; COMMIT) | ${c} | **${f0(w.tps)}** | avg ${f2(w.latencyAvgMs)} | – | failed ${w.failed} |`);
  }
  for (const c of CONNECTIONS) {
    const w = r.pgRead[c];
    lines.push(`| pgbench read by id + workspace | ${c} | **${f0(w.tps)}** | avg ${f2(w.latencyAvgMs)} | – | failed ${w.failed} |`);
  }
  for (const c of CONNECTIONS) {
    const h = r.hello[c];
    lines.push(`| fastify hello (separate process) | ${c} | **${f0(h.rps)}** | ${f2(h.p50)} | ${f2(h.p99)} | ${statusNote(h)} |`);
  }
  lines.push('');
  lines.push(
    `Service RSS: ${f1(r.rss.afterStartMb)} MB after start, peak sampled (every 250 ms) ${f1(r.rss.peakSampledMb)} MB, VmHWM ${r.rss.hwmMb === null ? 'n/a' : `${f1(r.rss.hwmMb)} MB`}.`,
    `Outbox rows not yet relayed when the POST run ended: ${CONNECTIONS.map((c) => `${f0(r.outboxBacklog[c])} at ${c} conns`).join(', ')}.`,
    '',
  );
  lines.push('## Targets', '');
  lines.push('| check | measured | detail | target | result |', '|---|---|---|---|---|');
  for (const c of checks(r)) {
    const v = c.name.includes('(ms)') || c.name.includes('(MB)') ? f1(c.measured) : c.detail === 'sanity' ? f0(c.measured) : f2(c.measured);
    lines.push(`| ${c.name} | ${v} | ${c.detail} | ${c.target} | ${c.pass ? 'PASS' : '**FAIL**'} |`);
  }
  lines.push(
    '',
    'Informational: POST / pgbench write at 16 conns = ' +
      `${f2(r.post[16].rps / r.pgWrite[16].tps)}; GET p99 at 16 conns = ${f2(r.get[16].p99)} ms; ` +
      'the fastify hello figure is bounded by autocannon (one JS thread sharing the 2 cores), so the GET/hello ratio reads higher than against wrk.',
    '',
  );
  return lines.join('\n');
}

// The overload scenario (docs/PERFORMANCE.md, "Overload"): one `serve` as `npm start`
// runs it (compiled build, plain node, in-process worker) with a WhatsApp workspace key, under
// wrk with far more connections than it can serve at once. Reports throughput, the latency of
// the 201s (from the service's own access log), the longest wait any request had (wrk), the
// statuses, and the service's RSS: peak, when the load ends, and a minute later.
//
//   node bench/suite/overload.ts                 # this checkout (built first)
//   OVERLOAD_ROOT=/path/to/other/checkout node bench/suite/overload.ts   # another build, for before/after
//   OVERLOAD_CONNECTIONS=2048 OVERLOAD_SECONDS=20 OVERLOAD_IDLE_SECONDS=60 (the defaults), OVERLOAD_BUILD=0 (use dist/
//   as it is)
//
// Also run by `npm run bench` (bench/run.ts) with its own database. 127.0.0.1 only; every child is
// stopped by its pid, also on error.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openBenchServer } from '../lib/db.ts';
import { WRK } from '../lib/load-wrk.ts';
import {
  benchNodeFlags,
  freePort,
  procStatusMb,
  progress,
  RssSampler,
  runChild,
  sleep,
  startChild,
  stopChild,
  waitForHttp200,
} from '../lib/procs.ts';

export interface OverloadResult {
  connections: number;
  seconds: number;
  statuses: { s201: number; s409: number; s429: number; s503: number; other: number };
  socketErrors: number;
  timeouts: number;
  /** 201s per second over the run. */
  createdPerSecond: number;
  /** Responses of any status per second. */
  answeredPerSecond: number;
  /** Milliseconds, from the service's access log (time inside the service). */
  created: { p50: number; p99: number; max: number };
  /** Milliseconds, as wrk saw them (every response, queueing in the kernel included). */
  client: { p50: number; p99: number; max: number };
  /**
   * A form's view: one POST every 100 ms from this process on a connection of its own, through
   * the whole load (wrk shares the 2 cores with the service and PostgreSQL and, one thread for
   * 2,048 connections, also counts the time it waited for a core itself).
   */
  probe: { requests: number; s201: number; s503: number; other: number; p50: number; p99: number; max: number };
  /** The service's longest event-loop delay during the load (prom-client's nodejs_eventloop_lag_max_seconds), ms. */
  eventLoopMaxMs: number;
  rssMb: { afterStart: number; peak: number; atEnd: number; afterIdle: number; idleSeconds: number };
  env: Record<string, string>;
}

const num = (v: string | undefined, fallback: number) =>
  v && Number.isFinite(Number(v)) && Number(v) > 0 ? Number(v) : fallback;

/** One overload run against the build in `root` on the database server at `serverUrl`. */
export async function runOverload(opts: {
  root: string;
  databaseUrl: string;
  connections: number;
  seconds: number;
  idleSeconds: number;
  extraEnv?: Record<string, string>;
}): Promise<OverloadResult> {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-overload-'));
  const env = {
    ...process.env,
    DATABASE_URL: opts.databaseUrl,
    LEADINTAKE_ENCRYPTION_KEY: crypto.randomBytes(32).toString('hex'),
    LOG_LEVEL: 'info',
    MAX_KEY_HOURLY_LIMIT: '100000000',
    ...opts.extraEnv,
  };
  const bin = path.join(opts.root, 'bin', 'leadintake.js');
  const cli = async (args: string[]) =>
    JSON.parse(
      await runChild('leadintake CLI', process.execPath, [bin, ...args], { cwd: opts.root, env, timeoutMs: 60_000 }),
    );
  try {
    const slug = `overload-${Date.now()}`;
    await cli(['workspace', 'create', '--slug', slug, '--name', 'Overload', '--channel', 'whatsapp', '--json']);
    const key: string = (await cli(['key', 'create', slug, '--hourly-limit', '100000000', '--json'])).key;
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    // /metrics is served on a port of its own only (docs/OPERATIONS.md).
    const metricsPort = await freePort();
    const metricsUrl = `http://127.0.0.1:${metricsPort}`;
    // The access log (one JSON line per request: status, ms) is how the 201s' latency is read.
    const logFile = path.join(tmp, 'service.log');
    const out = fs.openSync(logFile, 'w');
    const service = startChild(
      'leadintake serve',
      process.execPath,
      [...benchNodeFlags(), path.join(opts.root, 'dist', 'cli', 'main.js'), 'serve', '--port', String(port)],
      {
        cwd: opts.root,
        env: { ...env, METRICS_PORT: String(metricsPort) },
        stdout: out,
      },
    );
    try {
      await waitForHttp200(`${url}/readyz`, service, 60_000);
      const pid = service.child.pid!;
      await sleep(2_000);
      const sampler = new RssSampler(pid, 200);
      const afterStart = sampler.last;
      progress(`overload: wrk -c${opts.connections} -d${opts.seconds}s POST against ${url}`);
      const args = [
        '-t1',
        `-c${opts.connections}`,
        `-d${opts.seconds}s`,
        '--timeout',
        '10s',
        '-H',
        `authorization: Bearer ${key}`,
        '-H',
        'content-type: application/json',
        '-s',
        fileURLToPath(new URL('../lib/wrk/overload.lua', import.meta.url)),
        url,
        '--',
        String(Date.now() % 1000),
      ];
      await eventLoopMaxMs(metricsUrl); // resets the service's maximum, so the next read covers the load
      const probe = startProbe(url, key, 100);
      const wrkOut = await runChild('wrk', WRK, args, { timeoutMs: (opts.seconds + 30) * 1000 });
      const probed = await probe.stop();
      const loopMaxMs = await eventLoopMaxMs(metricsUrl);
      const atEnd = procStatusMb(pid, 'VmRSS') ?? 0;
      progress(`overload: load over, RSS ${atEnd.toFixed(0)} MB; idle ${opts.idleSeconds} s`);
      await sleep(opts.idleSeconds * 1000);
      sampler.stop();
      const afterIdle = procStatusMb(pid, 'VmRSS') ?? 0;
      // Where the resident memory is after the idle minute: V8's heap, or outside it.
      const heap = await memoryFromMetrics(metricsUrl);
      progress(`overload: after idle RSS ${afterIdle.toFixed(0)} MB; ${heap}`);
      const line = wrkOut.split('\n').find((l) => l.startsWith('WRK_RESULT '));
      if (!line) throw new Error(`wrk printed no result: ${wrkOut.slice(-2000)}`);
      const w = JSON.parse(line.slice('WRK_RESULT '.length));
      const seconds = w.duration_us / 1e6;
      await stopChild(service);
      fs.closeSync(out);
      const created = accessLogLatency(logFile, 201);
      const statuses = { s201: w.s201, s409: w.s409, s429: w.s429, s503: w.s503, other: w.other };
      return {
        connections: opts.connections,
        seconds,
        statuses,
        socketErrors: w.connect + w.read + w.write,
        timeouts: w.timeout,
        createdPerSecond: w.s201 / seconds,
        answeredPerSecond: w.requests / seconds,
        created,
        client: { p50: w.p50_us / 1000, p99: w.p99_us / 1000, max: w.max_us / 1000 },
        probe: probed,
        eventLoopMaxMs: loopMaxMs,
        rssMb: { afterStart, peak: sampler.peak, atEnd, afterIdle, idleSeconds: opts.idleSeconds },
        env: opts.extraEnv ?? {},
      };
    } finally {
      await stopChild(service);
    }
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** p50 / p99 / max of the `ms` of access-log lines with this status. */
function accessLogLatency(file: string, status: number): { p50: number; p99: number; max: number } {
  const ms: number[] = [];
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    if (!line.includes('"msg":"request"')) continue;
    const entry = JSON.parse(line) as { status?: number; ms?: number };
    if (entry.status === status && typeof entry.ms === 'number') ms.push(entry.ms);
  }
  ms.sort((a, b) => a - b);
  const at = (q: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]! : 0);
  return { p50: at(0.5), p99: at(0.99), max: ms.length ? ms[ms.length - 1]! : 0 };
}

export function renderOverload(r: OverloadResult): string {
  const s = r.statuses;
  const f0 = (n: number) => n.toFixed(0);
  return [
    `### Overload: ${r.connections} connections, ${r.seconds.toFixed(0)} s, POST (serve with its worker)`,
    '',
    '| what | value |',
    '|---|---|',
    `| 201 per second | ${r.createdPerSecond.toFixed(0)} |`,
    `| answers per second (any status) | ${r.answeredPerSecond.toFixed(0)} |`,
    `| statuses | 201: ${s.s201}, 503: ${s.s503}, 409: ${s.s409}, 429: ${s.s429}, other: ${s.other}; ` +
      `socket errors ${r.socketErrors}, timeouts (10 s) ${r.timeouts} |`,
    `| 201 inside the service, p50 / p99 / max ms | ${r.created.p50} / ${r.created.p99} / ${r.created.max} |`,
    '| every answer as wrk saw it, p50 / p99 / max ms | ' +
      `${f0(r.client.p50)} / ${f0(r.client.p99)} / ${f0(r.client.max)} |`,
    "| a form's POST every 100 ms on its own connection: 201 / 503 / other; p50 / p99 / max ms | " +
      `${r.probe.s201} / ${r.probe.s503} / ${r.probe.other}; ` +
      `${f0(r.probe.p50)} / ${f0(r.probe.p99)} / ${f0(r.probe.max)} |`,
    `| the service's longest event-loop delay during the load | ${r.eventLoopMaxMs.toFixed(0)} ms |`,
    `| RSS MB: after start / peak / load end / ${r.rssMb.idleSeconds} s later | ` +
      `${f0(r.rssMb.afterStart)} / ${f0(r.rssMb.peak)} / ${f0(r.rssMb.atEnd)} / ${r.rssMb.afterIdle.toFixed(1)} |`,
    '',
  ].join('\n');
}

// Run on its own: embedded PostgreSQL in a temp folder (or BENCH_DATABASE_URL), one run, report on stdout.
if (process.argv[1] && fileURLToPath(import.meta.url) === path.resolve(process.argv[1])) {
  const root = path.resolve(process.env.OVERLOAD_ROOT ?? fileURLToPath(new URL('../..', import.meta.url)));
  // OVERLOAD_BUILD=0 runs the dist/ already there (both checkouts of a before/after built once).
  if (process.env.OVERLOAD_BUILD !== '0') {
    progress(`npm run build in ${root}`);
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: ['ignore', 2, 2] });
  }
  const server = await openBenchServer();
  try {
    const result = await runOverload({
      root,
      databaseUrl: server.url,
      connections: num(process.env.OVERLOAD_CONNECTIONS, 2048),
      seconds: num(process.env.OVERLOAD_SECONDS, 20),
      idleSeconds: num(process.env.OVERLOAD_IDLE_SECONDS, 60),
    });
    process.stdout.write(`${renderOverload(result)}\n${JSON.stringify(result)}\n`);
  } finally {
    await server.close();
  }
}

/** The service's longest event-loop delay since the previous call (prom-client resets it on each scrape), ms. */
async function eventLoopMaxMs(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  const m = /^nodejs_eventloop_lag_max_seconds(?:\{[^}]*\})? ([0-9.e+-]+)$/m.exec(text);
  return m ? Number(m[1]) * 1000 : Number.NaN;
}

/**
 * POSTs a new lead every `everyMs` on one kept-alive connection of its own, one at a time, until
 * stopped; returns the statuses and latencies it saw.
 */
function startProbe(url: string, key: string, everyMs: number): { stop(): Promise<OverloadResult['probe']> } {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const ms: number[] = [];
  const counts = { s201: 0, s503: 0, other: 0 };
  let stopped = false;
  let n = 0;
  const tag = Date.now() % 100_000;
  const one = () =>
    new Promise<void>((resolve) => {
      const body = JSON.stringify({
        name: `Probe ${n}`,
        phone: `+4930${String(tag).padStart(5, '0')}${String(n++).padStart(5, '0')}`,
        consent: true,
      });
      const started = performance.now();
      const req = http.request(
        `${url}/api/public/leads`,
        {
          method: 'POST',
          agent,
          headers: {
            authorization: `Bearer ${key}`,
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
          },
        },
        (res) => {
          res.resume();
          res.on('end', () => {
            ms.push(performance.now() - started);
            if (res.statusCode === 201) counts.s201++;
            else if (res.statusCode === 503) counts.s503++;
            else counts.other++;
            resolve();
          });
        },
      );
      req.on('error', () => {
        counts.other++;
        resolve();
      });
      req.end(body);
    });
  const loop = (async () => {
    while (!stopped) {
      const next = performance.now() + everyMs;
      await one();
      await sleep(Math.max(0, next - performance.now()));
    }
  })();
  return {
    async stop() {
      stopped = true;
      await loop;
      agent.destroy();
      ms.sort((a, b) => a - b);
      const at = (q: number) => (ms.length ? ms[Math.min(ms.length - 1, Math.floor(q * ms.length))]! : 0);
      return { requests: ms.length, ...counts, p50: at(0.5), p99: at(0.99), max: ms.length ? ms[ms.length - 1]! : 0 };
    },
  };
}

/** V8 heap and external memory as the service's /metrics reports them (prom-client's defaults). */
async function memoryFromMetrics(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text().catch(() => '');
  const mb = (name: string) => {
    const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+]+)$`, 'm').exec(text);
    return m ? `${(Number(m[1]) / 1048576).toFixed(0)} MB` : '?';
  };
  return (
    `heap total ${mb('nodejs_heap_size_total_bytes')}, heap used ${mb('nodejs_heap_size_used_bytes')}, ` +
    `external ${mb('nodejs_external_memory_bytes')}`
  );
}

// Burst drain (docs/PERFORMANCE.md, "Burst drain"): a campaign or a CSV import sends thousands of
// WhatsApp leads at once.
// N leads (default 10,000) are POSTed as fast as the API takes them (64 connections) across
// 200 workspaces with one key each, to `leadintake serve` running its job handlers in-process,
// with the Twilio and chat-model simulators. Measured: the time from the first POST until every
// lead's first message has reached the simulator, first contacts per second over that time, and
// 201 → first message per lead (p50/p99); checked: every lead's first message arrived, none twice.
// The burst meets an installation's database, not a brand-new one: HISTORY earlier leads (default
// 2,000) go the same way first, unmeasured, then ANALYZE gives PostgreSQL the statistics autovacuum
// gives a running installation (docs/PERFORMANCE.md, "Burst drain").
// Called by bench/run.ts (runBurstDrain), or alone:
//   BURST_BENCH_DATABASE_URL=postgres://…/somedb node bench/suite/burst-drain.ts
import crypto from 'node:crypto';
import http from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { startChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { startTwilioSimulator } from '../../src/simulators/twilio/twilio-simulator.ts';
import { CpuMeter, postmasterPid } from '../lib/cpu.ts';
import { openBenchServer } from '../lib/db.ts';
import { stats, type LatencyStats } from './messaging-latency.ts';
import {
  benchNodeFlags,
  freePort,
  killAllChildrenNow,
  progress,
  RssSampler,
  sleep,
  startChild,
  stopChild,
  waitForHttp200,
} from '../lib/procs.ts';
import { createTenants } from '../lib/tenants.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const BIN = path.join(ROOT, 'dist', 'cli', 'main.js');

/** The burst's defaults, for `npm run bench` (bench/run.ts) and this file run alone. */
export const BURST_DEFAULTS = { leads: 10_000, tenants: 200, history: 2_000, waitSeconds: 300 } as const;

export interface BurstOptions {
  databaseUrl: string;
  encryptionKey: string;
  /** Leads in the burst. (Defaults of these four: BURST_DEFAULTS.) */
  leads?: number;
  /** Workspaces (one key each) the leads are spread over at random. */
  tenants?: number;
  /** Earlier leads sent (unmeasured) before the burst, so that it meets an aged database. */
  history?: number;
  /** Concurrent POSTs. Default 64. */
  connections?: number;
  /** Longest wait for the first messages after the last 201, seconds. */
  waitSeconds?: number;
  /** Data folder of the embedded server, for its CPU time (null: not ours, not measured). */
  pgDataDir?: string | null;
}

export interface BurstResult {
  leads: number;
  /** Earlier leads sent before the measured ones (then ANALYZE). */
  history: number;
  tenants: number;
  connections: number;
  /** First POST sent → last 201, ms. */
  postMs: number;
  /** First POST sent → last first message received (or the end of the wait), ms. */
  drainMs: number;
  firstContactsPerSecond: number;
  /** 201 → first message received, ms, over the leads that got one. */
  firstMessage: LatencyStats;
  /** Leads without a first message at the end of the wait. */
  missing: number;
  /** Leads that were sent their first message (the template) more than once. */
  duplicates: number;
  non201: number;
  peakRssMb: number;
  /**
   * CPU seconds per lead during the burst (first POST → drained): the service (API, relay and
   * workers), PostgreSQL (null when not ours), and this process (HTTP client and simulators).
   * On a shared machine these hold better than the rates: they do not count the time spent
   * waiting for a core.
   */
  cpuMsPerLead: { service: number; pg: number | null; bench: number };
  /** The service's job settings in this run, for the report. */
  env: Record<string, string>;
}

export async function runBurstDrain(opts: BurstOptions): Promise<BurstResult> {
  const leads = opts.leads ?? BURST_DEFAULTS.leads;
  const tenantCount = opts.tenants ?? BURST_DEFAULTS.tenants;
  const connections = opts.connections ?? 64;
  const pool = createPool(opts.databaseUrl, 2, 'leadintake-bench-burst');
  const [twilio, chat] = await Promise.all([startTwilioSimulator(), startChatSimulator()]);
  // Template sends per lead: the simulator's request log is appended to as a request arrives.
  const arrivals = new Map<string, number>();
  const templateSends = new Map<string, number>();
  const log = twilio.requests;
  log.push = (...entries) => {
    const now = performance.now();
    for (const e of entries) {
      const to = e.params.To;
      if (e.method !== 'POST' || !to) continue;
      if (!arrivals.has(to)) arrivals.set(to, now);
      if (e.params.ContentSid) templateSends.set(to, (templateSends.get(to) ?? 0) + 1);
    }
    return entries.length;
  };
  let service: ReturnType<typeof startChild> | null = null;
  let sampler: RssSampler | null = null;
  try {
    await migrate(pool);
    await pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
    await pool
      .query(`DELETE FROM pgboss.job WHERE name = 'agent-turn' AND state IN ('created', 'retry')`)
      .catch(() => {});
    const tag = crypto.randomBytes(3).toString('hex');
    progress(`burst: creating ${tenantCount} WhatsApp workspaces with one key each`);
    const tenants = await createTenants(pool, opts.encryptionKey, tenantCount, `burst-${tag}`, {
      whatsapp: {
        provider: 'twilio',
        accountSid: twilio.accountSid,
        authToken: twilio.authToken,
        from: twilio.sender,
        templateContentSid: twilio.templateSid,
      },
    });

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    progress(`burst: starting leadintake serve (job handlers in-process) on ${url}`);
    service = startChild(
      'leadintake serve (burst)',
      process.execPath,
      [...benchNodeFlags(), BIN, 'serve', '--port', String(port)],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          DATABASE_URL: opts.databaseUrl,
          LEADINTAKE_ENCRYPTION_KEY: opts.encryptionKey,
          PUBLIC_BASE_URL: url,
          LOG_LEVEL: 'info',
          TWILIO_BASE_URL: twilio.url,
          OPENAI_BASE_URL: chat.baseUrl,
          OPENAI_API_KEY: chat.apiKey,
        },
      },
    );
    await waitForHttp200(`${url}/readyz`, service, 60_000);
    sampler = new RssSampler(service.child.pid!, 250);

    const agent = new http.Agent({ keepAlive: true, maxSockets: connections });
    const run = crypto.randomInt(100, 999);
    const phoneOf = (i: number) => `+4930${run}${String(i).padStart(6, '0')}`;
    const post = (i: number) =>
      new Promise<number>((resolve, reject) => {
        const body = JSON.stringify({ name: `Burst Lead ${i}`, phone: phoneOf(i), consent: true });
        const key = tenants[crypto.randomInt(tenants.length)]!.key;
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
            res.on('end', () => resolve(res.statusCode ?? 0));
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    // `count` leads from `from`, `connections` at a time, each connection sending its next POST
    // as soon as the previous one is answered.
    const postAll = async (from: number, count: number) => {
      const answered = new Array<number>(count);
      let next = 0;
      let non201 = 0;
      await Promise.all(
        Array.from({ length: connections }, async () => {
          while (next < count) {
            const i = next++;
            const status = await post(from + i);
            answered[i] = performance.now();
            if (status !== 201) non201++;
          }
        }),
      );
      return { answered, non201 };
    };
    const waitForFirstMessages = async (from: number, count: number, seconds: number) => {
      const deadline = Date.now() + seconds * 1000;
      const seen = () => {
        let n = 0;
        for (let i = 0; i < count; i++) if (arrivals.has(`whatsapp:${phoneOf(from + i)}`)) n++;
        return n;
      };
      for (let n = seen(), last = -1; n < count && Date.now() < deadline; n = seen()) {
        if (n !== last) progress(`  burst: ${n} of ${count} first messages`);
        last = n;
        await sleep(1_000);
      }
    };

    // History, not measured: the installation's earlier leads (and the warm-up of key caches and
    // prepared statements). A plan PostgreSQL makes while a table holds a few rows reads the whole
    // table, and a connection keeps it until the table is analyzed: on a brand-new database the
    // burst would pay for that until autovacuum first came by, a minute in. The ANALYZE is
    // autovacuum's, a minute after the history.
    const history = Math.max(opts.history ?? BURST_DEFAULTS.history, tenantCount);
    progress(`burst: history, ${history} leads, then ANALYZE`);
    await postAll(0, history);
    await waitForFirstMessages(0, history, 120);
    await pool.query('ANALYZE');

    progress(`burst: ${leads} leads over ${connections} connections`);
    const cpu = new CpuMeter(() => postmasterPid(opts.pgDataDir ?? null));
    cpu.servicePid = service.child.pid!;
    const cpu0 = cpu.snapshot();
    const t0 = performance.now();
    const { answered, non201 } = await postAll(history, leads);
    const postMs = Math.max(...answered) - t0;
    progress(`  burst: last 201 after ${(postMs / 1000).toFixed(1)} s`);
    await waitForFirstMessages(history, leads, opts.waitSeconds ?? BURST_DEFAULTS.waitSeconds);

    const latencies: number[] = [];
    let lastArrival = t0;
    let duplicates = 0;
    for (let i = 0; i < leads; i++) {
      const to = `whatsapp:${phoneOf(history + i)}`;
      const at = arrivals.get(to);
      if (at === undefined) continue;
      latencies.push(at - answered[i]!);
      lastArrival = Math.max(lastArrival, at);
      if ((templateSends.get(to) ?? 0) > 1) duplicates++;
    }
    const cpu1 = cpu.snapshot();
    const perLead = (secs: number) => (secs * 1000) / leads;
    const cpuMsPerLead = {
      service: perLead(cpu1.service - cpu0.service),
      pg: opts.pgDataDir ? perLead(cpu1.pg - cpu0.pg) : null,
      bench: perLead(cpu1.self - cpu0.self),
    };
    const missing = leads - latencies.length;
    const drainMs = (missing > 0 ? performance.now() : lastArrival) - t0;
    agent.destroy();
    const envKeys = ['WORKER_CONCURRENCY', 'WORKER_BATCH_SIZE', 'JOB_POLL_SECONDS', 'DB_POOL_MAX'];
    return {
      leads,
      history,
      tenants: tenantCount,
      connections,
      postMs,
      drainMs,
      firstContactsPerSecond: (latencies.length / drainMs) * 1000,
      firstMessage: stats(latencies),
      missing,
      duplicates,
      non201,
      peakRssMb: sampler.peak,
      cpuMsPerLead,
      env: Object.fromEntries(envKeys.filter((k) => process.env[k]).map((k) => [k, process.env[k]!])),
    };
  } finally {
    sampler?.stop();
    if (service) await stopChild(service);
    await Promise.all([twilio.close(), chat.close()]);
    await pool.end();
  }
}

/** The result as a Markdown section for the bench report. */
export function renderBurstDrain(r: BurstResult): string {
  const s = (ms: number) => (Number.isNaN(ms) ? '–' : (ms / 1000).toFixed(2));
  const c = r.cpuMsPerLead;
  const env = Object.entries(r.env)
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const jobSettings = env ? ` (${env})` : ' (default job settings)';
  const postsPerSecond = Math.round((r.leads / r.postMs) * 1000).toLocaleString('en-US');
  const stillMissing = r.missing > 0 ? ` (**${r.missing} still without one**: the wait ended)` : '';
  const pg = c.pg === null ? 'n/a' : c.pg.toFixed(2);
  const sustainable =
    c.pg === null
      ? ''
      : `2 cores / (service + PostgreSQL + bench) = **${Math.round(2000 / (c.service + c.pg + c.bench))} leads/s** ` +
        'is the rate this machine could sustain if this were all it ran.';
  return [
    '## Burst drain',
    '',
    `${r.leads.toLocaleString('en-US')} WhatsApp leads POSTed as fast as the API took them ` +
      `(${r.connections} connections) across ${r.tenants} workspaces with one key each, ` +
      `to \`leadintake serve\` with its job handlers in-process${jobSettings}, Twilio and chat-model simulators, ` +
      `after ${r.history.toLocaleString('en-US')} earlier leads and an ANALYZE (an aged database).`,
    '',
    '| what | measured | target |',
    '|---|---|---|',
    `| first POST → last 201 | ${s(r.postMs)} s (${postsPerSecond} POST/s) | |`,
    `| first POST → every lead has its first message | ${s(r.drainMs)} s${stillMissing} | |`,
    `| first contacts per second | **${Math.round(r.firstContactsPerSecond)}** | ≥ 500 |`,
    `| 201 → first message, p50 / p99 / max | ${s(r.firstMessage.p50)} / **${s(r.firstMessage.p99)}** / ` +
      `${s(r.firstMessage.max)} s | p99 ≤ 15 s |`,
    `| leads sent their first message twice | ${r.duplicates} | 0 |`,
    `| POSTs not answered 201 | ${r.non201} | 0 |`,
    `| service peak RSS (sampled), no memory limit | ${r.peakRssMb.toFixed(1)} MB | ≤ 250 MB |`,
    `| CPU per lead: service / PostgreSQL / bench (client + simulators) | ${c.service.toFixed(2)} / ${pg} / ` +
      `${c.bench.toFixed(2)} ms | |`,
    '',
    'CPU per lead is what one lead cost from its POST to its first message ' +
      "(the 201, the relay, the turn, the simulator's status callbacks), " +
      `whatever the machine's other load; ${sustainable}`,
    '',
  ].join('\n');
}

if (import.meta.main) {
  // Alone: `npm run build && node bench/suite/burst-drain.ts` (BENCH_BURST_LEADS, BENCH_TENANTS and the
  // service's own settings such as WORKER_CONCURRENCY from the environment), on a fresh embedded
  // PostgreSQL unless BURST_BENCH_DATABASE_URL names a database it may write to.
  process.on('exit', killAllChildrenNow);
  const external = process.env.BURST_BENCH_DATABASE_URL;
  const server = external ? null : await openBenchServer();
  try {
    const result = await runBurstDrain({
      databaseUrl: external ?? server!.url,
      encryptionKey: crypto.randomBytes(32).toString('hex'),
      leads: Number(process.env.BENCH_BURST_LEADS ?? BURST_DEFAULTS.leads),
      tenants: Number(process.env.BENCH_TENANTS ?? BURST_DEFAULTS.tenants),
      history: Number(process.env.BENCH_BURST_HISTORY ?? BURST_DEFAULTS.history),
      waitSeconds: Number(process.env.BENCH_BURST_WAIT_SECONDS ?? BURST_DEFAULTS.waitSeconds),
      pgDataDir: server?.pgDataDir ?? null,
    });
    console.log(renderBurstDrain(result));
  } finally {
    await server?.close();
  }
}

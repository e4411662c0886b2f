// Messaging latency (docs/PERFORMANCE.md, "Messaging"): how soon a WhatsApp lead hears from the agent.
//  - first send: from the 201 of a messaging POST to the Twilio simulator receiving the first
//    WhatsApp send (the template), with `leadintake serve` running its job handlers in-process
//    and the scripted chat model configured (the demo's setup), over N leads POSTed at a steady rate;
//  - job start: from a turn's job being enqueued (pg-boss created_on, set in the relay's
//    transaction) to a worker claiming it (started_on), for the same jobs; the handler starts
//    right after the claim, in the same process.
// Called by bench/run.ts (runMessagingLatency), or alone:
//   MESSAGING_BENCH_DATABASE_URL=postgres://…/somedb node bench/suite/messaging-latency.ts
import crypto from 'node:crypto';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { migrate } from '../../src/db/migrate.ts';
import { createPool } from '../../src/db/pool.ts';
import { startTwilioSimulator } from '../../src/simulators/twilio/twilio-simulator.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { WorkspaceService } from '../../src/workspaces/workspace-service.ts';
import {
  freePort,
  killAllChildrenNow,
  progress,
  benchNodeFlags,
  sleep,
  startChild,
  stopChild,
  waitForHttp200,
} from '../lib/procs.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
// The compiled service, as `npm start` runs it (bench/run.ts builds it first).
const BIN = path.join(ROOT, 'dist', 'cli', 'main.js');

export interface MessagingLatencyOptions {
  /** A database the service may migrate and write to (bench/run.ts passes its `leadintake_bench`). */
  databaseUrl: string;
  /** LEADINTAKE_ENCRYPTION_KEY (64 hex characters) the service runs with. */
  encryptionKey: string;
  /** Measured leads. Default 1000. */
  leads?: number;
  /** POSTs per second, sent on a fixed schedule whatever the answers (open loop). Default 50. */
  ratePerSecond?: number;
  /** Leads sent first and not measured. Default 50. */
  warmupLeads?: number;
  /** Node flags of the service process. Default: benchNodeFlags(). */
  nodeArgs?: string[];
}

export interface LatencyStats {
  samples: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
}

export interface MessagingLatencyResult {
  leads: number;
  ratePerSecond: number;
  /** 201 → the simulator receives the first send, ms. */
  firstSend: LatencyStats;
  /** Job enqueued → claimed by a worker, ms. */
  jobStart: LatencyStats;
  /** Measured leads whose first send never arrived (within 60 s of the last POST). */
  missing: number;
  targets: { firstSendP50: number; firstSendP99: number; jobStartP50: number; jobStartP99: number };
  met: boolean;
}

const TARGETS = { firstSendP50: 100, firstSendP99: 500, jobStartP50: 10, jobStartP99: 50 };

export async function runMessagingLatency(opts: MessagingLatencyOptions): Promise<MessagingLatencyResult> {
  const leads = opts.leads ?? 1000;
  const rate = opts.ratePerSecond ?? 50;
  const warmup = opts.warmupLeads ?? 50;
  const pool = createPool(opts.databaseUrl, 2, 'leadintake-bench-messaging');
  const [twilio, chat] = await Promise.all([startTwilioSimulator(), startChatSimulator()]);
  // When each lead's first send reached the simulator: its request log is appended to as the
  // request arrives, before any answer, so timing the append times the arrival.
  const arrivals = new Map<string, number>();
  const log = twilio.requests;
  log.push = (...entries) => {
    const now = performance.now();
    for (const e of entries)
      if (e.method === 'POST' && e.params.To && !arrivals.has(e.params.To)) arrivals.set(e.params.To, now);
    return Array.prototype.push.apply(log, entries);
  };
  let service: ReturnType<typeof startChild> | null = null;
  try {
    await migrate(pool);
    // Turns queued by earlier parts of a bench run (the POST load's leads, whose workspace has no
    // WhatsApp settings) would otherwise be worked off, each into the dead-letter queue, while
    // this part measures. The bench database is disposable.
    await pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
    await pool
      .query(`DELETE FROM pgboss.job WHERE name = 'agent-turn' AND state IN ('created', 'retry')`)
      .catch(() => {});
    const slug = `bench-wa-${crypto.randomBytes(3).toString('hex')}`;
    const workspaces = new WorkspaceService(pool, new SecretBox(parseEncryptionKey(opts.encryptionKey)), 100_000_000);
    const created = await workspaces.create({
      slug,
      name: 'Messaging bench',
      channel: 'whatsapp',
      config: {
        whatsapp: {
          provider: 'twilio',
          accountSid: twilio.accountSid,
          authToken: twilio.authToken,
          from: twilio.sender,
          templateContentSid: twilio.templateSid,
        },
      },
    });
    if (created.kind !== 'created') throw new Error('bench workspace slug taken');
    const apiKey = created.apiKey.key;

    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    progress(`messaging: starting leadintake serve (job handlers in-process) on ${url}`);
    const nodeArgs = opts.nodeArgs ?? benchNodeFlags();
    service = startChild(
      'leadintake serve (messaging)',
      process.execPath,
      [...nodeArgs, BIN, 'serve', '--port', String(port)],
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

    const run = crypto.randomInt(100, 999);
    // Possible Berlin numbers (the API refuses numbers that cannot exist), already in E.164.
    const phoneOf = (i: number) => `+4930${run}${String(i).padStart(5, '0')}`;
    const post = async (i: number): Promise<{ leadId: string; at: number }> => {
      const res = await fetch(`${url}/api/public/leads`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ name: `Bench Lead ${i}`, phone: phoneOf(i), consent: true }),
      });
      const at = performance.now();
      const body = (await res.json()) as { leadId?: string };
      if (res.status !== 201 || !body.leadId) throw new Error(`messaging POST answered ${res.status}`);
      return { leadId: body.leadId, at };
    };
    const sendAll = async (from: number, count: number) => {
      const t0 = performance.now();
      const pending: Promise<{ leadId: string; at: number } | Error>[] = [];
      for (let i = 0; i < count; i++) {
        const due = t0 + (i * 1000) / rate - performance.now();
        if (due > 0) await sleep(due);
        // Caught at once: a failing POST must not become an unhandled rejection mid-schedule.
        pending.push(post(from + i).catch((err: Error) => err));
      }
      const results = await Promise.all(pending);
      const failed = results.find((r) => r instanceof Error);
      if (failed) throw failed;
      return results as { leadId: string; at: number }[];
    };
    const waitForSends = async (from: number, count: number) => {
      const deadline = Date.now() + 60_000;
      const seen = () =>
        Array.from({ length: count }, (_, i) => arrivals.has(`whatsapp:${phoneOf(from + i)}`)).filter(Boolean).length;
      while (seen() < count && Date.now() < deadline) await sleep(50);
    };

    progress(`messaging: warm-up ${warmup} leads`);
    await sendAll(0, warmup);
    await waitForSends(0, warmup);
    progress(`messaging: ${leads} leads at ${rate}/s`);
    const posted = await sendAll(warmup, leads);
    await waitForSends(warmup, leads);

    const firstSend: number[] = [];
    posted.forEach((p, i) => {
      const arrived = arrivals.get(`whatsapp:${phoneOf(warmup + i)}`);
      if (arrived !== undefined) firstSend.push(arrived - p.at);
    });
    const { rows } = await pool.query(
      `SELECT extract(epoch FROM started_on - created_on) * 1000 AS ms FROM pgboss.job
        WHERE name = 'agent-turn' AND started_on IS NOT NULL AND data->>'leadId' = ANY($1::text[])`,
      [posted.map((p) => p.leadId)],
    );
    const result: MessagingLatencyResult = {
      leads,
      ratePerSecond: rate,
      firstSend: stats(firstSend),
      jobStart: stats(rows.map((r) => Number(r.ms))),
      missing: leads - firstSend.length,
      targets: TARGETS,
      met: false,
    };
    result.met =
      result.missing === 0 &&
      result.firstSend.p50 <= TARGETS.firstSendP50 &&
      result.firstSend.p99 <= TARGETS.firstSendP99 &&
      result.jobStart.p50 <= TARGETS.jobStartP50 &&
      result.jobStart.p99 <= TARGETS.jobStartP99;
    return result;
  } finally {
    if (service) await stopChild(service);
    await Promise.all([twilio.close(), chat.close()]);
    await pool.end();
  }
}

export function stats(values: number[]): LatencyStats {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { samples: sorted.length, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted.at(-1) ?? NaN };
}

/** The result as a Markdown section for the bench report. */
export function renderMessagingLatency(r: MessagingLatencyResult): string {
  const ms = (n: number) => (Number.isNaN(n) ? '–' : n.toFixed(1));
  const row = (name: string, s: LatencyStats, p50: number, p99: number) =>
    `| ${name} | ${s.samples} | ${ms(s.p50)} | ${ms(s.p90)} | ${ms(s.p99)} | ${ms(s.max)} | ` +
    `p50 ≤ ${p50}, p99 ≤ ${p99} |`;
  return [
    '## Messaging latency',
    '',
    `${r.leads} messaging leads POSTed at ${r.ratePerSecond}/s to \`leadintake serve\` (job handlers in-process), ` +
      'Twilio and chat-model simulators.' +
      (r.missing > 0 ? ` **${r.missing} first sends never arrived.**` : ''),
    '',
    '| ms | samples | p50 | p90 | p99 | max | target |',
    '|---|---|---|---|---|---|---|',
    row('201 → first WhatsApp send received', r.firstSend, r.targets.firstSendP50, r.targets.firstSendP99),
    row('job enqueued → handler start', r.jobStart, r.targets.jobStartP50, r.targets.jobStartP99),
    '',
    `Targets ${r.met ? 'met' : '**not met**'}.`,
    '',
  ].join('\n');
}

if (import.meta.main) {
  process.on('exit', killAllChildrenNow);
  const databaseUrl = process.env.MESSAGING_BENCH_DATABASE_URL;
  if (!databaseUrl) {
    console.error('Set MESSAGING_BENCH_DATABASE_URL to a database the benchmark may write to.');
    process.exit(1);
  }
  const leads = Number(process.env.MESSAGING_BENCH_LEADS ?? 1000);
  const ratePerSecond = Number(process.env.MESSAGING_BENCH_RATE ?? 50);
  const result = await runMessagingLatency({
    databaseUrl,
    encryptionKey: crypto.randomBytes(32).toString('hex'),
    leads,
    ratePerSecond,
  });
  console.log(renderMessagingLatency(result));
}

import http from 'node:http';
import { Gauge, Registry } from 'prom-client';
import type { Pool } from '../db/pool.ts';
import type { Logger } from '../shared/logger.ts';
import { registry } from './metrics.ts';

// GET /metrics: the process's metrics plus the job queues' state, read from pg-boss's tables at
// each scrape (every process reports the same queue figures: aggregate with max, not sum).
// Served only on METRICS_PORT, a port of its own (`serve` and `worker` alike), never on the public
// port: the figures span every workspace of the installation, which no tenant may read, and a
// port apart is kept off the internet by the load balancer or the firewall without any secret to
// hand out to the scraper (docs/OPERATIONS.md).

const JOBS_SQL = `
  SELECT q.name AS queue,
         (SELECT count(*) FROM pgboss.job j WHERE j.name = q.name AND j.state IN ('created', 'retry'))::int AS queued,
         (SELECT count(*) FROM pgboss.job j WHERE j.name = q.name AND j.state = 'active')::int AS active,
         (SELECT count(*) FROM pgboss.job j WHERE j.name = q.name AND j.state = 'failed')::int AS failed,
         (SELECT count(*) FROM pgboss.job j WHERE j.name = q.dead_letter
         AND j.state IN ('created', 'retry'))::int AS dead
    FROM pgboss.queue q
   WHERE q.name NOT IN (SELECT dead_letter FROM pgboss.queue WHERE dead_letter IS NOT NULL)`;

const ENDPOINTS_SQL = `
  SELECT count(*) FILTER (WHERE enabled)::int AS enabled,
         count(*) FILTER (WHERE enabled AND failing_since IS NOT NULL)::int AS failing,
         count(*) FILTER (WHERE NOT enabled)::int AS disabled
    FROM webhook_endpoints`;

/** The process's registry and a jobs gauge on `pool`, as one registry. */
export function metricsRegistry(pool: Pool, log: Logger): Registry {
  const jobs = new Registry();
  new Gauge({
    name: 'leadintake_jobs',
    help:
      'Jobs by queue and state: queued (waiting or waiting to retry), active, failed (kept by retention), ' +
      'dead (waiting in the dead-letter queue for an operator).',
    labelNames: ['queue', 'state'] as const,
    registers: [jobs],
    async collect() {
      this.reset();
      try {
        const { rows } = await pool.query(JOBS_SQL);
        for (const r of rows)
          for (const state of ['queued', 'active', 'failed', 'dead'] as const)
            this.set({ queue: r.queue, state }, r[state]);
      } catch (err) {
        // The scrape still answers with everything else; the missing series say the database did not.
        log.warn({ err }, 'job metrics unavailable');
      }
    },
  });
  new Gauge({
    name: 'leadintake_webhook_endpoints',
    help:
      'Outbound webhook endpoints by state: enabled, failing (enabled, its latest attempts failed), ' +
      'disabled (after 5 days of failures).',
    labelNames: ['state'] as const,
    registers: [jobs],
    async collect() {
      this.reset();
      try {
        const { rows } = await pool.query(ENDPOINTS_SQL);
        for (const state of ['enabled', 'failing', 'disabled'] as const) this.set({ state }, rows[0][state]);
      } catch (err) {
        log.warn({ err }, 'webhook endpoint metrics unavailable');
      }
    },
  });
  return Registry.merge([registry, jobs]);
}

/** The metrics endpoint of `serve` and `worker` (METRICS_PORT): GET /metrics, nothing else. */
export async function startMetricsServer(opts: {
  host: string;
  port: number;
  pool: Pool;
  log: Logger;
}): Promise<{ address: string; close(): Promise<void> }> {
  const merged = metricsRegistry(opts.pool, opts.log);
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || req.url !== '/metrics') {
      res.writeHead(404, { 'content-type': 'application/json' }).end('{"ok":false,"error":"Not found."}');
      return;
    }
    merged.metrics().then(
      (text) => res.writeHead(200, { 'content-type': merged.contentType }).end(text),
      () =>
        res.writeHead(500, { 'content-type': 'application/json' }).end('{"ok":false,"error":"Internal server error."}'),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => resolve());
  });
  const a = server.address() as { address: string; port: number };
  return {
    address: `http://${a.address}:${a.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

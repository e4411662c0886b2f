// pgbench baselines against the service's real tables: the bare lead write (lead + outbox
// row, 4 round trips) and the read by id + workspace on the seeded leads.
import fs from 'node:fs';
import path from 'node:path';
import { progress, runChild } from '../lib/procs.ts';

export const PGBENCH = process.env.PGBENCH ?? '/usr/bin/pgbench';

// Phones: '+49' then run * 1e9 + client_id * 1e7 + n. `run` differs for every pgbench
// invocation and `n` counts per client, so no two transactions of any run collide, and
// they never meet the seeded ('+1444…') phones; the API's ('+4930…') are gone by then (settle()).
const WRITE_SQL = `\\set n :n + 1
\\set p :run * 1000000000 + :client_id * 10000000 + :n
BEGIN;
INSERT INTO leads (workspace_id, name, phone, phone_normalized, email, consented_at)
  VALUES (:ws::uuid, 'Bench Lead', '+49' || :p::text, '+49' || :p::text, 'pgbench@example.com', now())
  RETURNING id AS lead_id \\gset
INSERT INTO outbox (queue, payload)
  VALUES ('agent-turn', jsonb_build_object('leadId', :lead_id::uuid, 'workspaceId', :ws::uuid));
COMMIT;
`;

// Seeded leads have id md5(n)::uuid for n in 1..N, so pgbench can address them.
const readSql = (seeded: number) => `\\set n random(1, ${seeded})
SELECT id, name, phone, email, goal, status, qualification_notes, booking_uid, booking_start,
       metadata, form_responses, created_at, updated_at
  FROM leads WHERE id = md5(:n::text)::uuid AND workspace_id = :ws::uuid;
`;

export interface PgbenchScripts {
  write: string;
  read: string;
}

export function writeScripts(dir: string, seeded: number): PgbenchScripts {
  const write = path.join(dir, 'write.sql');
  const read = path.join(dir, 'read.sql');
  fs.writeFileSync(write, WRITE_SQL);
  fs.writeFileSync(read, readSql(seeded));
  return { write, read };
}

export interface PgbenchResult {
  clients: number;
  tps: number;
  latencyAvgMs: number;
  transactions: number;
  failed: number;
}

let runCounter = 0;
const runBase = Math.floor(Date.now() / 1000) % 50_000; // differs between reruns

export async function runPgbench(opts: {
  url: string;
  script: string;
  clients: number;
  seconds: number;
  workspaceId: string;
}): Promise<PgbenchResult> {
  const u = new URL(opts.url);
  const env = {
    ...process.env,
    PGHOST: u.hostname,
    PGPORT: u.port || '5432',
    PGUSER: decodeURIComponent(u.username),
    PGPASSWORD: decodeURIComponent(u.password),
    PGDATABASE: u.pathname.slice(1),
    PGAPPNAME: 'leadintake-bench-pgbench',
  };
  const run = runBase * 100 + (++runCounter % 100);
  const args = [
    '-n',
    '-M',
    'prepared',
    '-c',
    String(opts.clients),
    '-j',
    '2',
    '-T',
    String(opts.seconds),
    '-D',
    `run=${run}`,
    '-D',
    'n=0',
    '-D',
    `ws=${opts.workspaceId}`,
    '-f',
    opts.script,
  ];
  const out = await runChild('pgbench', PGBENCH, args, { env, timeoutMs: (opts.seconds + 60) * 1000 });
  const num = (re: RegExp) => {
    const m = re.exec(out);
    return m ? Number(m[1]) : NaN;
  };
  const tps = num(/^tps = ([\d.]+)/m);
  // On a busy machine 64 clients can spend the whole run connecting (pgbench counts that time):
  // the run then has no figure, which the report shows as n/a rather than ending the bench.
  if (!Number.isFinite(tps))
    progress(
      `pgbench printed no tps (machine too busy?): ${out
        .split('\n')
        .filter((l) => l.startsWith('number of'))
        .join('; ')}`,
    );
  return {
    clients: opts.clients,
    tps,
    latencyAvgMs: num(/^latency average = ([\d.]+) ms/m),
    transactions: num(/^number of transactions actually processed: (\d+)/m),
    failed: num(/^number of failed transactions: (\d+)/m) || 0,
  };
}

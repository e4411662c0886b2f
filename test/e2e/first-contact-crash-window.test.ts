import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, it } from 'node:test';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { eventually, spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';

// The crash window of a batch of first contacts (docs/WHATSAPP.md, "First contacts in batches"):
// a send the provider accepted is recorded as soon as its answer is back, not once the slowest
// send of its batch returns, so a worker SIGKILLed mid-batch sends again only what was truly in
// flight. A real `leadintake worker` process takes one batch of leads; in front of the simulated
// Twilio, a proxy answers the first sends at once and holds the answers of the others (the
// provider has accepted them: a slow provider), and no status callback is ever posted (the
// proxy drops StatusCallback), so nothing but the worker's own recording can tell a send
// happened. The worker is killed once the quick sends are recorded, while the slow ones are still
// in flight; a second worker then finishes the batch.

const LEADS = 8;
const QUICK = 5;

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };
let proxy: Server;
let proxyUrl = '';
const workers: WorkerProcess[] = [];
/** Sends whose answers the proxy holds back, while `holding`. */
const held: ServerResponse[] = [];
let holding = true;
let sends = 0;

before(async () => {
  h = await startWhatsappHarness({ startRelay: true });
  ws = await h.workspace('twilio');
  proxy = createServer((req, res) => void forward(req, res));
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});
after(async () => {
  await Promise.all(workers.map((w) => w.kill()));
  for (const res of held) res.destroy();
  proxy.closeAllConnections();
  await new Promise((resolve) => proxy.close(resolve));
  await h.close();
});

/** Passes a request to the simulator; a message's send without its StatusCallback, answered now or held. */
async function forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  let body = Buffer.concat(chunks).toString();
  const isSend = req.method === 'POST' && req.url!.endsWith('/Messages.json');
  if (isSend) {
    const form = new URLSearchParams(body);
    form.delete('StatusCallback');
    body = form.toString();
  }
  const answer = await fetch(`${h.twilio.url}${req.url}`, {
    method: req.method!,
    headers: {
      authorization: req.headers.authorization ?? '',
      'content-type': req.headers['content-type'] ?? 'application/x-www-form-urlencoded',
    },
    ...(req.method === 'GET' ? {} : { body }),
  });
  const text = await answer.text();
  // Accepted by the provider; its answer to the worker is on its way (slowly).
  if (isSend && holding && ++sends > QUICK) return void held.push(res);
  res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' }).end(text);
}

const query = async (sql: string, values: unknown[] = []) => (await h.app.db.pool.query(sql, values)).rows;

it(`a worker killed mid-batch: only the ${LEADS - QUICK} sends in flight are sent twice`, async () => {
  const phones: string[] = [];
  const ids: string[] = [];
  for (let i = 0; i < LEADS; i++) {
    const raw = uniquePhone();
    phones.push(`+${raw.replace(/\D/g, '')}`);
    ids.push((await h.submit(ws.apiKey, { phone: raw })).leadId);
  }
  // Every job queued before the worker starts, so its first fetch takes them all as one batch.
  await eventually('the jobs to be queued', async () => {
    const [r] = await query(
      `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'agent-turn' AND state = 'created'`,
    );
    return r.n === LEADS ? true : undefined;
  });
  const env = {
    TWILIO_BASE_URL: proxyUrl,
    JOB_HEARTBEAT_SECONDS: '10',
    JOB_MONITOR_SECONDS: '1',
    WORKER_CONCURRENCY: '1',
    WORKER_BATCH_SIZE: String(LEADS),
    // The worker waits for the slow answers as long as the test runs (its default gives up after 10 s).
    WHATSAPP_TIMEOUT_MS: '600000',
  };
  const first = spawnWorker(h.workerEnv(env));
  workers.push(first);

  // The quick sends recorded while the slow ones of the same batch are still with the provider.
  await eventually(
    'the quick sends to be recorded while the slow ones are in flight',
    async () => {
      const [r] = await query(
        `SELECT count(*)::int AS n FROM whatsapp_messages WHERE direction = 'outbound'
          AND provider_message_id IS NOT NULL AND lead_id = ANY($1::uuid[])`,
        [ids],
      );
      const waiting = held.filter((res) => !res.socket?.destroyed).length;
      return waiting === LEADS - QUICK && r.n === QUICK ? true : undefined;
    },
    20_000,
  ).catch((err: Error) => assert.fail(`${err.message}\n${first.output()}`));
  const inFlight = held.length;
  await first.kill('SIGKILL');

  holding = false;
  workers.push(spawnWorker(h.workerEnv(env)));
  await eventually(
    'every lead contacted and every job finished',
    async () => {
      const [r] = await query(
        `SELECT count(*) FILTER (WHERE state = 'sent')::int AS sent FROM agent_turns WHERE lead_id = ANY($1::uuid[])`,
        [ids],
      );
      const [q] = await query(
        `SELECT count(*)::int AS n FROM pgboss.job
          WHERE name = 'agent-turn' AND state IN ('created', 'retry', 'active')`,
      );
      return r.sent === LEADS && q.n === 0 ? true : undefined;
    },
    60_000,
  );

  const perLead = phones.map((phone) => h.twilio.messages.filter((m) => m.to === phone).length);
  assert.ok(
    perLead.every((n) => n >= 1),
    `every lead got its template: ${perLead}`,
  );
  const duplicates = perLead.reduce((a, n) => a + n - 1, 0);
  assert.ok(duplicates <= inFlight, `${duplicates} templates sent twice; ${inFlight} sends were in flight at the kill`);
});

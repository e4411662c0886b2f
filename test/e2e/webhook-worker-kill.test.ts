import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { WebhookEndpointService, isEndpointError } from '../../src/webhooks/webhook-endpoint-service.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { postLead } from '../helpers/http.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';
import { eventually, spawnWorker, type WorkerProcess } from '../helpers/worker-process.ts';

// A `leadintake worker` killed (SIGKILL) while its webhook attempt waits on the receiver loses
// no event: the job is retried once its heartbeat lapses, by another worker process.

let app: TestApp;
let dir: string;
const children: WorkerProcess[] = [];
const seen: Array<{ id: string; type: string }> = [];
let held: ServerResponse | undefined;
let firstArrived: () => void;
const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
let closeReceiver: () => Promise<void>;
let url: string;

before(async () => {
  app = await startTestApp();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leadintake-webhook-kill-'));
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      seen.push({ id: String(req.headers['webhook-id']), type: JSON.parse(body).type });
      // The first request is never answered: its worker is killed while it waits.
      if (!held) {
        held = res;
        firstArrived();
        return;
      }
      res.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  closeReceiver = () =>
    new Promise((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
});

after(async () => {
  await Promise.all(children.map((c) => c.kill('SIGKILL')));
  await closeReceiver?.();
  await app?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const workerEnv = {
  LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
  LOG_LEVEL: 'warn',
  DB_POOL_MAX: '4',
  JOB_HEARTBEAT_SECONDS: '10',
  // The receiver is on 127.0.0.1.
  EGRESS_ALLOW_PRIVATE_NETWORKS: 'true',
  JOB_MONITOR_SECONDS: '1',
  JOB_POLL_SECONDS: '1',
  WORKER_CONCURRENCY: '1',
};

describe('a killed worker', () => {
  it('loses no webhook event', { timeout: 180_000 }, async () => {
    const ws = await app.createWorkspace('whatsapp');
    const endpoints = new WebhookEndpointService(
      app.db.pool,
      new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY)),
      () => new Date(),
      { allowPrivateNetworks: true },
    );
    const added = await endpoints.add(ws.slug, url, ['lead.created']);
    if (isEndpointError(added)) throw new Error('add failed');
    const created = await postLead(app.http, ws.sandboxKey, {
      name: 'Kill Test',
      phone: '+1 555 301 0004',
      consent: true,
    });
    assert.equal(created.status, 201);
    // Only the webhook matters here: the lead's first agent turn is dropped before any worker runs.
    await app.db.pool.query(`DELETE FROM outbox WHERE queue = 'agent-turn'`);
    const env = { ...workerEnv, DATABASE_URL: app.db.url, LEADINTAKE_DATA_DIR: path.join(dir, 'data') };

    const first = spawnWorker(env);
    children.push(first);
    await arrived;
    assert.equal(await first.kill('SIGKILL'), null);
    const second = spawnWorker(env);
    children.push(second);

    const status = await eventually(
      'the delivery to succeed',
      async () => {
        const { rows } = await app.db.pool.query(`SELECT status FROM webhook_deliveries WHERE endpoint_id = $1`, [
          added.endpoint.id,
        ]);
        return rows[0]?.status === 'succeeded' ? rows[0].status : undefined;
      },
      150_000,
    );
    assert.equal(status, 'succeeded', second.output());
    // The same message twice (at least once): the killed attempt's, and the one that succeeded.
    assert.equal(seen.length, 2);
    assert.equal(seen[0]!.id, seen[1]!.id);
    assert.equal(seen[1]!.type, 'lead.created');
  });
});

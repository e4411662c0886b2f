import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { PgBoss } from 'pg-boss';
import { WEBHOOK_DELIVERY_QUEUE } from '../../src/jobs/queues.ts';
import type { OutboxRelay } from '../../src/jobs/outbox-relay.ts';
import type { WebhookDeliveryService } from '../../src/webhooks/webhook-delivery-service.ts';

// A webhook receiver on 127.0.0.1 that records every request and answers with the statuses the
// test queues (200 once they run out), and a drain that runs webhook-delivery jobs in the test's
// own process until none is left: no worker, no sleeps.

export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  json: any;
  answered: number;
}

export interface WebhookReceiver {
  url: string;
  received: ReceivedWebhook[];
  /** Statuses for the next requests, in order. */
  answers: number[];
  close(): Promise<void>;
}

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: ReceivedWebhook[] = [];
  const answers: number[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (c: Buffer) => (body += c.toString()));
    req.on('end', () => {
      const status = answers.shift() ?? 200;
      received.push({ headers: req.headers, body, json: JSON.parse(body), answered: status });
      res
        .writeHead(status, { 'content-type': 'text/plain' })
        .end(status === 200 ? 'thanks' : `receiver says ${status}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    received,
    answers,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Relays the outbox and runs webhook jobs until none is ready; returns the attempts' results in order. */
export async function drainWebhooks(o: {
  relay: OutboxRelay;
  boss: PgBoss;
  service: WebhookDeliveryService;
}): Promise<string[]> {
  const results: string[] = [];
  for (let round = 0; round < 200; round++) {
    await o.relay.drain();
    const jobs = await o.boss.fetch<{ deliveryId: string }>(WEBHOOK_DELIVERY_QUEUE, { batchSize: 1 });
    if (jobs.length === 0) return results;
    for (const job of jobs) {
      results.push(await o.service.attempt(job.data.deliveryId));
      await o.boss.complete(WEBHOOK_DELIVERY_QUEUE, job.id);
    }
  }
  throw new Error('webhook jobs did not run out within 200 rounds');
}

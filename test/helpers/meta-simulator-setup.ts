import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach } from 'node:test';
import {
  META_SIM,
  startMetaSimulator,
  type MetaSimulator,
  type MetaSimulatorOptions,
} from '../../src/simulators/meta/meta-simulator.ts';

// The Meta simulator tests' setup: for each test a fresh simulator on a clock the test sets, and a
// tiny webhook receiver on 127.0.0.1 the simulator posts its webhooks to.

export interface Received {
  headers: IncomingHttpHeaders;
  raw: Buffer;
}

export interface MetaSimulatorSetup {
  sim: MetaSimulator;
  /** Every POST the receiver got in this test: raw bytes and headers. */
  received: Received[];
  webhookUrl: string;
  /** The simulator's now; a test moves it by assigning. */
  clock: Date;
  /** A new simulator with these options, posting to the receiver. */
  restart(opts?: MetaSimulatorOptions): Promise<void>;
}

/** Registers the calling file's beforeEach/afterEach; the fields are set once its beforeEach has run. */
export function metaSimulatorSetup(): MetaSimulatorSetup {
  let receiver: Server;
  const s = {
    async restart(opts: MetaSimulatorOptions = {}) {
      await s.sim?.close();
      s.sim = await startMetaSimulator({ now: () => s.clock, ...opts });
      s.sim.setWebhookUrl(META_SIM.phoneNumberId, s.webhookUrl);
    },
  } as MetaSimulatorSetup;

  beforeEach(async () => {
    const received: Received[] = [];
    s.received = received;
    // A tiny webhook receiver: keeps the raw bytes and headers of every POST, answers 200.
    receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const chunk of req) chunks.push(chunk as Buffer);
      received.push({ headers: req.headers, raw: Buffer.concat(chunks) });
      res.writeHead(200).end();
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    s.webhookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/whatsapp/meta/acme/webhook`;
    s.clock = new Date('2025-03-03T09:00:00Z');
    await s.restart();
  });
  afterEach(async () => {
    await s.sim.close();
    receiver.closeAllConnections();
    await new Promise<void>((resolve) => receiver.close(() => resolve()));
  });

  return s;
}

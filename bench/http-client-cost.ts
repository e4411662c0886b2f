// What an outbound provider request costs the service's process, by HTTP client:
// `node bench/http-client-cost.ts` POSTs a Twilio-sized form (a WhatsApp send) to a local server in
// a child process, 16 at a time, with Node's `fetch` (what the provider clients used until
// 2026-11-26), with `http.request` on a keep-alive agent, and with `providerRequest`
// (src/shared/provider-request.ts: http.request plus what the clients need), alternated for BENCH_ROUNDS rounds (default 3) of
// BENCH_REQUESTS requests (default 10,000) after a warm-up, and prints this process's CPU per
// request (user + system, from process.cpuUsage) and the rate. A burst lead makes about one such
// request (docs/PERFORMANCE.md, "The young generation, decided").
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { providerRequest } from '../src/shared/provider-request.ts';

if (process.argv[2] === 'server') {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(201, { 'content-type': 'application/json' });
      res.end('{"sid":"SM0123456789abcdef0123456789abcdef","status":"queued"}');
    });
  });
  server.listen(0, '127.0.0.1', () => process.send!((server.address() as AddressInfo).port));
} else {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const requests = Number(process.env.BENCH_REQUESTS ?? 10_000);
  const child = fork(fileURLToPath(import.meta.url), ['server']);
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
  const url = `http://127.0.0.1:${port}/2010-04-01/Accounts/AC0123/Messages.json`;
  const body = 'To=whatsapp%3A%2B15551234567&From=whatsapp%3A%2B15550000000&ContentSid=HX0123&StatusCallback=http%3A%2F%2F127.0.0.1%2Fwebhooks';
  const headers = { authorization: 'Basic QUMwMTIzOnRva2Vu', 'content-type': 'application/x-www-form-urlencoded' };
  const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const clients: Record<string, () => Promise<unknown>> = {
    fetch: async () => (await fetch(url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })).json(),
    'http.request': () => new Promise((resolve, reject) => {
      const req = http.request(url, { method: 'POST', headers: { ...headers, 'content-length': Buffer.byteLength(body) }, agent, signal: AbortSignal.timeout(10_000) }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString('utf8'))));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    }),
    providerRequest: async () => JSON.parse((await providerRequest('twilio', url, { method: 'POST', headers, body, signal: AbortSignal.timeout(10_000) })).text),
  };
  const run = async (send: () => Promise<unknown>, n: number) => {
    const cpu = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 16 }, async () => {
      while (next++ < n) await send();
    }));
    const used = process.cpuUsage(cpu);
    return { cpuUs: (used.user + used.system) / n, rps: n / ((performance.now() - t0) / 1000) };
  };
  for (const send of Object.values(clients)) await run(send, 3_000);
  for (let r = 1; r <= rounds; r++) {
    // Rotated, so no client always runs first or last in a round.
    const names = Object.keys(clients).map((_, i, all) => all[(i + r) % all.length]!);
    for (const name of names) {
      const res = await run(clients[name]!, requests);
      console.log(`round ${r}, ${name}: ${res.cpuUs.toFixed(1)} µs of CPU per request, ${res.rps.toFixed(0)} requests a second`);
    }
  }
  child.kill();
}

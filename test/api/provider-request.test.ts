// providerRequest (src/shared/provider-request.ts), the HTTP client under every provider client,
// against local servers that misbehave on purpose: compressed and cut bodies, stalls, redirects,
// reused connections, and HTTPS with a certificate the process does or does not trust.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test, type TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import {
  IDLE_CONNECTION_MS,
  MAX_RESPONSE_BYTES,
  ProviderNetworkError,
  providerRequest,
} from '../../src/shared/provider-request.ts';

const run = promisify(execFile);
const MODULE = fileURLToPath(new URL('../../src/shared/provider-request.ts', import.meta.url));

async function listen(
  t: TestContext,
  handler: http.RequestListener,
  keepAliveTimeout?: number,
): Promise<{ url: string; connections: () => number }> {
  const server = http.createServer(handler);
  if (keepAliveTimeout !== undefined) server.keepAliveTimeout = keepAliveTimeout;
  let connections = 0;
  server.on('connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, connections: () => connections };
}

const get = (url: string, timeoutMs = 2000) =>
  providerRequest('test', url, { method: 'GET', headers: {}, signal: AbortSignal.timeout(timeoutMs) });

test('a POST arrives with its body, length and headers; the answer is read whole with its headers', async (t) => {
  let seen: { method?: string; headers?: http.IncomingHttpHeaders; body?: string } = {};
  const { url } = await listen(t, (req, res) => {
    let body = '';
    req
      .setEncoding('utf8')
      .on('data', (c) => (body += c))
      .on('end', () => {
        seen = { method: req.method, headers: req.headers, body };
        res.setHeader('Retry-After', '3');
        res.setHeader('Set-Cookie', ['a=1', 'b=2']);
        res.writeHead(201, { 'content-type': 'application/json' }).end('{"ok":"é"}');
      });
  });
  const res = await providerRequest('test', `${url}/x?y=1`, {
    method: 'POST',
    headers: { authorization: 'Bearer k', 'content-type': 'application/json' },
    body: '{"name":"Zoë"}',
    signal: AbortSignal.timeout(2000),
  });
  assert.deepEqual({ status: res.status, ok: res.ok, text: res.text }, { status: 201, ok: true, text: '{"ok":"é"}' });
  assert.equal(res.headers.get('RETRY-AFTER'), '3');
  assert.equal(res.headers.get('set-cookie'), 'a=1, b=2');
  assert.equal(res.headers.get('x-missing'), null);
  assert.equal(seen.method, 'POST');
  assert.equal(seen.body, '{"name":"Zoë"}');
  assert.equal(seen.headers?.['content-length'], String(Buffer.byteLength('{"name":"Zoë"}')));
  assert.equal(seen.headers?.authorization, 'Bearer k');
  assert.equal(seen.headers?.['user-agent'], 'leadintake');
});

test('requests one after another reuse kept-alive connections, not one each', async (t) => {
  const server = await listen(t, (_req, res) => res.end('{}'));
  // undici may open a second connection while the first is still being handed back to its pool.
  for (let i = 0; i < 2; i++) assert.equal((await get(server.url)).status, 200);
  const opened = server.connections();
  for (let i = 0; i < 5; i++) assert.equal((await get(server.url)).status, 200);
  assert.equal(server.connections(), opened);
});

test('an idle kept-alive connection is closed by the client after IDLE_CONNECTION_MS', async (t) => {
  let closed: Promise<number> | undefined;
  const server = await listen(
    t,
    (req, res) => {
      closed ??= new Promise((resolve) => req.socket.once('close', () => resolve(performance.now())));
      res.end('{}');
    },
    60_000,
  ); // the server would keep it a minute (and says so in its Keep-Alive header): the close is the client's
  const answered = await get(server.url).then(() => performance.now());
  const closedAt = await Promise.race([
    closed!,
    new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), IDLE_CONNECTION_MS + 3000)),
  ]);
  assert.ok(closedAt !== undefined, 'the idle connection was closed');
  // Not a timing assertion of speed: the close must not come before the idle time (minus the timer's slack).
  assert.ok(closedAt - answered >= IDLE_CONNECTION_MS - 100, `closed after ${Math.round(closedAt - answered)} ms`);
});

test('an error status is an answer, not a throw; a redirect is not followed', async (t) => {
  const { url } = await listen(t, (req, res) => {
    if (req.url === '/moved') res.writeHead(301, { location: '/elsewhere' }).end();
    else res.writeHead(503).end('upstream down');
  });
  const down = await get(`${url}/x`);
  assert.deepEqual(
    { status: down.status, ok: down.ok, text: down.text },
    { status: 503, ok: false, text: 'upstream down' },
  );
  const moved = await get(`${url}/moved`);
  assert.deepEqual(
    { status: moved.status, ok: moved.ok, location: moved.headers.get('location') },
    { status: 301, ok: false, location: '/elsewhere' },
  );
});

test('a body compressed without being asked is inflated (gzip, deflate, br), also in an error answer', async (t) => {
  const json = '{"sid":"SM1","name":"Zoë"}';
  const encoders = { gzip: zlib.gzipSync, deflate: zlib.deflateSync, br: zlib.brotliCompressSync };
  const { url } = await listen(t, (req, res) => {
    const [, encoding, status] = req.url!.split('/') as [string, keyof typeof encoders, string];
    res.writeHead(Number(status), { 'content-encoding': encoding }).end(encoders[encoding](json));
  });
  for (const encoding of ['gzip', 'deflate', 'br']) {
    for (const status of [200, 400])
      assert.equal((await get(`${url}/${encoding}/${status}`)).text, json, `${encoding} ${status}`);
  }
});

test('a connection cut in the middle of the body fails with the socket error, not a short answer', async (t) => {
  const gzipped = zlib.gzipSync('{"sid":"SM1","status":"queued"}');
  const { url } = await listen(t, (req, res) => {
    const compressed = req.url === '/gzip';
    res.writeHead(200, { 'content-length': '100', ...(compressed ? { 'content-encoding': 'gzip' } : {}) });
    res.write(compressed ? gzipped.subarray(0, 12) : '{"sid":');
    setImmediate(() => res.socket?.destroy());
  });
  for (const p of ['/plain', '/gzip']) {
    const err = await get(`${url}${p}`).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof ProviderNetworkError, `${p}: ${String(err)}`);
    assert.equal((err.cause as { code?: string }).code, 'UND_ERR_SOCKET', p);
    assert.doesNotMatch(err.message, /plain|gzip/, 'the message names the origin only');
  }
});

test(
  'an answer larger than MAX_RESPONSE_BYTES, even compressed, ' + 'is refused once past the limit, not read whole',
  async (t) => {
    const big = zlib.gzipSync(Buffer.alloc(MAX_RESPONSE_BYTES + 1, 0x20));
    const { url } = await listen(t, (req, res) => {
      if (req.url === '/gzip') return res.writeHead(200, { 'content-encoding': 'gzip' }).end(big);
      res.writeHead(200);
      // Written in pieces until the client hangs up: an endless answer must not be waited for.
      const piece = Buffer.alloc(64 * 1024, 0x20);
      const write = () => {
        while (!res.destroyed && res.write(piece));
      };
      res.on('drain', write);
      write();
    });
    for (const p of ['/endless', '/gzip']) {
      const err = await get(`${url}${p}`, 10_000).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof ProviderNetworkError, `${p}: ${String(err)}`);
      assert.equal((err.cause as { code?: string }).code, 'UND_ERR_RES_EXCEEDED_MAX_SIZE', p);
    }
    const exact = await listen(t, (req, res) => {
      const body = Buffer.alloc(MAX_RESPONSE_BYTES, 0x20);
      if (req.url === '/gzip') return res.writeHead(200, { 'content-encoding': 'gzip' }).end(zlib.gzipSync(body));
      res.end(body);
    });
    for (const p of ['/plain', '/gzip'])
      assert.equal((await get(`${exact.url}${p}`, 10_000)).text.length, MAX_RESPONSE_BYTES, p);
  },
);

test('a refused connection fails with its code; an unsupported scheme is refused before any request', async () => {
  // Port 9 (discard) is closed on these machines: the connection is refused at once.
  const refused = await get('http://127.0.0.1:9/').then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(refused instanceof ProviderNetworkError);
  assert.equal((refused.cause as { code?: string }).code, 'ECONNREFUSED');
  const ftp = await get('ftp://127.0.0.1:9/').then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(ftp instanceof ProviderNetworkError);
  assert.match(ftp.message, /unsupported protocol ftp:/);
});

test(
  'the timeout covers the body: headers then silence is a ' + 'TimeoutError, and that connection is closed',
  async (t) => {
    let stalled: Promise<void> | undefined;
    const server = await listen(t, (req, res) => {
      if (req.url !== '/stall') return res.end('{}');
      stalled = new Promise((resolve) => req.socket.once('close', () => resolve()));
      res.writeHead(200, { 'content-length': '10' }).write('{');
    });
    const err = await get(`${server.url}/stall`, 100).then(
      () => undefined,
      (e: unknown) => e,
    );
    assert.ok(err instanceof DOMException && err.name === 'TimeoutError', String(err));
    const closed = await Promise.race([
      stalled!.then(() => true),
      new Promise((resolve) => setTimeout(resolve, 2000, false)),
    ]);
    assert.equal(closed, true, 'the timed-out connection was closed, not left open');
    assert.equal((await get(`${server.url}/ok`)).text, '{}');
  },
);

test('a signal already aborted sends nothing', async (t) => {
  const server = await listen(t, (_req, res) => res.end());
  const controller = new AbortController();
  controller.abort();
  const err = await providerRequest('test', server.url, { method: 'GET', headers: {}, signal: controller.signal }).then(
    () => undefined,
    (e: unknown) => e,
  );
  assert.ok(err instanceof DOMException && err.name === 'AbortError');
  assert.equal(server.connections(), 0);
});

// The process's trusted certificates are read at its start (NODE_EXTRA_CA_CERTS), so HTTPS is
// tried from a child process: once trusting our self-signed certificate, once not.
test('HTTPS: a trusted certificate is answered, an untrusted one is refused', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'provider-tls-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const [key, cert] = [path.join(dir, 'key.pem'), path.join(dir, 'cert.pem')];
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-keyout',
    key,
    '-out',
    cert,
    '-days',
    '1',
    '-subj',
    '/CN=127.0.0.1',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  const server = https.createServer({ key: await readFile(key), cert: await readFile(cert) }, (_req, res) =>
    res.end('{"secure":true}'),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const script = `import { providerRequest } from ${JSON.stringify(MODULE)};
    try {
      const r = await providerRequest('test', ${JSON.stringify(url)},
        { method: 'GET', headers: {}, signal: AbortSignal.timeout(5000) });
      console.log(JSON.stringify({ status: r.status, text: r.text }));
    }
    catch (e) { console.log(JSON.stringify({ name: e.name, code: e.cause?.code })); }`;
  const child = async (env: NodeJS.ProcessEnv) =>
    JSON.parse(
      (await run(process.execPath, ['--input-type=module', '-e', script], { env: { ...process.env, ...env } })).stdout,
    );
  assert.deepEqual(await child({ NODE_EXTRA_CA_CERTS: cert }), { status: 200, text: '{"secure":true}' });
  assert.deepEqual(await child({ NODE_EXTRA_CA_CERTS: '' }), {
    name: 'ProviderNetworkError',
    code: 'DEPTH_ZERO_SELF_SIGNED_CERT',
  });
});

import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { postToWebhook } from '../../src/simulators/local-http-server.ts';

// The simulators' outgoing webhooks (src/simulators/local-http-server.ts): a simulator's close
// aborts every request in flight through its one signal, and that signal holds one abort listener
// however many requests are in flight (one per request made every add scan them all: a tenth of
// the bench's process in a burst).

describe('postToWebhook under a signal', () => {
  const held: ServerResponse[] = [];
  const server = createServer((req, res) => {
    req.resume();
    // "/hang" never answers until the test lets it; anything else answers at once.
    if (req.url === '/hang') held.push(res);
    else res.end('ok');
  });
  let base = '';
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    for (const res of held) res.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('many requests in flight: one abort listener on the signal; aborting rejects them all', async () => {
    const closing = new AbortController();
    const posts = Array.from({ length: 100 }, () =>
      postToWebhook(`${base}/hang`, {}, 'x', { timeoutMs: 30_000, signal: closing.signal }),
    );
    const settled = Promise.allSettled(posts);
    while (held.length < 64) await new Promise((r) => setImmediate(r)); // the agent's 64 sockets are busy, 36 wait
    assert.equal(getEventListeners(closing.signal, 'abort').length, 1);
    closing.abort();
    const results = await settled;
    assert.ok(
      results.every((r) => r.status === 'rejected' && (r.reason as Error).name === 'AbortError'),
      'every request rejected as aborted',
    );
  });

  it('answered requests leave nothing behind; an aborted signal rejects before sending', async () => {
    const closing = new AbortController();
    for (let i = 0; i < 3; i++)
      assert.deepEqual(await postToWebhook(`${base}/ok`, {}, 'x', { timeoutMs: 5_000, signal: closing.signal }), {
        status: 200,
        text: 'ok',
      });
    assert.equal(getEventListeners(closing.signal, 'abort').length, 1);
    closing.abort();
    await assert.rejects(postToWebhook(`${base}/ok`, {}, 'x', { timeoutMs: 5_000, signal: closing.signal }), {
      name: 'AbortError',
    });
  });
});

// Every error the service sends is the spec's `{ ok: false, error }` as JSON, with our wording,
// and repeats nothing of the request: also the HTTP parser's own errors (bad framing, 431), which
// only a raw socket can provoke, and paths the router cannot decode.
import assert from 'node:assert/strict';
import net, { type AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/test-app.ts';

let app: TestApp;
let port: number;
let key: string;

before(async () => {
  app = await startTestApp();
  await app.http.listen({ port: 0, host: '127.0.0.1' });
  port = (app.http.server.address() as AddressInfo).port;
  ({ apiKey: key } = await app.createWorkspace('whatsapp'));
});
after(() => app.close());

const CANARY = 'canary7f3a';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Writes `bytes` on a fresh connection and reads one response (until its length, or the close). */
function raw(bytes: string | Buffer): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const done = () => {
      const text = data.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      if (split < 0) return reject(new Error(`no complete response: ${JSON.stringify(text)}`));
      const [statusLine, ...lines] = text.slice(0, split).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]),
      );
      resolve({ status: Number(statusLine!.split(' ')[1]), headers, body: text.slice(split + 4) });
    };
    socket.on('data', (chunk) => {
      data = Buffer.concat([data, chunk]);
      const text = data.toString('utf8');
      const split = text.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: *(\d+)/i.exec(text.slice(0, split));
      if (split >= 0 && length && Buffer.byteLength(text.slice(split + 4)) >= Number(length[1])) {
        socket.destroy();
        done();
      }
    });
    socket.on('close', () => (data.length ? done() : reject(new Error('closed without an answer'))));
    socket.on('error', () => {});
    socket.write(bytes);
  });
}

/** The one error shape: JSON with the right type, `ok: false`, a string `error`, no echo. */
function assertShape(res: RawAnswer, status: number, error: string): void {
  assert.equal(res.status, status, res.body);
  assert.match(res.headers['content-type'] ?? '', /^application\/json; charset=utf-8$/);
  const body = JSON.parse(res.body);
  assert.equal(body.ok, false);
  assert.equal(body.error, error);
  assert.ok(!res.body.includes(CANARY), `echoed the request: ${res.body}`);
  assert.ok(!Object.values(res.headers).some((v) => v.includes(CANARY)), 'echoed in a header');
}

const auth = () => `Authorization: Bearer ${key}\r\n`;

describe("the HTTP parser's own errors (raw sockets)", () => {
  test('a Content-Length that is not a number → 400 `Bad request.`', async () => {
    assertShape(
      await raw(`POST /api/public/leads HTTP/1.1\r\nHost: x\r\nContent-Length: ${CANARY}\r\n\r\n{}`),
      400,
      'Bad request.',
    );
  });

  test('two different Content-Lengths → 400', async () => {
    assertShape(
      await raw(
        `POST /api/public/leads?${CANARY} HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n{}`,
      ),
      400,
      'Bad request.',
    );
  });

  test('a malformed request line → 400', async () => {
    assertShape(await raw(`GET /${CANARY} HTTP/9.x\r\nHost: x\r\n\r\n`), 400, 'Bad request.');
    assertShape(await raw(`${CANARY} \u0001 nonsense\r\n\r\n`), 400, 'Bad request.');
  });

  test('a broken chunked body → 400', async () => {
    const head =
      `POST /api/public/leads HTTP/1.1\r\nHost: x\r\n${auth()}` +
      'Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n';
    assertShape(await raw(`${head}ZZ-${CANARY}\r\n{}\r\n0\r\n\r\n`), 400, 'Bad request.');
    assertShape(await raw(`${head}2\r\n{}${CANARY}\r\n0\r\n\r\n`), 400, 'Bad request.');
  });

  test('headers over the limit → 431 `Request headers are too large.`', async () => {
    assertShape(
      await raw(`GET /healthz HTTP/1.1\r\nHost: x\r\nX-Big: ${CANARY.repeat(2000)}\r\n\r\n`),
      431,
      'Request headers are too large.',
    );
  });
});

describe('routing', () => {
  const get = (path: string, withKey = true) =>
    raw(`GET ${path} HTTP/1.1\r\nHost: x\r\n${withKey ? auth() : ''}Connection: close\r\n\r\n`);

  test("malformed percent-encoding in a lead id → the spec's 404 `Lead not found.`, after authentication", async () => {
    const res = await get(`/api/public/leads/%E0%A4%A${CANARY}`);
    assertShape(res, 404, 'Lead not found.');
    assert.match(res.headers.ratelimit ?? '', /^"hourly";r=\d+;t=\d+$/, 'counted like any read');
    assertShape(await get(`/api/public/leads/%zz${CANARY}`, false), 401, 'Missing Authorization header.');
  });

  test(
    "a lead id over the router's 100 characters → 404 `Lead " + 'not found.`, the path not echoed (was 414)',
    async () => {
      assertShape(await get(`/api/public/leads/${CANARY.repeat(30)}`), 404, 'Lead not found.');
      assertShape(await get(`/api/public/leads/${CANARY.repeat(30)}`, false), 401, 'Missing Authorization header.');
    },
  );

  test('the same on another route, and unknown routes → 404 `Not found.`', async () => {
    assertShape(
      await raw(
        `POST /api/whatsapp/twilio/%zz${CANARY}/inbound HTTP/1.1\r\nHost: x\r\n` +
          'Content-Length: 0\r\nConnection: close\r\n\r\n',
      ),
      404,
      'Not found.',
    );
    assertShape(
      await raw(
        `POST /api/webhooks/calcom/${CANARY.repeat(30)} HTTP/1.1\r\nHost: x\r\n` +
          'Content-Length: 0\r\nConnection: close\r\n\r\n',
      ),
      404,
      'Not found.',
    );
    assertShape(await get(`/${CANARY}`), 404, 'Not found.');
    assertShape(
      await raw(`DELETE /api/public/leads HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`),
      404,
      'Not found.',
    );
  });

  test('a body over the limit and a body that is not JSON keep our wording', async () => {
    const big = `{"name":"${CANARY.repeat(7000)}"}`;
    const res = await raw(
      `POST /api/public/leads HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\n` +
        `Content-Length: ${big.length}\r\nConnection: close\r\n\r\n${big}`,
    );
    assertShape(res, 413, 'Request body is too large.');
    const bad = `{"name": ${CANARY}`;
    assertShape(
      await raw(
        `POST /api/public/leads HTTP/1.1\r\nHost: x\r\n${auth()}Content-Type: application/json\r\n` +
          `Content-Length: ${bad.length}\r\nConnection: close\r\n\r\n${bad}`,
      ),
      400,
      'Request body must be valid JSON.',
    );
  });
});

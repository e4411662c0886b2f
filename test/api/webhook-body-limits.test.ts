import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CALCOM_WEBHOOK_BODY_LIMIT } from '../../src/scheduling/booking-webhook-routes.ts';
import { VAPI_BODY_LIMIT } from '../../src/voice/voice-server-routes.ts';
import { META_BODY_LIMIT, TWILIO_BODY_LIMIT } from '../../src/whatsapp/whatsapp-webhook-routes.ts';
import { startListeningApp, type TestApp } from '../helpers/test-app.ts';

// The providers' webhook routes look the workspace up before they read a body
// (src/http/webhook-workspace-first.ts), and each has the body limit of what its provider sends.

let app: TestApp;
let base: URL;
let slug: string;

before(async () => {
  const started = await startListeningApp();
  app = started.app;
  base = new URL(started.base);
  slug = (await app.createWorkspace('whatsapp')).slug;
});
after(async () => {
  await app?.close();
});

const FORM = 'application/x-www-form-urlencoded';
const JSON_TYPE = 'application/json';
const ROUTES = [
  { path: (s: string) => `/api/whatsapp/twilio/${s}/inbound`, limit: TWILIO_BODY_LIMIT, type: FORM },
  { path: (s: string) => `/api/whatsapp/twilio/${s}/status`, limit: TWILIO_BODY_LIMIT, type: FORM },
  { path: (s: string) => `/api/whatsapp/meta/${s}/webhook`, limit: META_BODY_LIMIT, type: JSON_TYPE },
  { path: (s: string) => `/api/vapi/${s}/events`, limit: VAPI_BODY_LIMIT, type: JSON_TYPE },
  { path: (s: string) => `/api/vapi/${s}/tools`, limit: VAPI_BODY_LIMIT, type: JSON_TYPE },
  { path: (s: string) => `/api/webhooks/calcom/${s}`, limit: CALCOM_WEBHOOK_BODY_LIMIT, type: JSON_TYPE },
  { path: (s: string) => `/sandbox/api/whatsapp/twilio/${s}/inbound`, limit: TWILIO_BODY_LIMIT, type: FORM },
  { path: (s: string) => `/sandbox/api/vapi/${s}/events`, limit: VAPI_BODY_LIMIT, type: JSON_TYPE },
];

function post(url: string, type: string, payload: string | Buffer) {
  return app.http.inject({ method: 'POST', url, headers: { 'content-type': type }, payload });
}

/**
 * Sends a request's line and headers announcing `contentLength` bytes, and none of the body;
 * resolves with the status line and body of the answer. A server that waits for the body never
 * answers before its request timeout (a 408), which the assertions then refuse.
 */
function headersOnly(path: string, contentLength: number, type: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(base.port), base.hostname);
    let received = '';
    socket.setEncoding('utf8');
    socket.on('error', reject);
    socket.on('data', (chunk: string) => {
      received += chunk;
      const end = received.indexOf('\r\n\r\n');
      const length = /\r\ncontent-length: (\d+)/i.exec(received);
      if (end >= 0 && length && received.length >= end + 4 + Number(length[1])) {
        socket.destroy();
        const body = received.slice(end + 4, end + 4 + Number(length[1]));
        resolve({ status: Number(received.slice(9, 12)), body });
      }
    });
    const head = [`POST ${path} HTTP/1.1`, `Host: ${base.host}`, `Content-Type: ${type}`];
    head.push(`Content-Length: ${contentLength}`);
    socket.write(`${head.join('\r\n')}\r\n\r\n`);
  });
}

describe('an unknown workspace', () => {
  test('a body as large as the route takes is answered 404 before a byte of it is sent', async () => {
    for (const route of ROUTES) {
      const answer = await headersOnly(route.path('no-such-workspace'), route.limit, route.type);
      assert.equal(answer.status, 404, route.path('…'));
      assert.deepEqual(JSON.parse(answer.body), { ok: false, error: 'Workspace not found.' });
    }
  });

  test('the early 404 is the same answer as the service gives a workspace without that provider', async () => {
    // (The sandbox twins authenticate every workspace with the simulators' credentials.)
    for (const route of ROUTES.filter((r) => !r.path('x').startsWith('/sandbox/'))) {
      const early = await post(route.path('no-such-workspace'), route.type, '{}');
      // A WhatsApp workspace without credentials has no Twilio, Meta, Vapi or Cal.com endpoint.
      const late = await post(route.path(slug), route.type, '{}');
      assert.equal(early.statusCode, 404, route.path('…'));
      assert.equal(late.statusCode, 404, route.path(slug));
      assert.equal(early.body, late.body);
    }
  });

  test('a slug that cannot be one is a 404 too', async () => {
    for (const bad of ['UPPER', '-dash', 'a'.repeat(64), 'dot.dot']) {
      const res = await post(`/api/vapi/${bad}/events`, JSON_TYPE, '{}');
      assert.equal(res.statusCode, 404, bad);
    }
  });
});

describe('a workspace that exists', () => {
  test('each route takes a body up to its limit and answers 413 past it', async () => {
    for (const route of ROUTES) {
      const at = await post(route.path(slug), route.type, Buffer.alloc(route.limit, 0x20));
      assert.notEqual(at.statusCode, 413, `${route.path(slug)} at its limit`);
      const over = await post(route.path(slug), route.type, Buffer.alloc(route.limit + 1, 0x20));
      assert.equal(over.statusCode, 413, `${route.path(slug)} past its limit`);
      assert.equal(over.json().error, 'Request body is too large.');
      assert.match(over.json().message, /^The request body must be at most \d+ (KiB|MiB)\.$/);
    }
  });

  test('the limits are what the providers send', () => {
    assert.equal(TWILIO_BODY_LIMIT, 64 * 1024);
    assert.equal(META_BODY_LIMIT, 3 * 1024 * 1024);
    assert.equal(CALCOM_WEBHOOK_BODY_LIMIT, 256 * 1024);
    assert.equal(VAPI_BODY_LIMIT, 8 * 1024 * 1024);
  });
});

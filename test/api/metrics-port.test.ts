import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { loadConfig } from '../../src/config/config.ts';
import { freePort } from '../../src/db/embedded.ts';
import { serve, type RunningServer } from '../../src/serve.ts';
import { createLogger } from '../../src/shared/logger.ts';
import { retryWhilePortTaken, startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

// /metrics counts every workspace's traffic: it is never on the public port, with or without
// credentials, and `serve` (like `worker`) answers it on METRICS_PORT only.

let app: TestApp;
let db: TestDatabase;
let server: RunningServer;
let metricsUrl: string;

before(async () => {
  app = await startTestApp();
  db = await createTestDatabase();
  server = await retryWhilePortTaken(async () => {
    const [port, metricsPort] = [await freePort(), await freePort()];
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
    const config = loadConfig({
      DATABASE_URL: db.url,
      LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      LOG_LEVEL: 'silent',
      PORT: String(port),
      METRICS_PORT: String(metricsPort),
    });
    return serve(config, createLogger('silent'), { worker: false, firstRunDemo: false });
  });
});
after(async () => {
  await server?.close();
  await db?.drop();
  await app?.close();
});

test('the public API has no /metrics, whatever the credentials', async () => {
  const ws = await app.createWorkspace('whatsapp');
  for (const headers of [{}, { authorization: `Bearer ${ws.apiKey}` }, { authorization: 'Bearer anything' }]) {
    const res = await app.http.inject({ url: '/metrics', headers });
    assert.equal(res.statusCode, 404);
    assert.doesNotMatch(res.body, /leadintake_|process_/);
  }
});

test('`serve` answers /metrics on METRICS_PORT and not on its public port', async () => {
  const publicAnswer = await fetch(`${server.address}/metrics`);
  assert.equal(publicAnswer.status, 404);
  assert.doesNotMatch(await publicAnswer.text(), /leadintake_/);
  const res = await fetch(metricsUrl);
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  assert.match(text, /^leadintake_jobs\{queue="agent-turn",state="queued"\} \d+$/m);
  assert.match(text, /^process_resident_memory_bytes /m);
});

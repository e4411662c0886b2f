import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { freePort } from '../../src/db/embedded.ts';
import { AGENT_TURN_DEAD_LETTER } from '../../src/jobs/queues.ts';
import { transitionLead } from '../../src/leads/lead-state.ts';
import { startMetricsServer } from '../../src/metrics/metrics-routes.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';
import { eventually, spawnWorker } from '../helpers/worker-process.ts';

// GET /metrics on the metrics port (METRICS_PORT), after real traffic through the real app: the
// WhatsApp channel end to end on the simulators (first contact → speed to lead), voice dispatch on
// the Vapi simulator. Metrics are per process, so every check compares a value before and after.

let h: WhatsappHarness;
let vapi: VapiSimulator;
let metrics: Awaited<ReturnType<typeof startMetricsServer>>;

before(async () => {
  vapi = await startVapiSimulator();
  h = await startWhatsappHarness({ env: { VAPI_BASE_URL: vapi.url } });
  metrics = await startMetricsServer({ host: '127.0.0.1', port: 0, pool: h.app.db.pool, log: h.app.log });
});
after(async () => {
  await metrics?.close();
  await h.close();
  await vapi.close();
});

async function scrape(): Promise<string> {
  const res = await fetch(`${metrics.address}/metrics`);
  assert.equal(res.status, 200);
  assert.match(String(res.headers.get('content-type')), /^text\/plain; version=0\.0\.4/);
  return res.text();
}

/** The value of one series, 0 when absent. `labels` must be given in the order prom-client writes them. */
function value(text: string, name: string, labels: Record<string, string> = {}): number {
  const l = Object.entries(labels)
    .map(([k, v]) => `${k}="${v}"`)
    .join(',');
  const line = text.split('\n').find((x) => x.startsWith(l ? `${name}{${l}} ` : `${name} `));
  return line ? Number(line.slice(line.lastIndexOf(' ') + 1)) : 0;
}

describe('GET /metrics', () => {
  test('HTTP requests by route template and status, with a duration histogram', async () => {
    const ws = await h.workspace('twilio');
    const before = await scrape();
    const ok = await getLead(h.app.http, ws.apiKey, crypto.randomUUID());
    assert.equal(ok.status, 404);
    await h.app.http.inject({ url: '/no/such/path/123' });
    const after = await scrape();
    const get = { method: 'GET', route: '/api/public/leads/:id', status: '404' };
    assert.equal(
      value(after, 'leadintake_http_requests_total', get) - value(before, 'leadintake_http_requests_total', get),
      1,
    );
    assert.equal(
      value(after, 'leadintake_http_request_duration_seconds_count', get) -
        value(before, 'leadintake_http_request_duration_seconds_count', get),
      1,
    );
    assert.ok(
      value(after, 'leadintake_http_requests_total', { method: 'GET', route: 'unmatched', status: '404' }) >= 1,
    );
    assert.doesNotMatch(after, /no\/such\/path/);
  });

  test(
    'a WhatsApp lead: created, its job queued, then first contact → ' +
      'speed to lead, provider request, status transition',
    async () => {
      const ws = await h.workspace('twilio');
      const before = await scrape();
      const { leadId } = await h.submit(ws.apiKey, { name: 'Metric Person', email: 'metric.person@example.com' });
      await h.app.relay.drain();
      const queued = await scrape();
      assert.equal(
        value(queued, 'leadintake_leads_created_total', { channel: 'whatsapp', mode: 'live' }) -
          value(before, 'leadintake_leads_created_total', { channel: 'whatsapp', mode: 'live' }),
        1,
      );
      assert.ok(value(queued, 'leadintake_jobs', { queue: 'agent-turn', state: 'queued' }) >= 1);
      await h.settle();
      const after = await scrape();
      const delta = (name: string, labels: Record<string, string>) =>
        value(after, name, labels) - value(before, name, labels);
      assert.equal(delta('leadintake_speed_to_lead_seconds_count', { channel: 'whatsapp', mode: 'live' }), 1);
      assert.ok(delta('leadintake_provider_requests_total', { provider: 'twilio', outcome: 'ok' }) >= 1);
      assert.ok(
        delta('leadintake_provider_request_duration_seconds_count', { provider: 'twilio', outcome: 'ok' }) >= 1,
      );
      assert.ok(delta('leadintake_lead_status_transitions_total', { from: 'new', to: 'in_conversation' }) >= 1);
      // Nothing personal or unbounded: no name, phone, e-mail, lead, workspace or key.
      for (const secret of [leadId, ws.workspaceId, ws.apiKey, 'Metric Person', 'metric.person@example.com', ws.slug])
        assert.ok(!after.includes(secret), secret);
      assert.doesNotMatch(after, /\+\d{7,}/);
    },
  );

  test('a voice lead: speed to lead and the Vapi request; a refused call counts as a client error', async () => {
    const { apiKey, sandboxKey } = await h.app.createWorkspace('voice', {
      voice: {
        provider: 'vapi',
        apiKey: SIM_API_KEY,
        assistantId: SIM_ASSISTANT_ID,
        phoneNumberId: SIM_PHONE_NUMBER_ID,
      },
    });
    const before = await scrape();
    assert.equal((await postLead(h.app.http, apiKey, validLead())).status, 201);
    vapi.setFailure('bad-key');
    assert.equal((await postLead(h.app.http, apiKey, validLead())).status, 502);
    vapi.setFailure('none');
    const after = await scrape();
    const delta = (name: string, labels: Record<string, string>) =>
      value(after, name, labels) - value(before, name, labels);
    assert.equal(delta('leadintake_speed_to_lead_seconds_count', { channel: 'voice', mode: 'live' }), 1);
    assert.equal(delta('leadintake_leads_created_total', { channel: 'voice', mode: 'live' }), 1);
    assert.equal(delta('leadintake_provider_requests_total', { provider: 'vapi', outcome: 'ok' }), 1);
    assert.equal(delta('leadintake_provider_requests_total', { provider: 'vapi', outcome: 'client_error' }), 1);
    assert.equal(delta('leadintake_lead_status_transitions_total', { from: 'new', to: 'in_conversation' }), 1);
    // A sandbox lead's simulated call is counted apart: it cannot hide a slow live channel.
    assert.equal((await postLead(h.app.http, sandboxKey, validLead())).status, 201);
    const sandbox = await scrape();
    const speed = (text: string, mode: string) =>
      value(text, 'leadintake_speed_to_lead_seconds_count', { channel: 'voice', mode });
    assert.equal(speed(sandbox, 'sandbox') - speed(after, 'sandbox'), 1);
    assert.equal(speed(sandbox, 'live'), speed(after, 'live'));
  });

  test('transitions by old and new status; dead letters by source queue', async () => {
    const ws = await h.workspace('twilio');
    const { leadId } = await h.submit(ws.apiKey);
    const before = await scrape();
    await transitionLead(h.app.db.pool, { leadId, to: 'needs_human', actor: 'operator', event: { type: 'test' } });
    await h.app.boss.send(AGENT_TURN_DEAD_LETTER, { leadId });
    const after = await scrape();
    assert.equal(
      value(after, 'leadintake_lead_status_transitions_total', { from: 'new', to: 'needs_human' }) -
        value(before, 'leadintake_lead_status_transitions_total', { from: 'new', to: 'needs_human' }),
      1,
    );
    assert.equal(
      value(after, 'leadintake_jobs', { queue: 'agent-turn', state: 'dead' }) -
        value(before, 'leadintake_jobs', { queue: 'agent-turn', state: 'dead' }),
      1,
    );
    assert.match(after, /^process_resident_memory_bytes /m);
  });

  test('a `leadintake worker` process with METRICS_PORT serves its metrics', async () => {
    const port = await freePort();
    const w = spawnWorker(h.workerEnv({ METRICS_PORT: String(port) }));
    try {
      const text = await eventually('the worker metrics', async () => {
        const res = await fetch(`http://127.0.0.1:${port}/metrics`).catch(() => null);
        return res?.status === 200 ? res.text() : undefined;
      });
      assert.match(text, /^leadintake_jobs\{queue="agent-turn",state="dead"\} \d+$/m);
      assert.match(text, /^process_resident_memory_bytes /m);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${w.output()}`);
    } finally {
      await w.kill('SIGTERM');
    }
  });

  test("the worker's metrics server (METRICS_PORT) answers GET /metrics and nothing else", async () => {
    const server = await startMetricsServer({ host: '127.0.0.1', port: 0, pool: h.app.db.pool, log: h.app.log });
    try {
      const res = await fetch(`${server.address}/metrics`);
      assert.equal(res.status, 200);
      assert.match(await res.text(), /^leadintake_jobs\{queue="agent-turn",state="queued"\} \d+$/m);
      assert.equal((await fetch(`${server.address}/`)).status, 404);
    } finally {
      await server.close();
    }
  });
});

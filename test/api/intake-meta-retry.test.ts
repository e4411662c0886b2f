// Meta leads that failed for a temporary reason are retried by the meta-lead-retry jobs (docs/INTAKE.md,
// "Failures"): through the real webhook route, the real Graph client and the Meta Lead Ads
// simulator. The jobs are run here, one at a time, when they are due by the test's clock
// (runDueRetries): no worker, no sleeps.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LeadSourceRow } from '../../src/intake/lead-source-queries.ts';
import type { MetaLeadRetryJob } from '../../src/intake/meta/meta-lead-retry.ts';
import { META_LEAD_RETRY_QUEUE } from '../../src/jobs/queues.ts';
import {
  META_LEADS_SIM,
  startMetaLeadsSimulator,
  type MetaLeadsSimulator,
  leadgenWebhook,
  type SimLead,
} from '../../src/simulators/meta-leads/meta-leads-simulator.ts';
import {
  SIM_API_KEY,
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiSimulator,
} from '../../src/simulators/vapi/vapi-simulator.ts';
import { META_SIGNATURE_HEADER, signMetaBody } from '../../src/whatsapp/meta/meta-signature.ts';
import { startTestApp, TestClock, type TestApp } from '../helpers/test-app.ts';

const HOURLY_LIMIT = 3;
const clock = new TestClock(Date.parse('2026-11-22T10:00:00.000Z'));
let sim: MetaLeadsSimulator;
let vapi: VapiSimulator;
let app: TestApp;
let source: LeadSourceRow;

const answers = (phone: string) => [
  { name: 'full_name', values: ['Ada Lovelace'] },
  { name: 'phone_number', values: [phone] },
];

before(async () => {
  sim = await startMetaLeadsSimulator();
  vapi = await startVapiSimulator();
  app = await startTestApp({
    clock,
    env: {
      WHATSAPP_GRAPH_BASE_URL: sim.graphBaseUrl,
      VAPI_BASE_URL: vapi.url,
      DEFAULT_HOURLY_LIMIT: String(HOURLY_LIMIT),
    },
  });
  source = await connectSource((await app.createWorkspace('whatsapp')).workspaceId);
});
after(async () => {
  await app?.close();
  await sim?.close();
  await vapi?.close();
});

const connectSource = (workspaceId: string) =>
  app.metaIntake.sources.connect(workspaceId, {
    name: 'Our Page',
    secret: {
      pageAccessToken: META_LEADS_SIM.pageAccessToken,
      appSecret: META_LEADS_SIM.appSecret,
      verifyToken: META_LEADS_SIM.verifyToken,
    },
    config: { pageId: META_LEADS_SIM.pageId, formIds: [META_LEADS_SIM.formId] },
  });

/** Meta's `leadgen` webhook of `lead`, signed, through the real route; always answered 200. */
async function deliver(lead: SimLead, to: LeadSourceRow = source) {
  const body = JSON.stringify(leadgenWebhook(lead));
  const res = await app.http.inject({
    method: 'POST',
    url: `/api/intake/meta/${to.token}`,
    headers: {
      'content-type': 'application/json',
      [META_SIGNATURE_HEADER]: signMetaBody(META_LEADS_SIM.appSecret, body),
    },
    payload: body,
  });
  assert.equal(res.statusCode, 200, res.body);
}

/** The retry jobs waiting in pg-boss (after the outbox is relayed). */
async function queuedRetries() {
  await app.relay.drain();
  return app.boss.findJobs<MetaLeadRetryJob>(META_LEAD_RETRY_QUEUE, { queued: true });
}

/** Runs the retry jobs due by the test clock, oldest due first, until none is; their results in order. */
async function runDueRetries(): Promise<string[]> {
  const results: string[] = [];
  for (let i = 0; i < 100; i++) {
    const due = (await queuedRetries())
      .filter((j) => j.startAfter.getTime() <= clock.now)
      .sort((a, b) => a.startAfter.getTime() - b.startAfter.getTime());
    const job = due[0];
    if (!job) return results;
    results.push(await app.metaIntake.retry(job.data, app.log));
    await app.boss.deleteJob(META_LEAD_RETRY_QUEUE, job.id);
  }
  throw new Error('retry jobs did not run out');
}

async function leadsOf(leadgenId: string, of: LeadSourceRow = source) {
  const { rows } = await app.db.pool.query('SELECT id FROM leads WHERE source_id = $1 AND source_lead_id = $2', [
    of.id,
    leadgenId,
  ]);
  return rows;
}

const lastError = async () =>
  (await app.db.pool.query('SELECT last_error FROM lead_sources WHERE id = $1', [source.id])).rows[0].last_error;

describe('a lead refused for a temporary reason is retried', () => {
  test('Graph fails twice, then answers: exactly one lead, a minute then two minutes later', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111120001') });
    sim.failNext(2);
    await deliver(lead);
    assert.equal((await leadsOf(lead.id)).length, 0);
    assert.match(await lastError(), new RegExp(`Reading lead ${lead.id} from the Graph API failed`));
    const [first] = await queuedRetries();
    assert.deepEqual(first?.data, { sourceId: source.id, leadgenId: lead.id, pageId: META_LEADS_SIM.pageId, retry: 1 });
    assert.deepEqual(await runDueRetries(), [], 'not due before its minute');
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), ['retrying']);
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), [], 'the second retry waits two minutes');
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), ['created']);
    assert.equal((await leadsOf(lead.id)).length, 1);
    assert.equal((await queuedRetries()).length, 0);
    // The same webhook again finds the lead: nothing is queued.
    await deliver(lead);
    assert.equal((await leadsOf(lead.id)).length, 1);
    assert.equal((await queuedRetries()).length, 0);
  });

  test('over the hourly limit: retried, and made once the next hour allows it', async () => {
    clock.now = Date.parse('2026-11-22T12:10:00.000Z');
    const leads = [1, 2, 3, 4].map((i) => sim.addLead({ fieldData: answers(`+491511112001${i}`) }));
    for (const lead of leads) await deliver(lead);
    const over = leads[HOURLY_LIMIT]!;
    assert.equal((await leadsOf(over.id)).length, 0, 'refused: over the limit');
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), ['retrying'], 'still within the hour');
    clock.now = Date.parse('2026-11-22T13:00:00.000Z');
    assert.deepEqual(await runDueRetries(), ['created']);
    assert.equal((await leadsOf(over.id)).length, 1);
    for (const lead of leads) assert.equal((await leadsOf(lead.id)).length, 1);
  });

  test('Vapi refuses the call of a voice workspace: retried, and the lead is called', async () => {
    const voice = { provider: 'vapi' as const, apiKey: SIM_API_KEY, assistantId: SIM_ASSISTANT_ID };
    const ws = await app.createWorkspace('voice', { voice: { ...voice, phoneNumberId: SIM_PHONE_NUMBER_ID } });
    const voiceSource = await connectSource(ws.workspaceId);
    const lead = sim.addLead({ fieldData: answers('+4915111120051') });
    vapi.setFailure('server-error');
    await deliver(lead, voiceSource);
    assert.equal((await leadsOf(lead.id, voiceSource)).length, 0);
    vapi.setFailure('none');
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), ['created']);
    assert.equal((await leadsOf(lead.id, voiceSource)).length, 1);
  });

  test('a lead the backfill made meanwhile is not read again', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111120021') });
    sim.failNext(1, { status: 503, code: 2, message: 'Service temporarily unavailable' });
    await deliver(lead);
    await app.metaIntake.backfill(source.id);
    assert.equal((await leadsOf(lead.id)).length, 1);
    const reads = sim.requests.length;
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), ['known']);
    assert.equal(sim.requests.length, reads);
  });

  test('retries run out after about a day: the source says so and a warning names the lead id', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111120031') });
    // The webhook's read and each of the 29 retries'.
    sim.failNext(30, { status: 500, code: 1, message: 'An unknown error occurred' });
    const started = clock.now;
    await deliver(lead);
    const results: string[] = [];
    for (let hour = 0; hour < 30; hour++) {
      clock.advance(3600_000);
      results.push(...(await runDueRetries()));
    }
    assert.equal(results.length, 29);
    assert.deepEqual(results.slice(-2), ['retrying', 'exhausted']);
    assert.ok(clock.now - started >= 24 * 3600_000);
    assert.equal((await queuedRetries()).length, 0);
    assert.match(await lastError(), new RegExp(`Lead ${lead.id} was not taken after 29 retries`));
    const warning = app.logs.find((l) => l.includes('meta lead retries exhausted'));
    assert.ok(warning);
    assert.equal(JSON.parse(warning).sourceId, source.id);
    assert.equal(JSON.parse(warning).leadgenId, lead.id);
    assert.equal(
      app.logs.some((l) => l.includes('+4915111120031') || l.includes('Ada Lovelace')),
      false,
    );
  });
});

describe('a permanent refusal is not retried', () => {
  test('a lead whose fields do not map (validation failed)', async () => {
    const lead = sim.addLead({ fieldData: [{ name: 'full_name', values: ['No Phone'] }] });
    await deliver(lead);
    assert.equal((await leadsOf(lead.id)).length, 0);
    assert.match(await lastError(), /phone/i);
    assert.equal((await queuedRetries()).length, 0);
  });

  test('a Graph 4xx (an expired token)', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111120041') });
    sim.failNext(1, { status: 400, code: 190, message: 'Error validating access token' });
    await deliver(lead);
    assert.equal((await leadsOf(lead.id)).length, 0);
    assert.equal((await queuedRetries()).length, 0);
  });

  test('a retry that meets a permanent failure is the last', async () => {
    const lead = sim.addLead({ fieldData: answers('+4915111120061') });
    sim.failNext(1, { status: 503, code: 2, message: 'Service temporarily unavailable' });
    sim.failNext(1, { status: 400, code: 190, message: 'Error validating access token' });
    await deliver(lead);
    clock.advance(60_000);
    assert.deepEqual(await runDueRetries(), ['failed']);
    assert.equal((await queuedRetries()).length, 0);
    assert.equal((await leadsOf(lead.id)).length, 0);
  });
});

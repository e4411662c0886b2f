// A send that cannot go out (src/whatsapp/turn-send.ts) does not leave the lead waiting unseen:
// a provider that keeps failing until the job's last attempt (`send_failed`), or that refuses the
// workspace's settings (`provider_refused_settings`), hands the lead to a person with the reason
// on its timeline; the turn stays ready and the job is dead-lettered, so `leadintake jobs retry`
// sends the stored message once the cause is fixed. docs/WHATSAPP.md, "When something fails".
// Sequential: the simulators' injected failures apply to whichever request comes next.
import assert from 'node:assert/strict';
import { after, afterEach, before, describe, test } from 'node:test';
import type { Job } from 'pg-boss';
import { retryDeadTurns } from '../../src/jobs/dead-letters.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { admin, makeOperator, signIn } from '../helpers/admin.ts';
import { leadEvents } from '../helpers/agent-harness.ts';
import { handOverProbes } from '../helpers/hand-over-probes.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
});
afterEach(() => h.twilio.failNextSends(0, { status: 503, code: 20503 }));
after(() => h.close());

const UNAVAILABLE = { status: 503, code: 20503 };
const BAD_CREDENTIALS = { status: 401, code: 20003 };

const { q, status, escalations, sentTo, deadLetters } = handOverProbes(() => h);
const turns = (leadId: string) =>
  q('SELECT kind, state, outcome FROM agent_turns WHERE lead_id = $1 ORDER BY id', [leadId]);

const leadUrl = (leadId: string) => `/api/admin/workspaces/${ws.slug}/leads/${leadId}`;
async function operator() {
  const op = await makeOperator(h.app, [{ workspaceId: ws.workspaceId, role: 'agent' }]);
  return (await signIn(h.app.http, op.email, op.password)).session!;
}

/** A new lead whose first-contact job is about to run; `turnId`: the id `jobs retry` takes. */
async function newLead(): Promise<{ leadId: string; phone: string; turnId: string }> {
  const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
  const [outbox] = await q(`SELECT job_id FROM outbox WHERE payload->>'leadId' = $1`, [leadId]);
  return { leadId, phone, turnId: outbox.job_id };
}

/** A lead that got its template and has just written: its reply turn's job is queued. */
async function leadWhoWrote(): Promise<{ leadId: string; phone: string; turnId: string }> {
  const { leadId, phone } = await newLead();
  await h.settle();
  assert.equal(await status(leadId), 'in_conversation');
  await h.leadSays('twilio', ws.slug, phone, PERSONA_PHRASES.answer);
  const [outbox] = await q(`SELECT job_id FROM outbox WHERE payload->>'leadId' = $1`, [leadId]);
  return { leadId, phone, turnId: outbox.job_id };
}

describe('a provider that keeps failing (transient) until the last attempt', () => {
  test('first contact: needs_human (send_failed), turn ready, dead letter; jobs retry sends it', async () => {
    const { leadId, phone, turnId } = await newLead();
    h.twilio.failNextSends(1000, UNAVAILABLE);
    await h.settle({ ignoreBackoff: true });

    assert.equal(await status(leadId), 'needs_human');
    const [escalated, ...more] = await escalations(leadId);
    assert.equal(more.length, 0, 'handed over once, on the last attempt only');
    assert.equal(escalated?.outcome, 'send_failed');
    assert.match(String(escalated?.reason), /kept failing[\s\S]*jobs retry/);
    assert.deepEqual(await turns(leadId), [{ kind: 'first_contact', state: 'ready', outcome: null }]);
    assert.equal(await deadLetters(leadId), 1);
    assert.equal(sentTo(phone).length, 0);

    // Twilio works again: the operator retries the dead letter and the template goes out.
    h.twilio.failNextSends(0, UNAVAILABLE);
    assert.equal(await retryDeadTurns(h.app.boss, [turnId]), 1);
    await h.settle({ ignoreBackoff: true });
    assert.equal(sentTo(phone).length, 1);
    assert.equal(await status(leadId), 'in_conversation');
    const sent = (await leadEvents(h.app.db.pool, leadId)).find((e) => e.type === 'message.sent');
    assert.deepEqual(
      [sent?.data.from, sent?.data.to, sent?.data.actor, sent?.data.resumedAfter],
      ['needs_human', 'in_conversation', 'operator', 'send_failed'],
    );
  });

  test('reply: the answer stays stored and the lead goes to a person', async () => {
    const { leadId, phone, turnId } = await leadWhoWrote();
    h.twilio.failNextSends(1000, UNAVAILABLE);
    const modelRequests = h.chat.requests.length;
    await h.settle({ ignoreBackoff: true });

    assert.equal(await status(leadId), 'needs_human');
    assert.deepEqual(
      (await escalations(leadId)).map((e) => e.outcome),
      ['send_failed'],
    );
    assert.deepEqual((await turns(leadId)).at(-1), { kind: 'reply', state: 'ready', outcome: null });
    assert.equal(await deadLetters(leadId), 1);
    assert.equal(sentTo(phone).length, 1, 'only the template');
    const calls = h.chat.requests.length - modelRequests;

    h.twilio.failNextSends(0, UNAVAILABLE);
    assert.equal(await retryDeadTurns(h.app.boss, [turnId]), 1);
    await h.settle({ ignoreBackoff: true });
    assert.equal(sentTo(phone).length, 2, 'the stored answer');
    assert.equal(h.chat.requests.length - modelRequests, calls, 'the model is not asked again');
    assert.equal(await status(leadId), 'in_conversation');
  });
});

describe('a provider that refuses the workspace settings (configuration)', () => {
  test('first contact: needs_human (provider_refused_settings), turn ready; jobs retry sends it, fixed', async () => {
    const { leadId, phone, turnId } = await newLead();
    // drainOnce fails a dead letter instead (TurnWorker.drainOnce): six attempts, all refused.
    h.twilio.failNextSends(6, BAD_CREDENTIALS);
    await h.settle({ ignoreBackoff: true });

    assert.equal(await status(leadId), 'needs_human');
    const escalated = await escalations(leadId);
    assert.ok(escalated.length >= 1);
    assert.ok(escalated.every((e) => e.outcome === 'provider_refused_settings'));
    assert.match(
      String(escalated[0]!.reason),
      /refused the workspace's settings[\s\S]*workspace update[\s\S]*jobs retry/,
    );
    assert.deepEqual(await turns(leadId), [{ kind: 'first_contact', state: 'ready', outcome: null }]);
    assert.equal(await deadLetters(leadId), 1);
    assert.equal(sentTo(phone).length, 0);

    assert.equal(await retryDeadTurns(h.app.boss, [turnId]), 1);
    await h.settle({ ignoreBackoff: true });
    assert.equal(sentTo(phone).length, 1);
    assert.equal(await status(leadId), 'in_conversation');
  });

  test('reply: the lead goes to a person at once', async () => {
    const { leadId, phone } = await leadWhoWrote();
    h.twilio.failNextSends(1, BAD_CREDENTIALS);
    await h.app.relay.drain();
    const [job] = await h.app.boss.fetch<{ leadId: string }>('agent-turn', { includeMetadata: true });
    const result = await h.worker.runJob(job!);
    assert.equal(result.status, 'deadletter');
    await h.app.boss.complete('agent-turn', job!.id);

    assert.equal(await status(leadId), 'needs_human');
    assert.deepEqual(
      (await escalations(leadId)).map((e) => e.outcome),
      ['provider_refused_settings'],
    );
    assert.deepEqual((await turns(leadId)).at(-1), { kind: 'reply', state: 'ready', outcome: null });
    assert.equal(sentTo(phone).length, 1, 'only the template');
  });

  test("an operator's reply meanwhile keeps the lead with the operator: it stays needs_human", async () => {
    const { leadId, phone } = await newLead();
    h.twilio.failNextSends(6, BAD_CREDENTIALS);
    await h.settle({ ignoreBackoff: true });
    assert.equal(await status(leadId), 'needs_human');
    // The settings are fixed; an operator answers the lead with the template instead of retrying.
    const r = await admin(h.app.http, await operator(), 'POST', `${leadUrl(leadId)}/reply`, { template: true });
    assert.deepEqual([r.status, r.body], [200, { ok: true, status: 'needs_human' }]);
    await h.settle({ ignoreBackoff: true });
    assert.equal(sentTo(phone).length, 1, "the operator's message");
    assert.equal(await status(leadId), 'needs_human');
  });
});

describe('an operator who took the lead over keeps it', () => {
  test('Take over meanwhile: the retried job sends nothing, the lead stays needs_human', async () => {
    const { leadId, phone, turnId } = await newLead();
    h.twilio.failNextSends(6, BAD_CREDENTIALS);
    await h.settle({ ignoreBackoff: true });
    assert.equal(await status(leadId), 'needs_human');
    const r = await admin(h.app.http, await operator(), 'POST', `${leadUrl(leadId)}/take-over`);
    assert.equal(r.status, 200, JSON.stringify(r.body));
    h.twilio.failNextSends(0, BAD_CREDENTIALS);

    assert.equal(await retryDeadTurns(h.app.boss, [turnId]), 1);
    await h.settle({ ignoreBackoff: true });
    assert.equal(sentTo(phone).length, 0);
    assert.equal(await status(leadId), 'needs_human');
  });
});

describe('a lead that is not new or in_conversation keeps its status', () => {
  test("a booked lead whose operator's message is refused stays booked; the refusal is on its timeline", async () => {
    const { leadId, phone } = await newLead();
    await h.settle();
    const session = await operator();
    const booked = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/outcome`, {
      outcome: 'booked',
      note: 'By phone',
    });
    assert.equal(booked.status, 200, JSON.stringify(booked.body));
    await h.leadSays('twilio', ws.slug, phone, 'Can I bring my partner?');
    await h.settle();
    h.twilio.failNextSends(6, BAD_CREDENTIALS);
    const r = await admin(h.app.http, session, 'POST', `${leadUrl(leadId)}/reply`, { text: 'Of course.' });
    assert.equal(r.status, 200, JSON.stringify(r.body));
    await h.settle({ ignoreBackoff: true });

    assert.equal(await status(leadId), 'booked');
    // The booked lead's own message is noted for a person too (lead_wrote_after_close); the refusals are the rest.
    const escalated = (await escalations(leadId)).filter((e) => e.outcome !== 'lead_wrote_after_close');
    assert.ok(escalated.length >= 1);
    assert.ok(escalated.every((e) => e.outcome === 'provider_refused_settings' && e.status === 'booked'));
    assert.equal(sentTo(phone).length, 1, 'only the template');
  });
});

describe('first contacts in a batch (TurnWorker.runBatch)', () => {
  /** Three new leads' jobs as the poller fetches them; `last`: each on its last attempt. */
  async function batchJobs(last: boolean): Promise<{ leadIds: string[]; jobs: Job<unknown>[] }> {
    const leadIds: string[] = [];
    for (let i = 0; i < 3; i++) leadIds.push((await h.submit(ws.apiKey, { phone: uniquePhone() })).leadId);
    await h.app.relay.drain();
    const fetched = await h.app.boss.fetch<unknown>('agent-turn', { batchSize: 100, includeMetadata: true });
    assert.equal(fetched.length, 3);
    const jobs = fetched.map(
      (j) =>
        ({ ...j, ...(last ? { retryLimit: j.retryCount } : {}), signal: new AbortController().signal }) as Job<unknown>,
    );
    return { leadIds, jobs };
  }

  test('a job on its last attempt is not left to the batch: its failed send hands the lead over', async () => {
    h.twilio.failNextSends(1000, UNAVAILABLE);
    const { leadIds, jobs } = await batchJobs(true);
    const results = await h.worker.runBatch(jobs);
    for (const r of results) await h.app.boss.fail('agent-turn', r.id, r.output as object);
    assert.deepEqual(
      results.map((r) => r.status),
      ['deadletter', 'deadletter', 'deadletter'],
    );
    for (const leadId of leadIds) {
      assert.equal(await status(leadId), 'needs_human');
      assert.deepEqual(
        (await escalations(leadId)).map((e) => e.outcome),
        ['send_failed'],
      );
    }
  });

  test('jobs with retries left: the batch retries them, the leads wait', async () => {
    h.twilio.failNextSends(1000, UNAVAILABLE);
    const { leadIds, jobs } = await batchJobs(false);
    const results = await h.worker.runBatch(jobs);
    for (const r of results) await h.app.boss.fail('agent-turn', r.id, r.output as object);
    assert.deepEqual(
      results.map((r) => r.status),
      ['failed', 'failed', 'failed'],
    );
    for (const leadId of leadIds) assert.equal(await status(leadId), 'new');
    // The last test of the file: its retries are not run.
    await q(`DELETE FROM pgboss.job WHERE name = 'agent-turn' AND data->>'leadId' = ANY($1::text[])`, [leadIds]);
  });
});

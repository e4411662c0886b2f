import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { Job, JobResult } from 'pg-boss';
import { lockLead, tryLockLeads } from '../../src/leads/lead-lock.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

// First contacts taken in batches (WORKER_BATCH_SIZE > 1; docs/WHATSAPP.md, "First contacts in
// batches"): the leads of a fetched batch are locked, read and stored together and their templates
// sent side by side; whatever is not a plain first contact runs on its own, as before.

let h: WhatsappHarness;
let tw: { slug: string; apiKey: string; workspaceId: string };
let meta: { slug: string; apiKey: string; workspaceId: string };
let engine: TurnEngine;
/** Leads the worker below ran one by one (engine.run), not in the batch. */
const ranAlone: string[] = [];
let worker: TurnWorker;

before(async () => {
  h = await startWhatsappHarness({ startRelay: false });
  tw = await h.workspace('twilio');
  meta = await h.workspace('meta');
  engine = new TurnEngine({
    integrationLog: h.app.integrationLog,
    pool: h.app.db.pool,
    log: h.app.log,
    clock: h.clock.read,
    workspaces: h.app.workspaces,
    providers: defaultConversationProviders(h.app.config, { scheduling: h.app.scheduling }),
  });
  const counting = {
    run: (leadId: string, signal?: AbortSignal) => {
      ranAlone.push(leadId);
      return engine.run(leadId, signal);
    },
    runFirstContacts: (leadIds: string[], signal?: AbortSignal) => engine.runFirstContacts(leadIds, signal),
  } as TurnEngine;
  worker = new TurnWorker({ boss: h.app.boss, engine: counting, log: h.app.log, concurrency: 8, batchSize: 8 });
});
after(() => h.close());

async function newLeads(w: { apiKey: string }, n: number): Promise<{ leadId: string; phone: string }[]> {
  const leads = [];
  for (let i = 0; i < n; i++) leads.push(await h.submit(w.apiKey, { phone: uniquePhone() }));
  await h.app.relay.drain();
  return leads;
}

/** The queued jobs of these leads, fetched as the worker's poller would. */
async function jobsOf(leadIds: string[]): Promise<Job<unknown>[]> {
  const jobs = await h.app.boss.fetch<unknown>('agent-turn', { batchSize: 100, includeMetadata: true });
  const mine = jobs.filter((j) => leadIds.includes((j.data as { leadId: string }).leadId));
  for (const j of jobs) if (!mine.includes(j)) await h.app.boss.fail('agent-turn', j.id, { reason: 'not this test' });
  return mine.map((j) => ({ ...j, signal: new AbortController().signal }) as Job<unknown>);
}

async function settleJobs(jobs: Job<unknown>[], results: JobResult[]): Promise<void> {
  for (const r of results) {
    if (r.status === 'completed') await h.app.boss.complete('agent-turn', r.id, r.output as object);
    else await h.app.boss.fail('agent-turn', r.id, r.output as object);
  }
  assert.equal(results.length, jobs.length);
}

const sentTo = (phone: string) =>
  [...h.twilio.messages.filter((m) => m.to === phone), ...h.meta.sends.filter((m) => `+${m.to}` === phone)].length;
const outcomes = (results: JobResult[]) =>
  results.map(
    (r) => (r.output as { outcome?: string; reason?: string }).outcome ?? (r.output as { reason?: string }).reason,
  );

async function statusOf(leadId: string): Promise<string> {
  const { rows } = await h.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [leadId]);
  return rows[0].status;
}

describe('first contacts in a batch', () => {
  it(
    'across workspaces and providers: each lead gets its template ' +
      'once, in the batch, and its job completes as sent',
    async () => {
      const leads = [...(await newLeads(tw, 3)), ...(await newLeads(meta, 3))];
      const ids = leads.map((l) => l.leadId);
      const jobs = await jobsOf(ids);
      assert.equal(jobs.length, 6);
      ranAlone.length = 0;
      const results = await worker.runBatch(jobs);
      await settleJobs(jobs, results);
      assert.deepEqual(outcomes(results), Array(6).fill('first_contact_sent'));
      assert.deepEqual(ranAlone, [], 'no lead ran on its own');
      for (const l of leads) {
        assert.equal(sentTo(l.phone), 1, 'one template per lead');
        assert.equal(await statusOf(l.leadId), 'in_conversation');
      }
      const { rows } = await h.app.db.pool.query(
        `SELECT lead_id, kind, state FROM agent_turns WHERE lead_id = ANY($1::uuid[])`,
        [ids],
      );
      assert.equal(rows.length, 6);
      assert.ok(rows.every((r) => r.kind === 'first_contact' && r.state === 'sent'));
      // The sends were recorded together, and the delivery statuses the simulators called back with
      // (some before the recording, held until it) all applied.
      await Promise.all([h.twilio.idle(), h.meta.idle()]);
      const messages = await h.app.db.pool.query(
        `SELECT m.status, m.provider_message_id IS NOT NULL AS has_id,
              (SELECT count(*)::int FROM whatsapp_early_statuses e
              WHERE e.provider_message_id = m.provider_message_id) AS held,
              (SELECT count(*)::int FROM lead_events e
              WHERE e.lead_id = m.lead_id AND e.type = 'message.sent') AS sent_events
         FROM whatsapp_messages m WHERE m.lead_id = ANY($1::uuid[]) AND m.direction = 'outbound'`,
        [ids],
      );
      // (Meta's simulated leads also read their messages.)
      const reached = (status: string) => (status === 'delivered' || status === 'read' ? 'reached' : status);
      assert.deepEqual(
        messages.rows.map((r) => [reached(r.status), r.has_id, r.held, r.sent_events]),
        Array(6).fill(['reached', true, 0, 1]),
      );
      // Every lock was released: all six can be taken again at once.
      const again = await tryLockLeads(h.app.db.pool, ids);
      assert.equal(again.leadIds.length, 6);
      await again.release();
    },
  );

  it(
    'a lead whose turn another job holds is left out, not waited ' + 'for, and is contacted once on its own afterwards',
    async () => {
      const [a, b, busy] = await newLeads(tw, 3);
      const held = await lockLead(h.app.db.pool, busy!.leadId);
      let results;
      try {
        results = await engine.runFirstContacts([a!.leadId, b!.leadId, busy!.leadId]);
        assert.equal(sentTo(busy!.phone), 0, 'nothing sent to the lead whose lock was held');
      } finally {
        await held.release();
      }
      assert.deepEqual([...results.keys()].sort(), [a!.leadId, b!.leadId].sort());
      assert.deepEqual(await engine.run(busy!.leadId), { kind: 'done', outcome: 'first_contact_sent' });
      assert.equal(sentTo(busy!.phone), 1);
      await jobsOf([]); // the three queued jobs are not this test's subject
    },
  );

  it('leads that are not a plain first contact are left to their own turn: already contacted, agent off', async () => {
    const [contacted] = await newLeads(tw, 1);
    assert.equal((await engine.runFirstContacts([contacted!.leadId])).size, 1);
    const off = await h.workspace('twilio');
    await h.app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [off.workspaceId]);
    const [quiet] = await newLeads(off, 1);
    const results = await engine.runFirstContacts([contacted!.leadId, quiet!.leadId]);
    assert.equal(results.size, 0);
    assert.equal(sentTo(contacted!.phone), 1);
    assert.equal(sentTo(quiet!.phone), 0);
    await jobsOf([]);
  });

  it('one send refused in the batch: that lead goes to a person, the others are contacted', async () => {
    const leads = await newLeads(tw, 3);
    const jobs = await jobsOf(leads.map((l) => l.leadId));
    h.twilio.failNextSends(1, { status: 400, code: 63003 });
    const results = await worker.runBatch(jobs);
    await settleJobs(jobs, results);
    assert.deepEqual(outcomes(results).sort(), ['first_contact_sent', 'first_contact_sent', 'recipient_unreachable']);
    const statuses = await Promise.all(leads.map((l) => statusOf(l.leadId)));
    assert.deepEqual(statuses.sort(), ['in_conversation', 'in_conversation', 'needs_human']);
  });

  it('the same lead named by two jobs of a batch: one template; the second job finds nothing left to do', async () => {
    const [lead, other] = await newLeads(tw, 2);
    const jobs = await jobsOf([lead!.leadId, other!.leadId]);
    const job = jobs.find((j) => (j.data as { leadId: string }).leadId === lead!.leadId);
    const otherJob = jobs.find((j) => j !== job);
    // The other lead's job, pointed at the same lead.
    const twin = { ...otherJob!, data: { leadId: lead!.leadId } } as Job<unknown>;
    ranAlone.length = 0;
    const results = await worker.runBatch([job!, twin]);
    assert.deepEqual(outcomes(results), ['first_contact_sent', 'nothing_to_answer']);
    assert.deepEqual(ranAlone, [lead!.leadId], 'the twin ran on its own');
    assert.equal(sentTo(lead!.phone), 1);
    await settleJobs([job!, twin], results);
  });
});

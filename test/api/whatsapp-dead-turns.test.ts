// A turn whose every attempt pg-boss itself cut short (a shutdown past its grace period, a killed
// worker's lapsed heartbeat) reaches the dead-letter queue without the worker ever seeing its last
// attempt fail, so nothing handed the lead over. The worker's sweep (src/whatsapp/dead-turns.ts)
// finds such a lead and hands it to a person, once; a lead the agent is still serving is left alone.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { AGENT_TURN_QUEUE } from '../../src/jobs/queues.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { handOverProbes } from '../helpers/hand-over-probes.ts';
import { uniquePhone } from '../helpers/http.ts';
import { startWhatsappHarness, type WhatsappHarness } from '../helpers/whatsapp-harness.ts';

let h: WhatsappHarness;
let ws: { slug: string; apiKey: string; workspaceId: string };

before(async () => {
  h = await startWhatsappHarness();
  ws = await h.workspace('twilio');
});
after(() => h.close());

const { q, status, escalations, deadLetters } = handOverProbes(() => h);

/** Fails every attempt of the lead's queued turn job as a shutdown does, until pg-boss dead-letters it. */
async function cutShortEveryAttempt(leadId: string): Promise<string> {
  await h.app.relay.drain();
  let turnId = '';
  for (let i = 0; i < 20; i++) {
    const jobs = await h.app.boss.fetch<{ leadId: string }>(AGENT_TURN_QUEUE, {
      batchSize: 20,
      includeMetadata: true,
      ignoreStartAfter: true,
    });
    if (jobs.length === 0) break;
    for (const job of jobs) {
      assert.equal(job.data.leadId, leadId);
      turnId ||= job.id;
      const attempt = { id: job.id, retryCount: job.retryCount };
      await h.app.boss.fail(AGENT_TURN_QUEUE, attempt, { message: 'pg-boss shut down while active' });
    }
  }
  assert.equal(await deadLetters(leadId), 1);
  return turnId;
}

test('a first contact cut short on every attempt: the sweep hands the lead over once, naming the job', async () => {
  const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
  const turnId = await cutShortEveryAttempt(leadId);
  assert.equal(await status(leadId), 'new', 'dead-lettered, and nobody told');

  assert.equal(await h.worker.sweepDeadTurns(), 1);
  assert.equal(await status(leadId), 'needs_human');
  const [escalated, ...more] = await escalations(leadId);
  assert.equal(more.length, 0);
  assert.equal(escalated?.outcome, 'turn_failed');
  assert.match(String(escalated?.reason), /pg-boss shut down while active[\s\S]*jobs retry/);
  assert.ok(String(escalated?.reason).includes(turnId), 'names the turn `jobs retry` takes');
  assert.equal(h.twilio.messages.filter((m) => m.to === phone).length, 0);

  assert.equal(await h.worker.sweepDeadTurns(), 0, 'the next sweep leaves the lead alone');
  assert.equal((await escalations(leadId)).length, 1);
  // Handed back to the agent by a person: the old dead letter does not hand it over again.
  await q(`UPDATE leads SET status = 'in_conversation' WHERE id = $1`, [leadId]);
  await q(
    `INSERT INTO lead_events (lead_id, type, data) VALUES ($1, 'lead.status_changed', '{"to":"in_conversation"}')`,
    [leadId],
  );
  assert.equal(await h.worker.sweepDeadTurns(), 0);
  assert.equal(await status(leadId), 'in_conversation');
});

test('a dead turn whose lead the agent answered since, or has a newer turn queued, is left alone', async () => {
  const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
  await h.settle();
  await h.leadSays('twilio', ws.slug, phone, PERSONA_PHRASES.answer);
  await cutShortEveryAttempt(leadId);
  assert.equal(await status(leadId), 'in_conversation');
  // As a turn stopped mid-run leaves it: its attempt had taken the lead (and cleared the request).
  await q('UPDATE leads SET turn_requested_at = NULL WHERE id = $1', [leadId]);

  // The lead writes again: a newer turn is queued, which will answer both messages.
  await h.leadSays('twilio', ws.slug, phone, 'Are you still there?');
  assert.equal(await h.worker.sweepDeadTurns(), 0);
  await h.settle();
  assert.equal(await h.worker.sweepDeadTurns(), 0, 'answered: nothing left waiting');
  assert.equal(await status(leadId), 'in_conversation');
  assert.deepEqual(await escalations(leadId), []);
});

test('a worker that starts looks at once: a turn cut short before the restart hands its lead over', async () => {
  const { leadId } = await h.submit(ws.apiKey, { phone: uniquePhone() });
  await cutShortEveryAttempt(leadId);
  await h.worker.start();
  for (let i = 0; i < 400 && (await status(leadId)) !== 'needs_human'; i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(await status(leadId), 'needs_human');
});

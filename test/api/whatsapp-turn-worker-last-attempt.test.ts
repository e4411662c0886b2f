// A turn that throws (a bug, a database error) is retried by pg-boss; on the job's last attempt
// the worker (src/whatsapp/turn-worker.ts) hands the lead to a person (`turn_failed`) and
// dead-letters the job, so the lead does not wait unseen and `leadintake jobs retry` resumes the
// turn once the cause is fixed. Should the hand-over fail too, the job is dead-lettered as before.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { retryDeadTurns } from '../../src/jobs/dead-letters.ts';
import { PERSONA_PHRASES } from '../../src/simulators/personas/lead-personas.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
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

const { q, status, escalations, sentTo, deadLetters } = handOverProbes(() => h);

/** An engine whose chat model throws (not a failure the model client reports: an error out of the turn). */
function throwingEngine(Engine: typeof TurnEngine = TurnEngine): TurnEngine {
  const base = defaultConversationProviders(h.app.config, { scheduling: h.app.scheduling });
  const model = {
    complete: async () => {
      throw new Error('the turn broke');
    },
  };
  return new Engine({
    integrationLog: h.app.integrationLog,
    pool: h.app.db.pool,
    log: h.app.log,
    clock: h.clock.read,
    workspaces: h.app.workspaces,
    providers: { ...base, chat: () => ({ model, name: 'broken' }) },
  });
}

/** Runs the queued turn jobs (retries at once) on `worker` until none is left; returns how many ran. */
async function drain(worker: TurnWorker): Promise<number> {
  let total = 0;
  for (;;) {
    await h.app.relay.drain();
    const ran = await worker.drainOnce({ ignoreBackoff: true });
    total += ran;
    if (ran === 0) return total;
  }
}

/** A lead that got its template and has just written: its reply turn's job is queued. */
async function leadWhoWrote(): Promise<{ leadId: string; phone: string; turnId: string }> {
  const { leadId, phone } = await h.submit(ws.apiKey, { phone: uniquePhone() });
  await h.settle();
  await h.leadSays('twilio', ws.slug, phone, PERSONA_PHRASES.answer);
  const [outbox] = await q(`SELECT job_id FROM outbox WHERE payload->>'leadId' = $1`, [leadId]);
  return { leadId, phone, turnId: outbox.job_id };
}

test('the last attempt hands over (turn_failed), dead-letters the job; jobs retry resumes the turn', async () => {
  const { leadId, phone, turnId } = await leadWhoWrote();
  const worker = new TurnWorker({ boss: h.app.boss, engine: throwingEngine(), log: h.app.log, concurrency: 1 });
  assert.equal(await drain(worker), 6, 'the first attempt and 5 retries');

  assert.equal(await status(leadId), 'needs_human');
  const [escalated, ...more] = await escalations(leadId);
  assert.equal(more.length, 0, 'handed over once, on the last attempt only');
  assert.equal(escalated?.outcome, 'turn_failed');
  assert.match(String(escalated?.reason), /the turn broke[\s\S]*jobs retry/);
  assert.equal(await deadLetters(leadId), 1);
  const line = h.app.logs
    .map((l) => JSON.parse(l))
    .find((l) => l.level === 40 && l.leadId === leadId && /dead-lettered/.test(l.msg));
  assert.equal(line?.jobId, turnId);

  // Fixed (the harness's own engine works): the retried job answers the lead.
  assert.equal(await retryDeadTurns(h.app.boss, [turnId]), 1);
  await h.settle({ ignoreBackoff: true });
  assert.equal(sentTo(phone).length, 2, 'the template, then the answer');
  assert.equal(await status(leadId), 'in_conversation');
});

test('a hand-over that fails too: logged, and the job is dead-lettered as before', async () => {
  const { leadId } = await leadWhoWrote();
  class NoHandOver extends TurnEngine {
    override async handOverFailedTurn(): Promise<void> {
      throw new Error('the database is away');
    }
  }
  const worker = new TurnWorker({
    boss: h.app.boss,
    engine: throwingEngine(NoHandOver),
    log: h.app.log,
    concurrency: 1,
  });
  assert.equal(await drain(worker), 6);
  assert.equal(await status(leadId), 'in_conversation');
  assert.equal(await deadLetters(leadId), 1);
  assert.ok(
    h.app.logs
      .map((l) => JSON.parse(l))
      .some((l) => l.level === 50 && l.leadId === leadId && /handing a failed agent turn over failed/.test(l.msg)),
  );
});

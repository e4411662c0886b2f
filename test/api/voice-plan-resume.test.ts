// A call again whose job was interrupted and runs again (docs/FOLLOW-UP.md, "The plan" and "Voice:
// calling again"): the call's end decides the next step while its step is still marked in flight,
// and a step whose call was never placed keeps to the calling window. Steps run by the test clock.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VapiPersona } from '../../src/simulators/personas/vapi-personas.ts';
import { pendingStep } from '../helpers/contact-plan-harness.ts';
import { postLead, validLead } from '../helpers/http.ts';
import {
  leadOf,
  callsOf as voiceCalls,
  playLatestCall,
  startVoiceHarness,
  voiceWorkspace,
  type VoiceHarness,
  type VoiceWorkspace,
} from '../helpers/voice-harness.ts';

const MIN = 60_000;
// Monday 5 September 2050, 09:30 in Berlin (the lead's zone, from its metadata).
const MONDAY_0930 = Date.parse('2050-09-05T07:30:00Z');

let h: VoiceHarness;
let ws: VoiceWorkspace;
before(async () => {
  h = await startVoiceHarness();
  ws = await voiceWorkspace(h);
});
after(() => h.close());

const callsOf = (leadId: string) => voiceCalls(h, leadId);
const play = (leadId: string, persona: VapiPersona) => playLatestCall(h, leadId, persona);

/** A lead whose first call rang out: its second call is scheduled. */
async function leadCalledOnce(): Promise<{ leadId: string; step: number }> {
  h.clock.now = MONDAY_0930;
  const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
  assert.equal(res.status, 201, JSON.stringify(res.body));
  const leadId: string = res.body.leadId;
  await play(leadId, 'no-answer');
  const step = await pendingStep(h.app, leadId);
  assert.equal(step?.kind, 'call');
  return { leadId, step: step.step };
}

async function planOf(leadId: string) {
  const { rows } = await h.app.db.pool.query('SELECT * FROM contact_plans WHERE lead_id = $1', [leadId]);
  return rows[0];
}

describe('an interrupted call again', () => {
  test('the call went out but was never recorded: its end schedules the next call; the rerun keeps it', async () => {
    const { leadId, step } = await leadCalledOnce();
    h.clock.now = MONDAY_0930 + 2 * MIN;
    // The attempter's recording transaction fails after Vapi accepted the call (as a killed worker would).
    const fn = `fail_record_${leadId.replaceAll('-', '')}`;
    await h.app.db.pool.query(
      `CREATE FUNCTION ${fn}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'recording failed'; END $$;
       CREATE TRIGGER ${fn} BEFORE INSERT ON call_sessions FOR EACH ROW
         WHEN (NEW.lead_id = '${leadId}'::uuid) EXECUTE FUNCTION ${fn}()`,
    );
    try {
      await assert.rejects(h.app.contactPlans.run(leadId, step), /recording failed/);
    } finally {
      await h.app.db.pool.query(`DROP TRIGGER ${fn} ON call_sessions; DROP FUNCTION ${fn}()`);
    }
    assert.equal(callsOf(leadId).length, 2, 'Vapi accepted the second call');
    assert.ok((await planOf(leadId)).in_flight_since, 'the step is still in flight');

    // The call rings out; its messages reconcile it as the lead's session.
    await play(leadId, 'no-answer');
    // pg-boss runs the step's job again.
    await h.app.contactPlans.run(leadId, step);
    assert.equal(callsOf(leadId).length, 2, 'the call is not placed twice');
    const next = await pendingStep(h.app, leadId);
    assert.deepEqual([next?.kind, next?.at.toISOString()], ['call', new Date(MONDAY_0930 + 32 * MIN).toISOString()]);
    const plan = await planOf(leadId);
    assert.deepEqual([plan.attempts, plan.ended_at, plan.in_flight_since], [2, null, null]);
    assert.equal((await leadOf(h, leadId)).status, 'in_conversation');
  });

  test('the call was never placed and the retry comes at 03:00: no call, the step moves to 09:00', async () => {
    const { leadId, step } = await leadCalledOnce();
    // The step was marked in flight, then its job failed before the call (the database away, say).
    await h.app.db.pool.query('UPDATE contact_plans SET in_flight_since = now() WHERE lead_id = $1', [leadId]);
    // Its retry runs overnight: Tuesday 03:00 in Berlin.
    h.clock.now = Date.parse('2050-09-06T01:00:00Z');
    assert.equal(await h.app.contactPlans.run(leadId, step), 'moved');
    assert.equal(callsOf(leadId).length, 1, 'no call is placed');
    const next = await pendingStep(h.app, leadId);
    assert.deepEqual([next?.kind, next?.at.toISOString()], ['call', '2050-09-06T07:00:00.000Z']);
    assert.equal((await planOf(leadId)).in_flight_since, null);
  });

  test('a resumed step whose call was placed is not moved by the window: it is completed', async () => {
    const { leadId, step } = await leadCalledOnce();
    h.clock.now = MONDAY_0930 + 2 * MIN;
    await h.app.db.pool.query('UPDATE contact_plans SET in_flight_since = now() WHERE lead_id = $1', [leadId]);
    // The second call's session was recorded before the worker stopped; its end has not come yet.
    await h.app.db.pool.query(
      "INSERT INTO call_sessions (lead_id, provider_call_id, status) VALUES ($1, $2, 'queued')",
      [leadId, `call_resume_${leadId}`],
    );
    h.clock.now = Date.parse('2050-09-05T19:00:00Z'); // 21:00 in Berlin, outside the window
    assert.equal(await h.app.contactPlans.run(leadId, step), 'attempted');
    assert.equal(callsOf(leadId).length, 1, 'not called again');
    assert.equal(await pendingStep(h.app, leadId), null, "the step is done; the call's end decides the next");
  });
  test("an earlier call's late end leaves the step in flight as it is", async () => {
    h.clock.now = MONDAY_0930;
    const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
    const leadId: string = res.body.leadId;
    // An operator set a call before the first call's end came; its attempt is under way.
    await h.app.db.pool.query(`SELECT contact_plan_schedule($1, 'call', now(), 'operator', '{"byOperator": true}')`, [
      leadId,
    ]);
    await h.app.db.pool.query('UPDATE contact_plans SET in_flight_since = now() WHERE lead_id = $1', [leadId]);
    const step = (await planOf(leadId)).step;
    await play(leadId, 'no-answer');
    const plan = await planOf(leadId);
    assert.deepEqual([plan.step, plan.next_kind, plan.next_reason], [step, 'call', 'operator']);
    assert.ok(plan.in_flight_since, 'still in flight');
  });
});

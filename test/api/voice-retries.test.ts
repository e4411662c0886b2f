// The voice contact plan through the real app and the Vapi simulator (docs/VOICE.md, "Calling
// again"): each call's end decides the next call, the voice attempter places it as a new call
// session, and the plan ends when the lead is reached, booked, or not reached after 4 attempts.
// Steps run by the test clock (runDueSteps), never by waiting.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { endOfCallReportMessage } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import type { VapiPersona } from '../../src/simulators/personas/vapi-personas.ts';
import { pendingStep, runDueSteps, timeline } from '../helpers/contact-plan-harness.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import {
  deliver,
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

async function submit(): Promise<{ leadId: string; callId: string }> {
  const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { leadId: res.body.leadId, callId: res.body.providerCallId };
}

/** Moves the clock to the pending step and runs it: the next call is placed. */
async function callAgain(leadId: string): Promise<void> {
  const step = await pendingStep(h.app, leadId);
  assert.ok(step, 'a call is scheduled');
  h.clock.now = step.at.getTime();
  const before = callsOf(leadId).length;
  // Other tests' leads may have steps due by then too: they run as well.
  assert.ok((await runDueSteps(h.app, h.clock)).includes('attempted'));
  assert.equal(callsOf(leadId).length, before + 1, 'a new call was placed');
}

async function planOf(leadId: string) {
  const { rows } = await h.app.db.pool.query('SELECT * FROM contact_plans WHERE lead_id = $1', [leadId]);
  return rows[0];
}

describe('calling again', () => {
  test('no answer → 2 min → 30 min → next day 10:00 local → not reached after 4 attempts: needs_human', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    await play(leadId, 'no-answer');
    assert.equal((await pendingStep(h.app, leadId))?.at.toISOString(), new Date(MONDAY_0930 + 2 * MIN).toISOString());
    await callAgain(leadId);
    assert.equal((await leadOf(h, leadId)).status, 'in_conversation');
    await play(leadId, 'no-answer');
    assert.equal((await pendingStep(h.app, leadId))?.at.toISOString(), new Date(MONDAY_0930 + 32 * MIN).toISOString());
    await callAgain(leadId);
    await play(leadId, 'no-answer');
    assert.equal((await pendingStep(h.app, leadId))?.at.toISOString(), '2050-09-06T08:00:00.000Z');
    await callAgain(leadId);
    await play(leadId, 'no-answer');
    assert.equal(await pendingStep(h.app, leadId), null);
    assert.equal((await leadOf(h, leadId)).status, 'needs_human');
    const escalated = await timeline(h.app, leadId, ['conversation.escalated', 'contact.plan_ended']);
    assert.equal(
      escalated.find((e) => e.type === 'conversation.escalated')?.data.detail,
      'not reached after 4 attempts',
    );
    assert.equal(escalated.find((e) => e.type === 'contact.plan_ended')?.data.reason, 'not_reached');
    const attempted = await timeline(h.app, leadId, ['contact.attempted']);
    assert.deepEqual(
      attempted.map((e) => [e.data.attempt, e.data.kind, e.data.outcome]),
      [
        [1, 'first_contact', 'no_answer'],
        [2, 'call', 'no_answer'],
        [3, 'call', 'no_answer'],
        [4, 'call', 'no_answer'],
      ],
    );
    const dispatched = await timeline(h.app, leadId, ['call.dispatched']);
    assert.deepEqual(
      dispatched.map((e) => e.data.attempt ?? 1),
      [1, 2, 3, 4],
    );
  });

  test('a busy line is called again after 30 minutes, not 2', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    await play(leadId, 'busy');
    assert.equal((await pendingStep(h.app, leadId))?.at.toISOString(), new Date(MONDAY_0930 + 30 * MIN).toISOString());
  });

  test('at most 3 calls in 24 hours: the 4th waits until the 1st is a day old', async () => {
    // Monday 14:00 Berlin: the next day's 10:00 is within 24 hours of the first call.
    const start = Date.parse('2050-09-05T12:00:00Z');
    h.clock.now = start;
    const { leadId } = await submit();
    await play(leadId, 'no-answer');
    await callAgain(leadId);
    await play(leadId, 'no-answer');
    await callAgain(leadId);
    await play(leadId, 'no-answer');
    const step = await pendingStep(h.app, leadId);
    assert.ok(
      step && step.at.getTime() >= start + 24 * 60 * MIN && step.at.getTime() < start + 25 * 60 * MIN,
      String(step?.at),
    );
    const scheduled = await timeline(h.app, leadId, ['contact.scheduled']);
    assert.match(String(scheduled.at(-1)?.data.reason), /at most 3 calls in 24 hours/);
  });

  test('the voicemail message is left once per 24 hours: the next call within them carries none', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    const first = callsOf(leadId)[0]!.assistantOverrides as any;
    assert.deepEqual(first.voicemailDetection, { provider: 'vapi' });
    assert.match(first.voicemailMessage, /^Hi Ada, this is Mia from Sunny Roofs/);
    await play(leadId, 'voicemail');
    assert.ok((await planOf(leadId)).voicemail_left_at, 'voicemail_left_at set');
    await callAgain(leadId);
    const second = callsOf(leadId)[1]!.assistantOverrides as any;
    assert.deepEqual(second.voicemailDetection, { provider: 'vapi' });
    assert.equal(second.voicemailMessage, undefined);
    const attempted = await timeline(h.app, leadId, ['contact.attempted']);
    assert.equal(attempted[0]?.data.outcome, 'voicemail');
  });

  test('a number the carrier cannot connect ends the plan at once: needs_human with the reason', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    const call = callsOf(leadId)[0]!;
    const res = await deliver(
      h,
      ws.slug,
      endOfCallReportMessage(call, h.clock.now, {
        endedReason: 'twilio-failed-to-connect-call',
        startedAt: null,
        endedAt: new Date(h.clock.now).toISOString(),
        messages: [],
        summary: null,
        recordingUrl: null,
        cost: 0,
      } as any),
      { 'x-vapi-secret': ws.secret },
    );
    assert.equal(res.status, 200);
    assert.equal(await pendingStep(h.app, leadId), null);
    assert.equal((await leadOf(h, leadId)).status, 'needs_human');
    assert.equal((await planOf(leadId)).ended_reason, 'invalid_number');
    const escalated = await timeline(h.app, leadId, ['conversation.escalated']);
    assert.equal(escalated[0]?.data.reason, 'invalid_number');
  });

  for (const c of [
    { endedReason: 'call.in-progress.error-providerfault-outbound-sip-503-service-unavailable', picked: false },
    { endedReason: 'pipeline-error-openai-llm-failed', picked: true },
  ]) {
    test(`a call that breaks off on a fault goes to a person, nothing is scheduled: ${c.endedReason}`, async () => {
      h.clock.now = MONDAY_0930;
      const { leadId } = await submit();
      const call = callsOf(leadId)[0]!;
      const at = new Date(h.clock.now).toISOString();
      const report = {
        endedReason: c.endedReason,
        startedAt: c.picked ? at : null,
        endedAt: at,
        messages: [],
        summary: null,
        recordingUrl: null,
        cost: 0,
      };
      const res = await deliver(h, ws.slug, endOfCallReportMessage(call, h.clock.now, report as any), {
        'x-vapi-secret': ws.secret,
      });
      assert.equal(res.status, 200);
      assert.equal((await leadOf(h, leadId)).status, 'needs_human');
      assert.equal(await pendingStep(h.app, leadId), null);
      assert.ok((await planOf(leadId)).ended_at, 'the plan has ended');
      const failed = await timeline(h.app, leadId, ['call.failed']);
      assert.equal(failed[0]?.data.endedReason, c.endedReason);
      const attempted = await timeline(h.app, leadId, ['contact.attempted']);
      assert.equal(attempted.length, 1);
      assert.equal(attempted[0]?.data.outcome, 'failed');
    });
  }

  test('a step whose job failed on its last retry hands the lead over; the plan ends with it', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    await play(leadId, 'no-answer');
    const step = await pendingStep(h.app, leadId);
    assert.ok(step, 'a call again is scheduled');
    assert.equal(await h.app.contactPlans.handOverFailedStep(leadId, step.step + 1, 'x'), false, 'another step');
    assert.equal(await h.app.contactPlans.handOverFailedStep(leadId, step.step, 'the attempt kept failing'), true);
    assert.equal((await leadOf(h, leadId)).status, 'needs_human');
    assert.equal(await pendingStep(h.app, leadId), null);
    assert.ok((await planOf(leadId)).ended_at, 'the plan has ended');
    const escalated = await timeline(h.app, leadId, ['conversation.escalated']);
    assert.deepEqual(escalated[0]?.data, {
      reason: 'attempt_failed',
      detail: 'the attempt kept failing',
      attempts: 1,
      actor: 'system',
      from: 'in_conversation',
      to: 'needs_human',
    });
  });

  test('an answered call ends the plan; GET shows the latest call session', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId, callId } = await submit();
    await play(leadId, 'no-answer');
    await callAgain(leadId);
    const latest = callsOf(leadId)[1]!.id;
    assert.notEqual(latest, callId);
    const during = (await getLead(h.app.http, ws.apiKey, leadId)).body;
    assert.equal(during.voiceCall.providerCallId, latest);
    await play(leadId, 'hangs-up');
    const plan = await planOf(leadId);
    assert.equal(plan.ended_reason, 'answered');
    assert.equal(await pendingStep(h.app, leadId), null);
    const reached = await timeline(h.app, leadId, ['contact.reached']);
    assert.deepEqual(reached[0]?.data, { channel: 'voice', attempt: 2 });
    const got = (await getLead(h.app.http, ws.apiKey, leadId)).body;
    assert.equal(got.voiceCall.providerCallId, latest);
    assert.equal(got.voiceCall.endedReason, 'customer-ended-call');
    // The lead hung up before anything was decided: nothing is scheduled, so a person follows up.
    assert.equal(got.lead.status, 'needs_human');
    const [escalated] = await timeline(h.app, leadId, ['conversation.escalated']);
    assert.equal(escalated?.data.reason, 'call_ended_without_outcome');
  });

  test('a call ending while one of its tools runs, or with the number not to be called, is left as it is', async () => {
    h.clock.now = MONDAY_0930;
    const running = await submit();
    // The tool answered "still working" and goes on in the background: its late result decides.
    await h.app.db.pool.query(
      `INSERT INTO voice_tool_calls (workspace_id, tool_call_id, provider_call_id, lead_id, name)
       SELECT workspace_id, 'call_tool_1', $2, id, 'bookConsult' FROM leads WHERE id = $1`,
      [running.leadId, running.callId],
    );
    await play(running.leadId, 'hangs-up');
    assert.equal((await getLead(h.app.http, ws.apiKey, running.leadId)).body.lead.status, 'in_conversation');

    const suppressed = await submit();
    await h.app.db.pool.query(
      `INSERT INTO suppressed_numbers (workspace_id, phone_e164, source, lead_id)
       SELECT workspace_id, phone_normalized, 'opt_out', id FROM leads WHERE id = $1`,
      [suppressed.leadId],
    );
    await play(suppressed.leadId, 'hangs-up');
    assert.equal((await getLead(h.app.http, ws.apiKey, suppressed.leadId)).body.lead.status, 'in_conversation');
    assert.deepEqual(await timeline(h.app, suppressed.leadId, ['conversation.escalated']), []);
  });

  test('a booking during the plan cancels the pending call', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    await play(leadId, 'no-answer');
    assert.ok(await pendingStep(h.app, leadId));
    await h.app.db.pool.query("UPDATE leads SET status = 'booked' WHERE id = $1", [leadId]);
    assert.equal(await pendingStep(h.app, leadId), null);
    h.clock.now += 5 * MIN;
    const before = callsOf(leadId).length;
    await runDueSteps(h.app, h.clock);
    assert.equal(callsOf(leadId).length, before);
  });

  test('a stop while the next call is under way leaves nothing scheduled after it', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    await play(leadId, 'no-answer');
    await callAgain(leadId);
    // The workspace's kill switch is turned on while the second call rings.
    await h.app.db.pool.query('UPDATE workspaces SET agent_enabled = false WHERE id = $1', [ws.workspaceId]);
    try {
      await play(leadId, 'no-answer');
      assert.equal(await pendingStep(h.app, leadId), null);
      assert.equal((await planOf(leadId)).ended_reason, 'agent_off');
    } finally {
      await h.app.db.pool.query('UPDATE workspaces SET agent_enabled = true WHERE id = $1', [ws.workspaceId]);
    }
  });
});

describe('a stop while a call is being placed', () => {
  test('the lead books while Vapi answers the call: the call is recorded, nothing is scheduled after it', async () => {
    h.clock.now = MONDAY_0930;
    const { leadId } = await submit();
    await play(leadId, 'no-answer');
    const step = (await pendingStep(h.app, leadId))!;
    h.clock.now = step.at.getTime();
    // Vapi holds its answer to POST /call; the booking lands in between.
    h.vapi.setFailure('slow', 500);
    try {
      const asked = h.vapi.requests.length;
      const running = h.app.contactPlans.run(leadId, step.step);
      while (h.vapi.requests.length === asked) await new Promise((r) => setImmediate(r));
      await h.app.db.pool.query("UPDATE leads SET status = 'booked' WHERE id = $1", [leadId]);
      assert.equal(await running, 'attempted');
    } finally {
      h.vapi.setFailure('none');
    }
    assert.equal(callsOf(leadId).length, 2, 'the call in flight went out');
    await play(leadId, 'no-answer');
    assert.equal(await pendingStep(h.app, leadId), null);
    assert.equal((await planOf(leadId)).ended_reason, 'booked');
    assert.equal((await leadOf(h, leadId)).status, 'booked');
  });
});

describe('the sandbox', () => {
  test('…0008 (no answer twice, then books) reaches booked through the retries', async () => {
    // The sandbox's simulators run on the system clock: so does this test, in a window always open.
    h.clock.now = Date.now();
    const always = await voiceWorkspace(h, {}, {
      agent: {
        ...SOLAR_AGENT,
        contactPlan: {
          window: { days: ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'], start: '00:00', end: '24:00' },
        },
      },
    } as Partial<WorkspaceConfig>);
    const res = await postLead(h.app.http, (always as VoiceWorkspace & { sandboxKey: string }).sandboxKey, {
      name: 'Ada Sandbox',
      phone: '+1 555 201 0008',
      consent: true,
      metadata: { timeZone: 'Europe/Berlin' },
    });
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const leadId = res.body.leadId as string;
    for (let call = 1; call <= 3; call++) {
      await h.app.sandbox.settled();
      const step = await pendingStep(h.app, leadId);
      if (call === 3) {
        assert.equal(step, null);
        break;
      }
      assert.ok(step, `a call is scheduled after call ${call}`);
      h.clock.now = step.at.getTime();
      await runDueSteps(h.app, h.clock);
    }
    const got = (await getLead(h.app.http, (always as VoiceWorkspace & { sandboxKey: string }).sandboxKey, leadId))
      .body;
    assert.equal(got.lead.status, 'booked');
    assert.equal(got.voiceCall.endedReason, 'assistant-ended-call');
    const attempted = await timeline(h.app, leadId, ['contact.attempted']);
    assert.deepEqual(
      attempted.map((e) => e.data.outcome),
      ['no_answer', 'no_answer', 'answered'],
    );
  });
});

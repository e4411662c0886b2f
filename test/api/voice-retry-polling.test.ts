// Polling a voice lead between its calls (docs/API.md, "Reading a lead" and "Polling"): the spec
// tells clients to stop once `voiceCall.status` is `ended`, so while the contact plan will call
// again GET shows that pending call as `scheduled` at `scheduledAt`, never the ended session. Through
// the real app and the Vapi simulator; plan steps run by the test clock (docs/VOICE.md, "Calling again").
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VapiPersona } from '../../src/simulators/personas/vapi-personas.ts';
import {
  endOfCallReportMessage,
  statusUpdateMessage,
  toolCallsMessage,
} from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { pendingStep, runDueSteps } from '../helpers/contact-plan-harness.ts';
import { getLead, postLead, validLead } from '../helpers/http.ts';
import {
  deliver,
  callsOf as voiceCalls,
  playLatestCall,
  startVoiceHarness,
  voiceWorkspace,
  type VoiceHarness,
  type VoiceWorkspace,
} from '../helpers/voice-harness.ts';

// Monday 5 September 2050, 09:30 in Berlin (the lead's zone, from its metadata).
const MONDAY_0930 = Date.parse('2050-09-05T07:30:00Z');
const SESSION_FIELDS = [
  'providerCallId',
  'startedAt',
  'endedAt',
  'durationSeconds',
  'summary',
  'transcript',
  'recordingUrl',
  'endedReason',
] as const;

let h: VoiceHarness;
let ws: VoiceWorkspace;
before(async () => {
  h = await startVoiceHarness();
  ws = await voiceWorkspace(h);
});
after(() => h.close());

const callsOf = (leadId: string) => voiceCalls(h, leadId);
const play = (leadId: string, persona: VapiPersona) => playLatestCall(h, leadId, persona);

async function read(leadId: string) {
  const res = await getLead(h.app.http, ws.apiKey, leadId);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

/** The plan's pending call as the database holds it: the only source `scheduledAt` may come from. */
async function nextAt(leadId: string): Promise<string> {
  const { rows } = await h.app.db.pool.query(
    "SELECT next_at FROM contact_plans WHERE lead_id = $1 AND ended_at IS NULL AND next_kind IN ('call', 'callback')",
    [leadId],
  );
  assert.equal(rows.length, 1, 'a call is pending');
  return (rows[0].next_at as Date).toISOString();
}

function assertScheduled(voiceCall: Record<string, unknown>, at: string): void {
  assert.equal(voiceCall.status, 'scheduled');
  assert.equal(voiceCall.scheduledAt, at);
  for (const field of SESSION_FIELDS) assert.equal(voiceCall[field], null, field);
}

function assertSession(voiceCall: Record<string, unknown>, providerCallId: string, status?: string): void {
  assert.equal(voiceCall.providerCallId, providerCallId);
  assert.ok(!('scheduledAt' in voiceCall), 'a call session has no scheduledAt');
  if (status) assert.equal(voiceCall.status, status);
}

/** Moves the clock to the pending call and places it. */
async function callAgain(leadId: string): Promise<string> {
  const step = await pendingStep(h.app, leadId);
  assert.ok(step, 'a call is scheduled');
  h.clock.now = step.at.getTime();
  assert.ok((await runDueSteps(h.app, h.clock)).includes('attempted'));
  return callsOf(leadId).at(-1)!.id as string;
}

describe('GET voiceCall between calls', () => {
  test('no answer: `scheduled` at next_at until the retry is placed; after the last, its session `ended`', async () => {
    h.clock.now = MONDAY_0930;
    const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
    assert.equal(res.status, 201, JSON.stringify(res.body));
    const leadId = res.body.leadId as string;
    assertSession((await read(leadId)).voiceCall, res.body.providerCallId);

    for (let attempt = 1; attempt <= 3; attempt++) {
      await play(leadId, 'no-answer');
      const between = await read(leadId);
      assert.equal(between.lead.status, 'in_conversation');
      // Not `ended`: a client following the spec keeps polling.
      assertScheduled(between.voiceCall, await nextAt(leadId));
      const placed = await callAgain(leadId);
      const during = await read(leadId);
      assertSession(during.voiceCall, placed);
      assert.notEqual(during.voiceCall.status, 'ended');
    }

    // The 4th call unanswered: the plan ends without a next call (needs_human).
    const last = callsOf(leadId).at(-1)!.id as string;
    await play(leadId, 'no-answer');
    assert.equal(await pendingStep(h.app, leadId), null);
    const final = await read(leadId);
    assert.equal(final.lead.status, 'needs_human');
    assertSession(final.voiceCall, last, 'ended');
    assert.equal(final.voiceCall.endedReason, 'customer-did-not-answer');
  });

  test('an answered call ends the plan: GET shows that session `ended`, nothing scheduled', async () => {
    h.clock.now = MONDAY_0930;
    const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
    const leadId = res.body.leadId as string;
    await play(leadId, 'busy');
    assertScheduled((await read(leadId)).voiceCall, await nextAt(leadId));
    const placed = await callAgain(leadId);
    await play(leadId, 'hangs-up');
    assertSession((await read(leadId)).voiceCall, placed, 'ended');
  });

  test('an operator taking the lead over cancels the pending call: the ended session again', async () => {
    h.clock.now = MONDAY_0930;
    const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
    const leadId = res.body.leadId as string;
    await play(leadId, 'no-answer');
    assert.equal((await read(leadId)).voiceCall.status, 'scheduled');
    await h.app.db.pool.query("UPDATE leads SET status = 'needs_human' WHERE id = $1", [leadId]);
    const got = await read(leadId);
    assertSession(got.voiceCall, res.body.providerCallId, 'ended');
  });

  test('a callback the lead asks for on the call: the call in progress, then the callback `scheduled`', async () => {
    h.clock.now = MONDAY_0930;
    const res = await postLead(h.app.http, ws.apiKey, validLead({ metadata: { timeZone: 'Europe/Berlin' } }));
    const leadId = res.body.leadId as string;
    const call = callsOf(leadId)[0]!;
    const secret = { 'x-vapi-secret': ws.secret };
    await deliver(h, ws.slug, statusUpdateMessage(call, 'in-progress', h.clock.now), secret);
    const asked = toolCallsMessage(
      call,
      h.clock.now,
      [{ id: 'cb_polling_1', name: 'scheduleCallback', args: { at: '2050-09-05T18:00', leadWords: 'after six' } }],
      'string',
    );
    assert.equal((await deliver(h, ws.slug, asked, secret, 'tools')).status, 200);
    // The callback is pending, but the call that asked for it is still under way: that session shows.
    assertSession((await read(leadId)).voiceCall, call.id as string, 'in-progress');
    const at = new Date(h.clock.now).toISOString();
    const report = { endedReason: 'customer-ended-call', startedAt: at, endedAt: at, messages: [], summary: null };
    await deliver(
      h,
      ws.slug,
      endOfCallReportMessage(call, h.clock.now, { ...report, recordingUrl: null, cost: 0 } as any),
      secret,
    );
    assertScheduled((await read(leadId)).voiceCall, '2050-09-05T16:00:00.000Z');
    assert.equal(await nextAt(leadId), '2050-09-05T16:00:00.000Z');
  });
});

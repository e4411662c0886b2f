// The voice channel end to end: a lead is POSTed, the Vapi simulator places the call and plays it
// against our server URL over HTTP (status updates, the persona's tool calls answered by the real
// agent tools against the Cal.com simulator, the end-of-call-report), and GET shows the outcome.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { VapiPersona } from '../src/voice/vapi-personas.ts';
import { getLead, postLead, validLead } from './helpers/http.ts';
import { eventTypes, leadOf, session, startVoiceHarness, voiceWorkspace, type VoiceHarness, type VoiceWorkspace } from './helpers/voice-harness.ts';

let h: VoiceHarness;
let ws: VoiceWorkspace;

before(async () => {
  h = await startVoiceHarness();
  ws = await voiceWorkspace(h);
});
after(async () => {
  await h.close();
});

async function submit(overrides: Record<string, unknown> = {}, key = ws.apiKey): Promise<{ leadId: string; callId: string }> {
  const res = await postLead(h.app.http, key, validLead({ name: 'Ada Lovelace', email: 'ada@example.com', ...overrides }));
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return { leadId: res.body.leadId, callId: res.body.providerCallId };
}

/** The report the simulator delivered for a call, as sent. */
function deliveredReport(callId: string): Record<string, any> {
  const d = h.vapi.deliveries.find((x) => x.callId === callId && x.type === 'end-of-call-report');
  assert.ok(d, 'report delivered');
  return JSON.parse(d.body).message;
}

const BOOKING_TRANSCRIPT = [
  'Assistant: Hi Ada, this is Mia calling about the consultation you asked for. Do you have two minutes?',
  'Lead: Yes, sure, go ahead.',
  'Assistant: Great. Tell me a little about what you need and how soon you would like to start.',
  'Lead: We are a team of about twenty, the budget is approved and we would like to start next month.',
  'Assistant: That sounds like a good fit. The first free time is Monday, 5 September 2050 at 09:00. Does that work for you?',
  'Lead: The first time works for me, please book it.',
  'Assistant: You are booked. The confirmation is on its way by e-mail. Thank you, goodbye!',
  'Lead: Thanks, bye!',
].join('\n\n');

describe('a voice lead end to end', () => {
  test('the lead books on the call: GET shows booked with the booking and the ended call of spec 2.5', async () => {
    const { leadId, callId } = await submit();
    const played = await h.vapi.play(callId, 'books');
    assert.ok(played.deliveries.every((d) => d.status === 200), JSON.stringify(played.deliveries.map((d) => [d.type, d.status, d.responseText])));
    assert.deepEqual(played.toolResults.map((t) => t.name), ['updateLeadProfile', 'listSlots', 'bookConsult', 'endConversation']);

    const got = await getLead(h.app.http, ws.apiKey, leadId);
    assert.equal(got.status, 200);
    const booking = [...h.cal.bookings.values()].find((b) => b.metadata.leadId === leadId);
    assert.ok(booking, 'booked in Cal.com with the lead id');
    assert.equal(got.body.lead.status, 'booked');
    assert.equal(got.body.lead.bookingUid, booking.uid);
    assert.equal(got.body.lead.bookingStart, '2050-09-05T07:00:00.000Z');

    const report = deliveredReport(callId);
    const duration = (Date.parse(report.endedAt) - Date.parse(report.startedAt)) / 1000;
    assert.deepEqual(Object.keys(got.body.voiceCall), ['providerCallId', 'status', 'startedAt', 'endedAt', 'durationSeconds', 'summary', 'transcript', 'recordingUrl', 'endedReason']);
    assert.deepEqual(got.body.voiceCall, {
      providerCallId: callId,
      status: 'ended',
      startedAt: report.startedAt,
      endedAt: report.endedAt,
      durationSeconds: Math.round(duration),
      summary: 'Ada Lovelace qualified and booked the first free consultation time.',
      transcript: BOOKING_TRANSCRIPT,
      recordingUrl: `https://storage.vapi.ai/${callId}-mono.wav`,
      endedReason: 'assistant-ended-call',
    });
    assert.ok(Number.isInteger(got.body.voiceCall.durationSeconds) && got.body.voiceCall.durationSeconds > 30);
    assert.deepEqual(await eventTypes(h, leadId), [
      'lead.created', 'call.dispatched', 'call.started', 'lead.profile_updated', 'booking.created', 'conversation.ended', 'call.ended',
    ]);
  });
});

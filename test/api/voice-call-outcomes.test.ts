// The voice channel end to end: a lead is POSTed, the Vapi simulator places the call and plays it
// against our server URL over HTTP (status updates, the persona's tool calls answered by the real
// agent tools against the Cal.com simulator, the end-of-call-report), and GET shows the outcome.
// Here: where each call ends the lead. Vapi's delivery quirks, what dispatch tells Vapi and the
// workspace variants: voice-vapi-protocol.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bookingTranscript, setUpVoiceLeads } from '../helpers/voice-lead-setup.ts';
import type { VapiPersona } from '../../src/simulators/personas/vapi-personas.ts';
import { getLead } from '../helpers/http.ts';
import { voiceCallView } from '../../src/leads/lead-view.ts';
import { eventTypes, session } from '../helpers/voice-harness.ts';

const { setup: env, submit, deliveredReport } = setUpVoiceLeads();

describe('a voice lead end to end', () => {
  test('the lead books on the call: GET shows booked with the booking and the ended call in voiceCall', async () => {
    const { leadId, callId } = await submit();
    const played = await env.h.vapi.play(callId, 'books');
    assert.ok(
      played.deliveries.every((d) => d.status === 200),
      JSON.stringify(played.deliveries.map((d) => [d.type, d.status, d.responseText])),
    );
    assert.deepEqual(
      played.toolResults.map((t) => t.name),
      ['updateLeadProfile', 'listSlots', 'bookConsult', 'endConversation'],
    );

    const got = await getLead(env.h.app.http, env.ws.apiKey, leadId);
    assert.equal(got.status, 200);
    const booking = [...env.h.cal.bookings.values()].find((b) => b.metadata.leadId === leadId);
    assert.ok(booking, 'booked in Cal.com with the lead id');
    assert.equal(got.body.lead.status, 'booked');
    assert.equal(got.body.lead.bookingUid, booking.uid);
    assert.equal(got.body.lead.bookingStart, '2050-09-05T07:00:00.000Z');

    const report = deliveredReport(callId);
    const duration = (Date.parse(report.endedAt) - Date.parse(report.startedAt)) / 1000;
    assert.deepEqual(Object.keys(got.body.voiceCall), [
      'providerCallId',
      'status',
      'startedAt',
      'endedAt',
      'durationSeconds',
      'summary',
      'transcript',
      'recordingUrl',
      'endedReason',
    ]);
    assert.deepEqual(got.body.voiceCall, {
      providerCallId: callId,
      status: 'ended',
      startedAt: report.startedAt,
      endedAt: report.endedAt,
      durationSeconds: Math.round(duration),
      summary: 'Ada Lovelace qualified and booked the first free consultation time.',
      transcript: bookingTranscript(),
      recordingUrl: `https://storage.vapi.ai/${callId}-mono.wav`,
      endedReason: 'assistant-ended-call',
    });
    assert.ok(Number.isInteger(got.body.voiceCall.durationSeconds) && got.body.voiceCall.durationSeconds > 30);
    assert.deepEqual(await eventTypes(env.h, leadId), [
      'lead.created',
      'call.dispatched',
      'call.started',
      'lead.profile_updated',
      'booking.created',
      'conversation.ended',
      'call.ended',
      // The contact plan counts the call, notes the lead as reached and ends (call-end-plan.ts).
      'contact.attempted',
      'contact.reached',
      'contact.plan_ended',
    ]);
  });
});

describe('each scripted persona ends the lead where its tool calls (or the call) put it', () => {
  const cases: Array<{
    persona: VapiPersona;
    status: string;
    endedReason: string;
    notes?: string;
    events: string[];
    spoke: boolean;
    /** The lead is called again: GET shows that pending call, not the ended one (docs/API.md, "Reading a lead"). */
    retried?: boolean;
    /** The call ended with the lead still in conversation (then handed over). */
    withoutOutcome?: boolean;
  }> = [
    {
      persona: 'not-a-fit',
      status: 'unqualified',
      endedReason: 'assistant-ended-call',
      notes: 'No budget for this at all.',
      events: ['lead.unqualified', 'conversation.ended', 'call.ended'],
      spoke: true,
    },
    {
      persona: 'wants-human',
      status: 'needs_human',
      endedReason: 'assistant-ended-call',
      events: ['lead.escalated', 'conversation.ended', 'call.ended'],
      spoke: true,
    },
    {
      // Picked up, then nothing decided: a person follows up (src/voice/call-end-plan.ts).
      persona: 'hangs-up',
      status: 'needs_human',
      endedReason: 'customer-ended-call',
      events: ['call.ended', 'conversation.escalated'],
      spoke: true,
      withoutOutcome: true,
    },
    {
      persona: 'voicemail',
      status: 'in_conversation',
      endedReason: 'voicemail',
      events: ['call.ended'],
      spoke: true,
      retried: true,
    },
    {
      persona: 'no-answer',
      status: 'in_conversation',
      endedReason: 'customer-did-not-answer',
      events: ['call.ended'],
      spoke: false,
      retried: true,
    },
    {
      persona: 'no-credits',
      status: 'needs_human',
      endedReason: 'call.start.error-subscription-insufficient-credits',
      events: ['call.failed'],
      spoke: false,
    },
  ];
  for (const c of cases) {
    test(`${c.persona}: lead ${c.status}, call ended with ${c.endedReason}`, async () => {
      const { leadId, callId } = await submit();
      const played = await env.h.vapi.play(callId, c.persona);
      assert.ok(played.deliveries.every((d) => d.status === 200));
      const read = (await getLead(env.h.app.http, env.ws.apiKey, leadId)).body;
      assert.equal(read.lead.status, c.status);
      assert.equal(read.lead.qualificationNotes, c.notes ?? null);
      assert.equal(read.lead.bookingUid, null);
      if (c.retried) {
        const { rows: plan } = await env.h.app.db.pool.query('SELECT next_at FROM contact_plans WHERE lead_id = $1', [
          leadId,
        ]);
        assert.equal(read.voiceCall.status, 'scheduled');
        assert.equal(read.voiceCall.scheduledAt, plan[0].next_at.toISOString());
      } else assert.ok(!('scheduledAt' in read.voiceCall));
      // The ended call as GET shows a session (what it shows once no call is pending).
      const got = {
        ...read,
        voiceCall: c.retried
          ? { ...voiceCallView((await session(env.h, callId))!), providerCallId: callId }
          : read.voiceCall,
      };
      assert.equal(got.voiceCall.status, 'ended');
      assert.equal(got.voiceCall.endedReason, c.endedReason);
      assert.ok(got.voiceCall.endedAt);
      if (c.spoke) {
        // A machine speaks first; the assistant then leaves the workspace's voicemail message.
        assert.match(
          got.voiceCall.transcript,
          c.persona === 'voicemail' ? /Assistant: Hi Ada, this is Mia/ : /^Assistant: Hi Ada, this is Mia/,
        );
        assert.ok(got.voiceCall.startedAt && Number.isInteger(got.voiceCall.durationSeconds));
        assert.equal(got.voiceCall.recordingUrl, `https://storage.vapi.ai/${callId}-mono.wav`);
        assert.equal(typeof got.voiceCall.summary, 'string');
      } else {
        // Never connected: nothing was said or recorded, and there is no start to measure from.
        assert.deepEqual(
          [
            got.voiceCall.startedAt,
            got.voiceCall.durationSeconds,
            got.voiceCall.transcript,
            got.voiceCall.recordingUrl,
            got.voiceCall.summary,
          ],
          [null, null, null, null, null],
        );
      }
      const types = await eventTypes(env.h, leadId);
      assert.deepEqual(
        types.filter((t) => c.events.includes(t)),
        c.events,
        types.join(', '),
      );
      const { rows } = await env.h.app.db.pool.query(
        `SELECT type, data FROM lead_events WHERE lead_id = $1 AND type IN ('call.ended', 'call.failed')`,
        [leadId],
      );
      assert.equal(rows.length, 1, 'the end is recorded once');
      assert.equal(rows[0].data.endedReason, c.endedReason, 'the timeline says why the call ended');
      const withoutOutcome = c.status === 'in_conversation' || c.withoutOutcome === true;
      assert.equal(rows[0].data.withoutOutcome, withoutOutcome ? true : undefined);
    });
  }
});

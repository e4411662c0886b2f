// The setup shared by the voice end-to-end tests: the voice harness (with Vapi holding the HMAC
// credential the HMAC workspace uses), a voice workspace, and helpers to submit a lead and read
// what the simulator delivered. Each test file calls setUpVoiceLeads() once and gets its own
// harness and database.
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { postLead, validLead } from './http.ts';
import { startVoiceHarness, voiceWorkspace, type VoiceHarness, type VoiceWorkspace } from './voice-harness.ts';

export const HMAC_SECRET = 'hmac-secret-for-tests-0123456789';

/** The booking persona's transcript; the time is the first free slot when the call was made. */
export const bookingTranscript = (time = '09:00') =>
  [
    'Assistant: Hi Ada, this is Mia calling about the consultation you asked for. Do you have two minutes?',
    'Lead: Yes, sure, go ahead.',
    'Assistant: Great. Tell me a little about what you need and how soon you would like to start.',
    'Lead: We are a team of about twenty, the budget is approved and we would like to start next month.',
    `Assistant: That sounds like a good fit. The first free time is Monday, 5 September 2050 at ${time}. ` +
      'Does that work for you?',
    'Lead: The first time works for me, please book it.',
    'Assistant: You are booked. The confirmation is on its way by e-mail. Thank you, goodbye!',
    'Lead: Thanks, bye!',
  ].join('\n\n');

/** Registers the file's before/after hooks; the returned fields are set once `before` has run. */
export function setUpVoiceLeads() {
  const s = {} as {
    h: VoiceHarness;
    ws: VoiceWorkspace;
  };

  before(async () => {
    // Vapi holds an HMAC webhook credential (Vapi's API docs) for the HMAC workspace.
    s.h = await startVoiceHarness({ vapi: { credentials: { 'cred-hmac-1': { secretKey: HMAC_SECRET } } } });
    s.ws = await voiceWorkspace(s.h);
  });
  after(async () => {
    await s.h.close();
  });

  async function submit(
    overrides: Record<string, unknown> = {},
    key = s.ws.apiKey,
  ): Promise<{ leadId: string; callId: string }> {
    const res = await postLead(
      s.h.app.http,
      key,
      validLead({ name: 'Ada Lovelace', email: 'ada@example.com', ...overrides }),
    );
    assert.equal(res.status, 201, JSON.stringify(res.body));
    return { leadId: res.body.leadId, callId: res.body.providerCallId };
  }

  /** The report the simulator delivered for a call, as sent. */
  function deliveredReport(callId: string): Record<string, any> {
    const d = s.h.vapi.deliveries.find((x) => x.callId === callId && x.type === 'end-of-call-report');
    assert.ok(d, 'report delivered');
    return JSON.parse(d.body).message;
  }

  return { setup: s as Readonly<typeof s>, submit, deliveredReport };
}

// The voice channel end to end: a lead is POSTed, the Vapi simulator places the call and plays it
// against our server URL over HTTP (status updates, the persona's tool calls answered by the real
// agent tools against the Cal.com simulator, the end-of-call-report), and GET shows the outcome.
// Here: Vapi's delivery quirks, what dispatch tells Vapi, the integration log, and the workspace
// variants (HMAC, appendTools). Where each scripted call ends the lead: voice-call-outcomes.test.ts.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { bookingTranscript, HMAC_SECRET, setUpVoiceLeads } from '../helpers/voice-lead-setup.ts';
import { hmacPlanWithDefaults, signVapiHmac } from '../../src/voice/vapi/vapi-hmac.ts';
import { getLead } from '../helpers/http.ts';
import { deliver, eventTypes, VAPI, voiceWorkspace } from '../helpers/voice-harness.ts';

const { setup: env, submit, deliveredReport } = setUpVoiceLeads();

describe('Vapi delivery quirks', () => {
  /** Everything GET shows, plus the session's bookkeeping, for comparing two plays of one script. */
  async function finalState(leadId: string, callId: string) {
    const got = (await getLead(env.h.app.http, env.ws.apiKey, leadId)).body;
    const { providerCallId: _id, recordingUrl, ...call } = got.voiceCall;
    return {
      status: got.lead.status,
      booked: got.lead.bookingUid !== null,
      call: { ...call, recordingUrl: recordingUrl?.replace(callId, 'ID') },
    };
  }

  test(
    'the report before the last status update, every delivery ' + 'twice: applied once, the same final state',
    async () => {
      const normal = await submit();
      await env.h.vapi.play(normal.callId, 'hangs-up');
      const quirky = await submit();
      const played = await env.h.vapi.play(quirky.callId, 'hangs-up', { reportFirst: true, repeatDeliveries: true });
      assert.deepEqual(
        played.deliveries.map((d) => `${d.type}:${JSON.parse(d.responseText!).duplicate ? 'dup' : 'ok'}`),
        [
          'status-update:ok',
          'status-update:dup',
          'status-update:ok',
          'status-update:dup',
          'end-of-call-report:ok',
          'end-of-call-report:dup',
          'status-update:ok',
          'status-update:dup',
        ],
      );
      const a = await finalState(normal.leadId, normal.callId);
      const b = await finalState(quirky.leadId, quirky.callId);
      // Same script, same simulated timings: only the ids differ.
      assert.deepEqual(b, a);
      assert.equal(b.call.status, 'ended');
      assert.deepEqual(
        (await eventTypes(env.h, quirky.leadId)).filter((t) => t.startsWith('call.')),
        ['call.dispatched', 'call.started', 'call.ended'],
      );
    },
  );

  test('legacy report fields only, tool arguments as objects: the same booking and call record', async () => {
    const { leadId, callId } = await submit();
    await env.h.vapi.play(callId, 'books', { report: 'legacy', argumentsAs: 'object' });
    const got = (await getLead(env.h.app.http, env.ws.apiKey, leadId)).body;
    assert.equal(got.lead.status, 'booked');
    const report = deliveredReport(callId);
    assert.deepEqual(report.artifact, {}, 'nothing in artifact: the legacy mirrors are the only source');
    const time = new Intl.DateTimeFormat('en-GB', {
      timeZone: 'Europe/Berlin',
      hour: '2-digit',
      minute: '2-digit',
    }).format(new Date(got.lead.bookingStart));
    assert.equal(got.voiceCall.transcript, bookingTranscript(time));
    assert.equal(got.voiceCall.summary, report.summary);
    assert.equal(got.voiceCall.recordingUrl, report.recordingUrl);
    assert.equal(got.voiceCall.durationSeconds, Math.round(report.durationSeconds));
    assert.equal(got.voiceCall.endedReason, 'assistant-ended-call');
  });

  test('spec fields only: the duration comes from startedAt and endedAt', async () => {
    const { leadId, callId } = await submit();
    await env.h.vapi.play(callId, 'hangs-up', { report: 'spec' });
    const report = deliveredReport(callId);
    assert.equal(report.durationSeconds, undefined);
    const got = (await getLead(env.h.app.http, env.ws.apiKey, leadId)).body;
    assert.equal(
      got.voiceCall.durationSeconds,
      Math.round((Date.parse(report.endedAt) - Date.parse(report.startedAt)) / 1000),
    );
    assert.equal(got.voiceCall.summary, report.analysis.summary);
  });

  test(
    'Vapi rings before our submission has recorded the call: ' + 'the submission still succeeds, recorded once',
    async () => {
      env.h.vapi.setAutoPlay({ persona: 'books', ringBeforeAnswer: true });
      try {
        const { leadId, callId } = await submit();
        await env.h.vapi.settled();
        const got = (await getLead(env.h.app.http, env.ws.apiKey, leadId)).body;
        assert.equal(got.lead.status, 'booked');
        assert.equal(got.voiceCall.providerCallId, callId);
        const { rows } = await env.h.app.db.pool.query(
          'SELECT count(*)::int AS n FROM call_sessions WHERE lead_id = $1',
          [leadId],
        );
        assert.equal(rows[0].n, 1);
        const types = await eventTypes(env.h, leadId);
        assert.ok(types.includes('call.reconciled') && !types.includes('call.dispatched'), types.join(', '));
        assert.ok(!env.h.app.logs.some((l) => l.includes('call placed but not recorded')));
      } finally {
        env.h.vapi.setAutoPlay(null);
      }
    },
  );
});

describe('what dispatch tells Vapi, and the integration log', () => {
  test(
    'server URL with X-Vapi-Secret, our three message types, the ' +
      'seven tools at the tools URL, labelled form answers',
    async () => {
      const { leadId, callId } = await submit({
        formResponses: { q_bill: '120', q_owner: 'Yes', q_gone: 'kept\nas sent' },
        metadata: { source: 'ads' },
      });
      const body = env.h.vapi.calls.find((c) => c.call.id === callId)!.requestBody as any;
      const overrides = body.assistantOverrides;
      const auth = { 'X-Vapi-Secret': env.ws.secret };
      assert.deepEqual(overrides.server, {
        url: `${env.h.baseUrl}/api/vapi/${env.ws.slug}/events`,
        timeoutSeconds: 20,
        headers: auth,
      });
      assert.deepEqual(overrides.serverMessages, ['status-update', 'end-of-call-report', 'tool-calls']);
      const tools = overrides['tools:append'];
      assert.deepEqual(
        tools.map((t: any) => t.function.name),
        [
          'updateLeadProfile',
          'listSlots',
          'bookConsult',
          'markUnqualified',
          'optOut',
          'escalateToHuman',
          'scheduleCallback',
          'endConversation',
        ],
      );
      for (const t of tools)
        assert.deepEqual(t.server, {
          url: `${env.h.baseUrl}/api/vapi/${env.ws.slug}/tools`,
          timeoutSeconds: 20,
          headers: auth,
        });
      assert.deepEqual(overrides.metadata, { leadId, workspaceId: env.ws.workspaceId });
      assert.deepEqual(overrides.variableValues, {
        leadId,
        leadName: 'Ada Lovelace',
        leadFirstName: 'Ada',
        leadEmail: 'ada@example.com',
        leadGoal: '',
        leadMetadata: '- source: ads',
        // Form order with the workspace's labels; an id the form does not have comes last, quoted after our label.
        formResponses:
          'Do you own the property?: Yes\nMonthly electricity bill (EUR): 120\nQuestion id "q_gone": kept as sent',
      });
    },
  );

  test('every provider request and server message is logged for the workspace, secrets redacted', async () => {
    const { leadId, callId } = await submit();
    await env.h.vapi.play(callId, 'books');
    const { rows } = await env.h.app.db.pool.query(
      `SELECT direction, kind, http_status, outcome, payload::text AS payload
        FROM integration_events WHERE workspace_id = $1 AND lead_id = $2 ORDER BY id`,
      [env.ws.workspaceId, leadId],
    );
    assert.deepEqual(
      rows.map((r) => `${r.direction} ${r.kind} ${r.http_status} ${r.outcome}`),
      [
        'out POST /call 201 accepted',
        'in status-update 200 applied',
        'in status-update 200 applied',
        'in tool-calls 200 applied',
        'in tool-calls 200 applied',
        'in tool-calls 200 applied',
        'in tool-calls 200 applied',
        'in status-update 200 applied',
        'in end-of-call-report 200 applied',
      ],
    );
    const all = rows.map((r) => r.payload).join('\n');
    assert.ok(!all.includes(env.ws.secret), 'the server secret is redacted');
    assert.match(all, /"X-Vapi-Secret": "\[redacted\]"/);
    const toolAnswer = JSON.parse(rows[3].payload);
    assert.equal(toolAnswer.endpoint, 'tools');
    assert.equal(toolAnswer.response.results[0].name, 'updateLeadProfile');
    const { rows: keyRows } = await env.h.app.db.pool.query(
      `SELECT count(*)::int AS n FROM integration_events WHERE strpos(payload::text, $1) > 0`,
      [VAPI.apiKey],
    );
    assert.equal(keyRows[0].n, 0, 'the Vapi API key is never stored');
  });
});

describe('workspace variants', () => {
  test(
    'HMAC credential plan: Vapi gets the credential id instead of a ' +
      'header, signs every message, and a bare secret is refused',
    async () => {
      const hmacWs = await voiceWorkspace(env.h, { hmac: { credentialId: 'cred-hmac-1', secretKey: HMAC_SECRET } });
      const { leadId, callId } = await submit({}, hmacWs.apiKey);
      const overrides = (env.h.vapi.calls.find((c) => c.call.id === callId)!.requestBody as any).assistantOverrides;
      assert.deepEqual(overrides.server, {
        url: `${env.h.baseUrl}/api/vapi/${hmacWs.slug}/events`,
        timeoutSeconds: 20,
        credentialId: 'cred-hmac-1',
      });
      assert.ok(
        overrides['tools:append'].every((t: any) => t.server.credentialId === 'cred-hmac-1' && !t.server.headers),
      );
      const played = await env.h.vapi.play(callId, 'books');
      assert.ok(played.deliveries.every((d) => d.status === 200));
      const got = (await getLead(env.h.app.http, hmacWs.apiKey, leadId)).body;
      assert.equal(got.lead.status, 'booked');
      assert.equal(got.voiceCall.status, 'ended');
      const call = env.h.vapi.calls.find((c) => c.call.id === callId)!.call;
      const forged = await deliver(
        env.h,
        hmacWs.slug,
        { message: { type: 'status-update', status: 'ringing', call } },
        { 'x-vapi-secret': hmacWs.secret },
      );
      assert.equal(forged.status, 401);
    },
  );

  test('HMAC: a timestamp more than the tolerance (300 s) away is refused, in the past and in the future', async () => {
    const hmacWs = await voiceWorkspace(env.h, { hmac: { credentialId: 'cred-hmac-1', secretKey: HMAC_SECRET } });
    const { callId } = await submit({}, hmacWs.apiKey);
    const call = env.h.vapi.calls.find((c) => c.call.id === callId)!.call;
    const plan = hmacPlanWithDefaults({ secretKey: HMAC_SECRET });
    const signedAt = (offsetSeconds: number) => {
      const body = JSON.stringify({ message: { type: 'status-update', status: 'ringing', call } });
      const ts = String(Math.floor(env.h.clock.read().getTime() / 1000) + offsetSeconds);
      return deliver(env.h, hmacWs.slug, body, { 'x-signature': signVapiHmac(plan, body, ts), 'x-timestamp': ts });
    };
    assert.equal((await signedAt(301)).status, 401, 'from the future');
    assert.equal((await signedAt(-301)).status, 401, 'from the past');
    assert.equal((await signedAt(290)).status, 200);
    assert.equal((await signedAt(-290)).status, 200);
  });

  test(
    'appendTools false: no tools are added, and the ' + "assistant's own tools are answered at the events URL",
    async () => {
      const own = await voiceWorkspace(env.h, { appendTools: false });
      const { leadId, callId } = await submit({}, own.apiKey);
      const overrides = (env.h.vapi.calls.find((c) => c.call.id === callId)!.requestBody as any).assistantOverrides;
      assert.equal(overrides['tools:append'], undefined);
      const played = await env.h.vapi.play(callId, 'not-a-fit');
      assert.ok(
        played.deliveries
          .filter((d) => d.type === 'tool-calls')
          .every((d) => d.url.endsWith('/events') && d.status === 200),
      );
      assert.equal((await getLead(env.h.app.http, own.apiKey, leadId)).body.lead.status, 'unqualified');
    },
  );
});

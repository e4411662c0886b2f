// Vapi's server messages delivered one by one (crafted in the simulator's exact shapes): who may
// deliver, and what a repeat, a reordering or an unknown call does. The crash window's reconciliation
// is in test/api/voice-crash-window.test.ts, the tool calls' error paths in
// test/api/voice-tool-calls.test.ts; the full call, played by the simulator, in test/api/voice-call-outcomes.test.ts.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import {
  endOfCallReportMessage,
  statusUpdateMessage,
  toolCallsMessage,
  type VapiCall,
} from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { NOT_LINKED } from '../../src/voice/vapi/vapi-tool-calls.ts';
import { getLead } from '../helpers/http.ts';
import { deliver, eventTypes, leadOf, session, voiceWorkspace } from '../helpers/voice-harness.ts';
import { voiceWorkspaceSetup } from '../helpers/voice-workspace-setup.ts';

const v = voiceWorkspaceSetup();
const { secret, at, dispatched } = v;

/** Everything a rejected delivery must leave untouched. */
async function footprint(leadId: string, callId: string) {
  const { rows } = await v.h.app.db.pool.query(
    `SELECT (SELECT count(*)::int FROM webhook_receipts WHERE provider = 'vapi') AS receipts,
            (SELECT count(*)::int FROM integration_events WHERE direction = 'in') AS logged,
            (SELECT count(*)::int FROM lead_events WHERE lead_id = $1) AS events,
            (SELECT count(*)::int FROM voice_tool_calls) AS tool_calls`,
    [leadId],
  );
  return { ...rows[0], lead: await leadOf(v.h, leadId), session: await session(v.h, callId) };
}

const rejected = { ok: false, error: 'Invalid webhook signature.' };

describe('who may deliver', () => {
  test("a missing, wrong or other workspace's secret is 401 and changes nothing", async () => {
    const { leadId, call } = await dispatched();
    const other = await voiceWorkspace(v.h);
    const before = await footprint(leadId, call.id);
    const messages = [
      statusUpdateMessage(call, 'ended', at(), 'customer-ended-call'),
      endOfCallReportMessage(call, at(), {
        endedReason: 'customer-ended-call',
        startedAt: null,
        endedAt: new Date(at()).toISOString(),
        messages: [],
        summary: 'x',
        recordingUrl: null,
        cost: 0,
      }),
      toolCallsMessage(
        call,
        at(),
        [{ id: 'call_auth_1', name: 'markUnqualified', args: { reason: 'forged' } }],
        'string',
      ),
    ];
    const headerSets: Array<Record<string, string>> = [
      {},
      { 'x-vapi-secret': 'not-the-secret' },
      secret(other),
      { 'x-vapi-secret': '' },
      { authorization: 'Bearer not-the-secret' },
    ];
    for (const message of messages) {
      for (const headers of headerSets) {
        for (const endpoint of ['events', 'tools'] as const) {
          const res = await deliver(v.h, v.ws.slug, message, headers, endpoint);
          assert.equal(res.status, 401, JSON.stringify(headers));
          assert.deepEqual(res.body, rejected);
        }
      }
    }
    assert.deepEqual(await footprint(leadId, call.id), before);
    assert.ok(v.h.app.logs.some((l) => l.includes('vapi message rejected')));
    assert.ok(!v.h.app.logs.some((l) => l.includes(v.ws.secret)), 'the secret is never logged');
  });

  test("the secret as a Bearer token is accepted (Vapi's bearer credential plan)", async () => {
    const { call } = await dispatched();
    const res = await deliver(v.h, v.ws.slug, statusUpdateMessage(call, 'ringing', at()), {
      authorization: `Bearer ${v.ws.secret}`,
    });
    assert.deepEqual([res.status, res.body], [200, { ok: true }]);
  });

  test('a pinned voice.serverSecret replaces the derived one', async () => {
    const pinned = await voiceWorkspace(v.h, { serverSecret: 'pinned-secret-0123456789' });
    assert.equal(pinned.secret, 'pinned-secret-0123456789');
    const derived = (await voiceWorkspace(v.h)).secret;
    const body = statusUpdateMessage({ id: crypto.randomUUID() } as VapiCall, 'ringing', at());
    assert.equal((await deliver(v.h, pinned.slug, body, { 'x-vapi-secret': derived })).status, 401);
    assert.equal((await deliver(v.h, pinned.slug, body, { 'x-vapi-secret': 'pinned-secret-0123456789' })).status, 200);
  });

  test('unknown, malformed or non-voice workspaces are 404', async () => {
    const whatsapp = await v.h.app.createWorkspace('whatsapp');
    const bare = await v.h.app.createWorkspace('voice');
    for (const slug of ['no-such-workspace', 'Bad_Slug', whatsapp.slug, bare.slug]) {
      const res = await deliver(v.h, slug, { message: { type: 'status-update', status: 'ringing' } }, secret());
      assert.deepEqual([res.status, res.body], [404, { ok: false, error: 'Workspace not found.' }], slug);
    }
  });

  test('authenticated but not JSON, or not a server message: 400, and the body is logged for operators', async () => {
    const broken = await deliver(v.h, v.ws.slug, '{"message":', secret());
    assert.deepEqual([broken.status, broken.body], [400, { ok: false, error: 'Request body must be valid JSON.' }]);
    const shapeless = await deliver(v.h, v.ws.slug, { hello: 'vapi' }, secret());
    assert.equal(shapeless.status, 400);
    assert.equal(shapeless.body.error, 'Validation failed.');
    assert.deepEqual(
      shapeless.body.issues.map((i: { path: string[] }) => i.path),
      [['message']],
    );
    const { rows } = await v.h.app.db.pool.query(
      `SELECT http_status, outcome FROM integration_events WHERE workspace_id = $1 AND kind = 'invalid'`,
      [v.ws.workspaceId],
    );
    assert.deepEqual(rows, [
      { http_status: 400, outcome: 'invalid' },
      { http_status: 400, outcome: 'invalid' },
    ]);
  });

  test('a body over 8 MiB is 413', async () => {
    const res = await deliver(v.h, v.ws.slug, 'x'.repeat(8 * 1024 * 1024 + 1), secret());
    assert.deepEqual(
      [res.status, res.body],
      [413, { ok: false, error: 'Request body is too large.', message: 'The request body must be at most 8 MiB.' }],
    );
  });
});

describe('repeats, reordering and unknown calls', () => {
  test('a repeated status update is answered as a duplicate and applied once', async () => {
    const { leadId, call } = await dispatched();
    call.startedAt = new Date(at() + 5_000).toISOString();
    const inProgress = statusUpdateMessage(call, 'in-progress', at() + 5_000);
    assert.deepEqual((await deliver(v.h, v.ws.slug, inProgress, secret())).body, { ok: true });
    assert.deepEqual((await deliver(v.h, v.ws.slug, inProgress, secret())).body, { ok: true, duplicate: true });
    assert.deepEqual(
      (await eventTypes(v.h, leadId)).filter((t) => t === 'call.started'),
      ['call.started'],
    );
    assert.equal((await session(v.h, call.id))!.status, 'in-progress');
  });

  test('every order of the last messages gives one final state', async () => {
    const start = at() + 6_000;
    const end = start + 42_400;
    const orders = [
      ['ringing', 'in-progress', 'ended', 'report'],
      ['report', 'ended', 'in-progress', 'ringing'],
      ['in-progress', 'report', 'ringing', 'ended'],
      ['ended', 'ringing', 'report', 'in-progress'],
    ];
    const finals: unknown[] = [];
    for (const order of orders) {
      const { leadId, call } = await dispatched();
      const messages: Record<string, Record<string, unknown>> = {
        ringing: statusUpdateMessage(call, 'ringing', at()),
        'in-progress': statusUpdateMessage(call, 'in-progress', start),
        // Sent a moment after the end; the report's endedAt is the authoritative one.
        ended: statusUpdateMessage(call, 'ended', end + 900, 'customer-ended-call'),
        // A report without startedAt or a duration: the duration needs the status update's start.
        report: endOfCallReportMessage(
          call,
          end + 2_000,
          {
            endedReason: 'customer-ended-call',
            startedAt: null,
            endedAt: new Date(end).toISOString(),
            messages: [{ role: 'bot', message: 'Hello?', time: start, secondsFromStart: 0 }],
            summary: 'Short call.',
            recordingUrl: 'https://storage.vapi.ai/x-mono.wav',
            cost: 0.01,
          },
          'spec',
        ),
      };
      for (const name of order) assert.equal((await deliver(v.h, v.ws.slug, messages[name], secret())).status, 200);
      const got = (await getLead(v.h.app.http, v.ws.apiKey, leadId)).body;
      const { providerCallId: _id, ...voiceCall } = got.voiceCall;
      finals.push({ status: got.lead.status, voiceCall });
    }
    // Picked up, then ended with nothing decided: a person follows up (call-end-plan.ts), whatever the order.
    assert.deepEqual(finals[0], {
      status: 'needs_human',
      voiceCall: {
        status: 'ended',
        startedAt: new Date(start).toISOString(),
        endedAt: new Date(end).toISOString(),
        durationSeconds: 42,
        summary: 'Short call.',
        transcript: 'Assistant: Hello?',
        recordingUrl: 'https://storage.vapi.ai/x-mono.wav',
        endedReason: 'customer-ended-call',
      },
    });
    for (const f of finals.slice(1)) assert.deepEqual(f, finals[0]);
  });

  test('messages for an unknown call are answered 200, kept in the integration log, and change no lead', async () => {
    const { leadId, call: known } = await dispatched();
    const otherWs = await voiceWorkspace(v.h);
    const before = await leadOf(v.h, leadId);
    const strangers: VapiCall[] = [
      { ...known, id: crypto.randomUUID(), assistantOverrides: {} }, // no metadata at all
      { ...known, id: crypto.randomUUID() }, // names our lead, which already has its call
      {
        ...known,
        id: crypto.randomUUID(),
        assistantOverrides: { metadata: { leadId, workspaceId: otherWs.workspaceId } },
      },
    ];
    for (const call of strangers) {
      const status = await deliver(
        v.h,
        v.ws.slug,
        statusUpdateMessage(call, 'ended', at(), 'customer-ended-call'),
        secret(),
      );
      assert.deepEqual([status.status, status.body], [200, { ok: true, ignored: 'unknown call' }]);
      const tools = await deliver(
        v.h,
        v.ws.slug,
        toolCallsMessage(
          call,
          at(),
          [{ id: `call_${call.id}`, name: 'markUnqualified', args: { reason: 'x' } }],
          'string',
        ),
        secret(),
        'tools',
      );
      assert.deepEqual(tools.body, {
        results: [{ toolCallId: `call_${call.id}`, name: 'markUnqualified', result: NOT_LINKED }],
      });
    }
    assert.deepEqual(await leadOf(v.h, leadId), before);
    const { rows } = await v.h.app.db.pool.query(
      `SELECT count(*)::int AS n FROM integration_events
        WHERE workspace_id = $1 AND outcome = 'unknown-call' AND lead_id IS NULL`,
      [v.ws.workspaceId],
    );
    assert.equal(rows[0].n, 6);
    const sessions = await v.h.app.db.pool.query(
      'SELECT count(*)::int AS n FROM call_sessions WHERE provider_call_id = ANY($1)',
      [strangers.map((c) => c.id)],
    );
    assert.equal(sessions.rows[0].n, 0);
  });

  test('other message types and messages without a call are acknowledged and ignored', async () => {
    const hang = await deliver(v.h, v.ws.slug, { message: { type: 'hang', timestamp: at() } }, secret());
    assert.deepEqual(hang.body, { ok: true, ignored: 'unsupported message' });
    const noCall = await deliver(v.h, v.ws.slug, { message: { type: 'status-update', status: 'ringing' } }, secret());
    assert.deepEqual(noCall.body, { ok: true, ignored: 'no call id' });
  });
});

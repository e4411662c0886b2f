// The crash window: Vapi placed the call but the service never recorded it. Vapi's server messages
// (crafted in the simulator's exact shapes) name the call; the first one reconciles it, also when
// several arrive at once.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { VapiClient } from '../../src/voice/vapi/vapi-client.ts';
import { statusUpdateMessage, toolCallsMessage, type VapiCall } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { vapiCallOptions } from '../../src/voice/voice-channel.ts';
import { insertLead } from '../helpers/agent-harness.ts';
import { getLead } from '../helpers/http.ts';
import { deliver, eventTypes, leadOf, VAPI } from '../helpers/voice-harness.ts';
import { voiceWorkspaceSetup } from '../helpers/voice-workspace-setup.ts';

const v = voiceWorkspaceSetup();
const { secret, at } = v;

describe('the crash window: Vapi placed the call, we never recorded it', () => {
  test(
    "the lead stays new until Vapi's first message names it; then " +
      'the call becomes its session and runs to the end',
    async () => {
      // What a crash leaves: the reserved lead (new, no session) and a call Vapi accepted for it.
      const workspace = (await v.h.app.workspaces.findBySlug(v.ws.slug))!;
      const leadId = await insertLead(v.h.app.db.pool, v.ws.workspaceId, {
        status: 'new',
        name: 'Grace Hopper',
        email: 'grace@example.com',
      });
      const client = new VapiClient({ baseUrl: v.h.vapi.url, timeoutMs: 2000 });
      const placed = await client.placeCall({
        ...VAPI,
        customer: { number: '+4930123456', name: 'Grace Hopper' },
        variableValues: { leadName: 'Grace Hopper', leadFirstName: 'Grace', leadEmail: 'grace@example.com' },
        metadata: { leadId, workspaceId: v.ws.workspaceId },
        ...vapiCallOptions(v.h.baseUrl, workspace, VAPI),
      });
      assert.ok(placed.ok);
      assert.equal((await leadOf(v.h, leadId)).status, 'new');

      await v.h.vapi.play(placed.providerCallId, 'books');
      const got = (await getLead(v.h.app.http, v.ws.apiKey, leadId)).body;
      assert.equal(got.lead.status, 'booked');
      assert.equal(got.voiceCall.providerCallId, placed.providerCallId);
      assert.equal(got.voiceCall.status, 'ended');
      assert.match(got.voiceCall.transcript, /^Assistant: Hi Grace/);
      const types = await eventTypes(v.h, leadId);
      assert.deepEqual(types.slice(0, 2), ['lead.created', 'call.reconciled']);
      assert.ok(types.includes('booking.created') && types.includes('call.ended'));
      const { rows } = await v.h.app.db.pool.query(
        `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'call.reconciled'`,
        [leadId],
      );
      assert.deepEqual(rows[0].data, {
        providerCallId: placed.providerCallId,
        from: 'new',
        to: 'in_conversation',
        actor: 'system',
      });
    },
  );
});

describe('the crash window under concurrency', () => {
  test('several first messages at once: one session, one reconciliation, the furthest status', async () => {
    const leadId = await insertLead(v.h.app.db.pool, v.ws.workspaceId, { status: 'new' });
    const call = {
      id: crypto.randomUUID(),
      orgId: 'o',
      createdAt: '',
      updatedAt: '',
      type: 'outboundPhoneCall',
      status: 'queued',
      cost: 0,
      assistantOverrides: { metadata: { leadId, workspaceId: v.ws.workspaceId } },
    } as VapiCall;
    const statuses = ['queued', 'ringing', 'in-progress', 'ringing', 'queued', 'in-progress'];
    const answers = await Promise.all([
      ...statuses.map((st, i) => deliver(v.h, v.ws.slug, statusUpdateMessage(call, st, at() + i), secret())),
      deliver(
        v.h,
        v.ws.slug,
        toolCallsMessage(
          call,
          at(),
          [{ id: `call_race_${call.id}`, name: 'updateLeadProfile', args: { notes: 'Raced.' } }],
          'string',
        ),
        secret(),
        'tools',
      ),
    ]);
    assert.ok(
      answers.every((a) => a.status === 200),
      JSON.stringify(answers.map((a) => a.body)),
    );
    const { rows } = await v.h.app.db.pool.query('SELECT status FROM call_sessions WHERE lead_id = $1', [leadId]);
    assert.deepEqual(rows, [{ status: 'in-progress' }]);
    const types = await eventTypes(v.h, leadId);
    assert.deepEqual(
      types.filter((t) => t === 'call.reconciled'),
      ['call.reconciled'],
    );
    assert.ok(types.includes('lead.profile_updated'), 'the tool call ran for the reconciled lead');
    assert.equal((await leadOf(v.h, leadId)).status, 'in_conversation');
  });
});

// The voice channel's tool calls within the agent's remit, through the Vapi tool-call route: the
// lead is booked only at a time listSlots offered in this call, for itself or at an address it
// said in this call; a tool call without an id is answered with an error Vapi can show.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MISSING_TOOL_CALL_ID } from '../../src/voice/vapi/vapi-tool-calls.ts';
import { toolCallsMessage, type ArtifactMessage, type VapiCall } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { postLead, validLead } from '../helpers/http.ts';
import {
  deliver,
  leadOf,
  startVoiceHarness,
  voiceWorkspace,
  type VoiceHarness,
  type VoiceWorkspace,
} from '../helpers/voice-harness.ts';

let h: VoiceHarness;
let ws: VoiceWorkspace;

before(async () => {
  h = await startVoiceHarness();
  ws = await voiceWorkspace(h);
});
after(() => h.close());

const secret = () => ({ 'x-vapi-secret': ws.secret });
let n = 0;

async function dispatched(): Promise<{ leadId: string; call: VapiCall }> {
  const res = await postLead(h.app.http, ws.apiKey, validLead({ email: 'ada@example.com' }));
  assert.equal(res.status, 201);
  return { leadId: res.body.leadId, call: h.vapi.calls.find((c) => c.call.id === res.body.providerCallId)!.call };
}

const said = (...lines: string[]): ArtifactMessage[] =>
  lines.map((message, i) => ({ role: i % 2 === 0 ? 'bot' : 'user', message, time: h.clock.now, secondsFromStart: i }));

async function tool(
  call: VapiCall,
  name: string,
  args: Record<string, unknown>,
  messages: ArtifactMessage[] = [],
): Promise<string> {
  const body = toolCallsMessage(call, h.clock.now, [{ id: `call_remit_${++n}`, name, args }], 'string', [], messages);
  const res = await deliver(h, ws.slug, body, secret(), 'tools');
  assert.equal(res.status, 200);
  return res.body.results[0].result as string;
}

const bookingPosts = () => h.cal.requests.filter((r) => r.method === 'POST' && r.path === '/v2/bookings').length;

describe('voice bookings', () => {
  test(
    "a third party's address is refused; the address the lead " + 'said in this call is booked and recorded',
    async () => {
      const { leadId, call } = await dispatched();
      const start = /\(start: ([^)]+)\)/.exec(await tool(call, 'listSlots', {}))![1]!;
      const posts = bookingPosts();
      assert.match(
        await tool(call, 'bookConsult', { start, email: 'attacker@evil.example' }),
        /^Nothing was booked: the consultation is booked only for the lead/,
      );
      assert.equal(bookingPosts(), posts);
      const conversation = said(
        'Which address should the confirmation go to?',
        'Send it to ada dot work at example dot org please.',
      );
      assert.match(
        await tool(call, 'bookConsult', { start, email: 'ada.work@example.org' }, conversation),
        /^Booked for/,
      );
      const booking = [...h.cal.bookings.values()].find((b) => b.metadata.leadId === leadId)!;
      assert.equal(booking.attendee.email, 'ada.work@example.org');
      const { rows } = await h.app.db.pool.query(`SELECT email FROM leads WHERE id = $1`, [leadId]);
      assert.equal(rows[0].email, 'ada.work@example.org');
    },
  );

  test('a start never offered in this call is refused with "call listSlots"', async () => {
    const { leadId, call } = await dispatched();
    const posts = bookingPosts();
    assert.match(
      await tool(call, 'bookConsult', { start: '2050-09-05T09:00:00.000+02:00' }),
      /^Nothing was booked: that start was not among the times listSlots offered/,
    );
    assert.equal(bookingPosts(), posts);
    assert.equal((await leadOf(h, leadId)).status, 'in_conversation');
  });
});

describe('a tool call without an id', () => {
  test('is answered with an error Vapi shows, and not run', async () => {
    const { leadId, call } = await dispatched();
    const res = await deliver(
      h,
      ws.slug,
      {
        message: {
          type: 'tool-calls',
          call,
          toolCallList: [{ type: 'function', function: { name: 'escalateToHuman', arguments: '{"reason":"x"}' } }],
        },
      },
      secret(),
      'tools',
    );
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, {
      results: [{ toolCallId: '', name: 'escalateToHuman', error: MISSING_TOOL_CALL_ID }],
      error: MISSING_TOOL_CALL_ID,
    });
    assert.equal((await leadOf(h, leadId)).status, 'in_conversation');
  });
});

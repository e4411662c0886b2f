// Vapi's tool-calls messages delivered one by one (crafted in the simulator's exact shapes): the
// error paths (unknown tool, bad arguments), both item shapes, repeats, Cal.com down, a tool
// still running at the deadline (and the lead handed to a person when it ends without closing it),
// and tool-call ids that are not unique (another call's, or this call's for another tool).

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { VapiServerService } from '../../src/voice/voice-server-service.ts';
import { toolCallsMessage, type VapiCall } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { IN_PROGRESS, STILL_RUNNING, TOOL_CALL_ID_REUSED } from '../../src/voice/vapi/vapi-tool-calls.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { deliver, eventTypes, leadOf } from '../helpers/voice-harness.ts';
import { voiceWorkspaceSetup } from '../helpers/voice-workspace-setup.ts';

const v = voiceWorkspaceSetup();
const { secret, at, dispatched } = v;

describe('tool calls', () => {
  async function toolCall(
    call: VapiCall,
    name: string,
    args: unknown,
    id = `call_${crypto.randomBytes(6).toString('hex')}`,
  ) {
    const message = toolCallsMessage(call, at(), [{ id, name, args: {} }], 'string');
    (message.message as any).toolCallList[0].function.arguments = args;
    const res = await deliver(v.h, v.ws.slug, message, secret(), 'tools');
    assert.equal(res.status, 200);
    assert.equal(res.body.results.length, 1);
    assert.equal(res.body.results[0].toolCallId, id);
    return res.body.results[0].result as string;
  }

  test('an unknown tool, arguments that are not JSON or are wrong: a result saying so, nothing changed', async () => {
    const { leadId, call } = await dispatched();
    assert.match(
      await toolCall(call, 'deleteEverything', '{}'),
      /^There is no tool called "deleteEverything"\. The tools are: updateLeadProfile, listSlots, bookConsult/,
    );
    assert.equal(
      await toolCall(call, 'markUnqualified', '{"reason":'),
      'Invalid arguments for markUnqualified: the arguments are not valid JSON. Nothing was done.',
    );
    assert.match(await toolCall(call, 'markUnqualified', '{}'), /^Invalid arguments for markUnqualified: reason: /);
    assert.match(await toolCall(call, 'bookConsult', { start: 42 }), /^Invalid arguments for bookConsult: start: /);
    assert.equal((await leadOf(v.h, leadId)).status, 'in_conversation');
  });

  test('the legacy item shape {id, name, arguments} and a batch of two, answered in order', async () => {
    const { leadId, call } = await dispatched();
    const res = await deliver(
      v.h,
      v.ws.slug,
      {
        message: {
          type: 'tool-calls',
          call,
          toolCallList: [
            { id: 'call_legacy_1', name: 'updateLeadProfile', arguments: { notes: 'Prefers mornings.' } },
            { id: 'call_legacy_2', name: 'escalateToHuman', arguments: { reason: 'Wants a callback from the owner.' } },
          ],
        },
      },
      secret(),
      'tools',
    );
    assert.deepEqual(
      res.body.results.map((r: any) => [r.toolCallId, r.name]),
      [
        ['call_legacy_1', 'updateLeadProfile'],
        ['call_legacy_2', 'escalateToHuman'],
      ],
    );
    assert.equal((await leadOf(v.h, leadId)).status, 'needs_human');
  });

  test('a repeated tool call gets the first answer and does not run again', async () => {
    const { leadId, call } = await dispatched();
    const first = await toolCall(call, 'markUnqualified', { reason: 'Tenant, not the owner.' }, 'call_repeat_1');
    const again = await toolCall(call, 'markUnqualified', { reason: 'Tenant, not the owner.' }, 'call_repeat_1');
    assert.equal(again, first);
    assert.deepEqual(
      (await eventTypes(v.h, leadId)).filter((t) => t === 'lead.unqualified'),
      ['lead.unqualified'],
    );
  });

  test("Cal.com down: the tool's answer tells the model what to do; the lead is unchanged", async () => {
    const { leadId, call } = await dispatched();
    v.h.cal.setFailure('down');
    try {
      assert.match(await toolCall(call, 'listSlots', { daysAhead: 3 }), /Try once more in a minute/);
    } finally {
      v.h.cal.setFailure('none');
    }
    assert.equal((await leadOf(v.h, leadId)).status, 'in_conversation');
  });

  /** A service whose tools pass a 100 ms deadline: the Cal.com client waits before its retry on a gate. */
  function slowService() {
    let open!: () => void;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const service = new VapiServerService({
      pool: v.h.app.db.pool,
      log: v.h.app.http.log as never,
      clock: v.h.clock.read,
      workspaces: v.h.app.workspaces,
      scheduling: new CalcomClient({ baseUrl: v.h.cal.url, sleep: () => gate }),
      toolDeadlineMs: 100,
    });
    const body = (call: VapiCall, id: string, name: string, args: Record<string, unknown>) =>
      Buffer.from(JSON.stringify(toolCallsMessage(call, at(), [{ id, name, args }], 'string')));
    return { service, open, body };
  }

  test(
    'a tool still running at the deadline is answered "still ' + 'working", finishes, and its result is kept',
    async () => {
      const { leadId, call } = await dispatched();
      const { service, open, body } = slowService();
      const message = body(call, 'call_slow_1', 'listSlots', { daysAhead: 2 });
      v.h.cal.setFailure('down', { times: 1 });
      const first = await service.receive(v.ws.slug, 'tools', message, secret());
      assert.deepEqual(first, { results: [{ toolCallId: 'call_slow_1', name: 'listSlots', result: STILL_RUNNING }] });
      const meanwhile = await service.receive(v.ws.slug, 'tools', message, secret());
      assert.equal((meanwhile.results as any)[0].result, IN_PROGRESS);
      open();
      await service.idle();
      const later = await service.receive(v.ws.slug, 'tools', message, secret());
      assert.match(
        (later.results as any)[0].result,
        /^Free consultation times in the next 2 days \(Europe\/Berlin\):\n- Monday, 5 September 2050/,
      );
      // The lead was told a colleague will confirm: a person now has it.
      assert.equal((await leadOf(v.h, leadId)).status, 'needs_human');
    },
  );

  describe('a booking that finishes after "still ' + 'working"', () => {
    // Books a time listSlots offered in this call, with Cal.com refusing the first `refusals` attempts.
    async function lateBooking(refusals: number) {
      const { leadId, call } = await dispatched();
      const start = /\d{4}-\d{2}-\d{2}T[\d:.]+[+-]\d{2}:\d{2}/.exec(
        await toolCall(call, 'listSlots', { daysAhead: 2 }),
      )![0];
      const { service, open, body } = slowService();
      v.h.cal.setFailure('rate-limited', { times: refusals });
      try {
        const first = await service.receive(
          v.ws.slug,
          'tools',
          body(call, 'call_late_book', 'bookConsult', { start }),
          secret(),
        );
        assert.equal((first.results as any)[0].result, STILL_RUNNING);
        open();
        await service.idle();
      } finally {
        v.h.cal.setFailure('none');
      }
      const { rows } = await v.h.app.db.pool.query(
        `SELECT data FROM lead_events WHERE lead_id = $1 AND type = 'conversation.escalated'`,
        [leadId],
      );
      return { lead: await leadOf(v.h, leadId), escalations: rows.map((r) => r.data) };
    }

    test("fails (Cal.com keeps refusing): the lead goes to a person, with the tool's result", async () => {
      const { lead, escalations } = await lateBooking(3);
      assert.equal(lead.status, 'needs_human');
      assert.equal(escalations.length, 1);
      assert.equal(escalations[0].reason, 'tool_finished_late');
      assert.equal(escalations[0].tool, 'bookConsult');
      assert.match(escalations[0].detail, /the lead was told a colleague will confirm/);
      assert.match(
        escalations[0].result,
        /^Could not book: the scheduling service is not answering right now. Nothing was booked./,
      );
    });

    test('succeeds: the lead stays booked and is not handed over', async () => {
      const { lead, escalations } = await lateBooking(1);
      assert.equal(lead.status, 'booked');
      assert.deepEqual(escalations, []);
    });
  });

  describe('tool-call ids are per call, and per tool', () => {
    // A custom LLM behind Vapi numbers its tool calls `call_1`, `call_2`, … in every call.
    async function dispatchedWith(email: string) {
      const res = await postLead(v.h.app.http, v.ws.apiKey, validLead({ email }));
      assert.equal(res.status, 201);
      const call = v.h.vapi.calls.find((c) => c.call.id === res.body.providerCallId)!.call;
      return { leadId: res.body.leadId as string, call };
    }
    async function send(call: VapiCall, id: string, name: string, args: Record<string, unknown>) {
      const res = await deliver(
        v.h,
        v.ws.slug,
        toolCallsMessage(call, at(), [{ id, name, args }], 'string'),
        secret(),
        'tools',
      );
      assert.equal(res.status, 200);
      assert.equal(res.body.results.length, 1);
      assert.equal(res.body.results[0].toolCallId, id);
      return res.body as { results: { result?: string; error?: string }[]; error?: string };
    }
    const firstStart = (slots: string) => /\(start: ([^)]+)\)/.exec(slots)![1]!;
    const bookingOf = (leadId: string) => [...v.h.cal.bookings.values()].find((b) => b.metadata.leadId === leadId);

    test("two calls' tool calls with the same id: each runs for its own lead, B never gets A's answer", async () => {
      const a = await dispatchedWith('a.first@example.com');
      const b = await dispatchedWith('b.second@example.com');
      const slotsA = (await send(a.call, 'call_1', 'listSlots', { daysAhead: 3 })).results[0]!.result!;
      const bookedA = (await send(a.call, 'call_2', 'bookConsult', { start: firstStart(slotsA) })).results[0]!.result!;
      assert.match(bookedA, /^Booked for .*The confirmation goes to a\.first@example\.com\./s);

      const slotsB = (await send(b.call, 'call_1', 'listSlots', { daysAhead: 3 })).results[0]!.result!;
      assert.match(slotsB, /\(start: /);
      const bookedB = (await send(b.call, 'call_2', 'bookConsult', { start: firstStart(slotsB) })).results[0]!.result!;
      assert.match(bookedB, /^Booked for .*The confirmation goes to b\.second@example\.com\./s);
      assert.ok(!bookedB.includes('a.first@example.com'), bookedB);
      assert.notEqual(bookedB, bookedA);

      // B's tool ran: B is booked, in Cal.com and in the lead, with a booking of its own.
      const [leadA, leadB] = [await leadOf(v.h, a.leadId), await leadOf(v.h, b.leadId)];
      assert.equal(leadB.status, 'booked');
      assert.equal(bookingOf(b.leadId)?.attendee.email, 'b.second@example.com');
      assert.equal(leadB.booking_uid, bookingOf(b.leadId)!.uid);
      assert.notEqual(leadB.booking_uid, leadA.booking_uid);
      assert.ok(bookedB.includes(leadB.booking_uid));

      // A repeat of either tool call gets its own call's stored answer, and does not book again.
      assert.equal(
        (await send(b.call, 'call_2', 'bookConsult', { start: firstStart(slotsB) })).results[0]!.result,
        bookedB,
      );
      assert.equal(
        (await send(a.call, 'call_2', 'bookConsult', { start: firstStart(slotsA) })).results[0]!.result,
        bookedA,
      );
      assert.deepEqual(
        (await eventTypes(v.h, b.leadId)).filter((t) => t === 'booking.created'),
        ['booking.created'],
      );
      const { rows } = await v.h.app.db.pool.query(
        `SELECT provider_call_id, name FROM voice_tool_calls WHERE workspace_id = $1 AND tool_call_id = 'call_2'
          AND provider_call_id = ANY($2) ORDER BY name`,
        [v.ws.workspaceId, [a.call.id, b.call.id]],
      );
      assert.equal(rows.length, 2);
    });

    test("an id this call used for another tool: an error, not the first tool's answer; nothing run", async () => {
      const { leadId, call } = await dispatchedWith('c.third@example.com');
      const slots = (await send(call, 'call_7', 'listSlots', { daysAhead: 3 })).results[0]!.result!;
      const posts = v.h.cal.requests.filter((r) => r.method === 'POST' && r.path === '/v2/bookings').length;
      const reused = await send(call, 'call_7', 'bookConsult', { start: firstStart(slots) });
      assert.deepEqual(reused.results[0], { toolCallId: 'call_7', name: 'bookConsult', error: TOOL_CALL_ID_REUSED });
      assert.equal(reused.error, TOOL_CALL_ID_REUSED);
      assert.equal(v.h.cal.requests.filter((r) => r.method === 'POST' && r.path === '/v2/bookings').length, posts);
      assert.equal((await leadOf(v.h, leadId)).status, 'in_conversation');
      // The first tool call's repeat still gets its own answer; a new id books.
      assert.equal((await send(call, 'call_7', 'listSlots', { daysAhead: 3 })).results[0]!.result, slots);
      assert.match(
        (await send(call, 'call_8', 'bookConsult', { start: firstStart(slots) })).results[0]!.result!,
        /^Booked for .*c\.third@example\.com/s,
      );
    });
  });
});

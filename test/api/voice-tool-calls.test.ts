// Vapi's tool-calls messages delivered one by one (crafted in the simulator's exact shapes): the
// error paths (unknown tool, bad arguments), both item shapes, repeats, Cal.com down, and a tool
// still running at the deadline.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { describe, test } from 'node:test';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import { VapiServerService } from '../../src/voice/voice-server-service.ts';
import { toolCallsMessage, type VapiCall } from '../../src/simulators/vapi/vapi-sim-messages.ts';
import { IN_PROGRESS, STILL_RUNNING } from '../../src/voice/vapi/vapi-tool-calls.ts';
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

  test(
    'a tool still running at the deadline is answered "still ' + 'working", finishes, and its result is kept',
    async () => {
      const { call } = await dispatched();
      // The Cal.com client waits before its retry on a gate this test opens.
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
      const body = Buffer.from(
        JSON.stringify(
          toolCallsMessage(call, at(), [{ id: 'call_slow_1', name: 'listSlots', args: { daysAhead: 2 } }], 'string'),
        ),
      );
      v.h.cal.setFailure('down', { times: 1 });
      const first = await service.receive(v.ws.slug, 'tools', body, secret());
      assert.deepEqual(first, { results: [{ toolCallId: 'call_slow_1', name: 'listSlots', result: STILL_RUNNING }] });
      const meanwhile = await service.receive(v.ws.slug, 'tools', body, secret());
      assert.equal((meanwhile.results as any)[0].result, IN_PROGRESS);
      open();
      await service.idle();
      const later = await service.receive(v.ws.slug, 'tools', body, secret());
      assert.match(
        (later.results as any)[0].result,
        /^Free consultation times in the next 2 days \(Europe\/Berlin\):\n- Monday, 5 September 2050/,
      );
    },
  );
});

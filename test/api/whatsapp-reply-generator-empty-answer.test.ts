// An answer with neither text nor a tool call (src/whatsapp/reply-generator.ts): the lead is not
// left waiting in silence. Unless the agent ended the conversation in the same turn, it goes to a
// person (`model_answer_unusable`, holding message), as docs/WHATSAPP.md's failure table says; a
// nudge the model leaves empty hands over too, and the hand-over ends the lead's contact plan.
import assert from 'node:assert/strict';
import { afterEach, describe, test } from 'node:test';
import type { ValidChatRequest } from '../../src/simulators/chat-model/chat-request-validation.ts';
import { scriptedReply } from '../../src/simulators/chat-model/scripted-policy.ts';
import { DEFAULT_HOLDING_MESSAGE } from '../../src/whatsapp/hand-over.ts';
import { HOUR, setUpFollowUps } from '../helpers/whatsapp-follow-up-setup.ts';

const f = setUpFollowUps();
afterEach(() => f.setup.h.chat.setPolicy(scriptedReply));

const escalations = async (leadId: string) =>
  (await f.events(leadId, ['conversation.escalated'])).map((e) => e.data.outcome);

describe('an empty answer', () => {
  for (const [name, content] of [
    ['empty', ''],
    ['whitespace only', ' \n\t '],
  ] as const) {
    test(`${name}, no tool call: the lead goes to a person with the holding message`, async () => {
      const ws = await f.workspace('twilio');
      const { leadId, phone } = await f.silentLead(ws);
      f.setup.h.chat.setPolicy(() => ({ content, finish_reason: 'stop' }));
      await f.setup.h.leadSays('twilio', ws.slug, phone, 'Hi, yes I am interested');
      await f.setup.h.settle();

      assert.equal((await f.lead(leadId)).status, 'needs_human');
      assert.deepEqual(await escalations(leadId), ['model_answer_unusable']);
      assert.deepEqual(
        f
          .sentTo(phone)
          .slice(1)
          .map((m) => m.text),
        [DEFAULT_HOLDING_MESSAGE],
      );
      assert.deepEqual((await f.turns(leadId)).at(-1), {
        kind: 'reply',
        state: 'sent',
        outcome: 'model_answer_unusable',
      });
    });
  }

  test('after endConversation in the same turn: silent, the lead stays with the agent', async () => {
    const ws = await f.workspace('twilio');
    const { leadId, phone } = await f.silentLead(ws);
    // The model ends the conversation, then has nothing to add.
    f.setup.h.chat.setPolicy((request: ValidChatRequest) =>
      request.messages.at(-1)?.role === 'tool'
        ? { content: '' }
        : {
            content: null,
            tool_calls: [{ id: 'call_end', type: 'function', function: { name: 'endConversation', arguments: '{}' } }],
          },
    );
    await f.setup.h.leadSays('twilio', ws.slug, phone, 'No thanks, bye');
    await f.setup.h.settle();

    assert.equal((await f.lead(leadId)).status, 'in_conversation');
    assert.deepEqual(await escalations(leadId), []);
    assert.equal(f.sentTo(phone).length, 1, 'only the template');
    assert.deepEqual((await f.turns(leadId)).at(-1), { kind: 'reply', state: 'silent', outcome: null });
  });

  test('an empty nudge hands the lead over, and the hand-over ends its plan', async () => {
    const ws = await f.workspace('twilio');
    const { leadId, phone } = await f.silentLead(ws);
    await f.setup.h.leadSays('twilio', ws.slug, phone, 'Hi, yes I am interested');
    await f.setup.h.settle();
    assert.equal((await f.pending(leadId))?.kind, 'nudge');
    const before = f.sentTo(phone).length;

    f.setup.h.chat.setPolicy(() => ({ content: '', finish_reason: 'stop' }));
    assert.deepEqual(await f.after(2 * HOUR + 5 * 60_000), ['attempted']);

    assert.equal((await f.lead(leadId)).status, 'needs_human');
    assert.deepEqual(await escalations(leadId), ['model_answer_unusable']);
    assert.equal(f.sentTo(phone).length, before, 'nothing sent for the nudge');
    assert.deepEqual((await f.turns(leadId)).at(-1), {
      kind: 'nudge',
      state: 'failed',
      outcome: 'model_answer_unusable',
    });
    const plan = await f.plan(leadId);
    assert.ok(plan.ended_at, 'the plan ended');
    assert.equal(plan.ended_reason, 'needs_human');
    assert.equal(await f.pending(leadId), null);
    const { rows } = await f.setup.h.app.db.pool.query(
      `SELECT count(*)::int AS n FROM whatsapp_messages
        WHERE lead_id = $1 AND direction = 'outbound' AND status = 'pending'`,
      [leadId],
    );
    assert.equal(rows[0].n, 0, 'no message left pending');
  });
});

// The chat-completions simulator speaks OpenAI's wire protocol: completions shaped as OpenAI shapes
// them, and OpenAI's error bodies for malformed requests and unknown routes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHAT_SIM_API_KEY, startChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { chatSimulatorSetup, NOW, stopRequest } from '../helpers/chat-simulator-setup.ts';

const chat = chatSimulatorSetup();

describe('the simulator speaks the wire protocol', () => {
  async function post(body: unknown, path = '/v1/chat/completions') {
    const res = await fetch(`${chat.sim.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${CHAT_SIM_API_KEY}`, 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }
  const err = (message: string, param: string | null = null, code: string | null = null) => ({
    error: { message, type: 'invalid_request_error', param, code },
  });

  it('a completion as OpenAI shapes it', async () => {
    const fixed = await startChatSimulator({ now: () => new Date(NOW) });
    try {
      const res = await fetch(`${fixed.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${fixed.apiKey}` },
        body: JSON.stringify(stopRequest),
      });
      assert.match(res.headers.get('x-request-id') ?? '', /^req_[0-9a-f]{32}$/);
      const body = (await res.json()) as Record<string, any>;
      assert.match(body.id, /^chatcmpl-[A-Za-z0-9_-]{20}$/);
      assert.deepEqual(
        [body.object, body.created, body.model, Object.keys(body.usage)],
        ['chat.completion', NOW / 1000, 'gpt-4o-mini', ['prompt_tokens', 'completion_tokens', 'total_tokens']],
      );
      const [choice] = body.choices;
      assert.deepEqual(
        [
          choice.index,
          choice.finish_reason,
          choice.logprobs,
          choice.message.role,
          choice.message.content,
          choice.message.refusal,
        ],
        [0, 'tool_calls', null, 'assistant', null, null],
      );
      assert.equal(body.usage.total_tokens, body.usage.prompt_tokens + body.usage.completion_tokens);
    } finally {
      await fixed.close();
    }
  });

  it("OpenAI's 400 bodies for malformed requests, 404 for unknown routes", async () => {
    const sys = { role: 'system', content: 'x' };
    const call = { id: 'call_1', type: 'function', function: { name: 'listSlots', arguments: '{}' } };
    const cases: Array<[unknown, unknown]> = [
      [
        '{"model":',
        err(
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't " +
            'using your HTTP library correctly. The OpenAI API expects a JSON payload, but what ' +
            'was sent was not valid JSON. If you have trouble figuring out how to fix this, please ' +
            'contact us through our help center at help.openai.com.)',
        ),
      ],
      [{ messages: [sys] }, err('you must provide a model parameter')],
      [{ model: 'm' }, err("Missing required parameter: 'messages'.", 'messages', 'missing_required_parameter')],
      [
        { model: 'm', messages: [] },
        err(
          "Invalid 'messages': empty array. Expected an array with minimum length 1, but got an empty array instead.",
          'messages',
          'empty_array',
        ),
      ],
      [
        { model: 'm', messages: [{ role: 'bot', content: 'x' }] },
        err(
          "Invalid value: 'bot'. Supported values are: 'system', " +
            "'assistant', 'user', 'function', 'tool', and 'developer'.",
          'messages[0].role',
          'invalid_value',
        ),
      ],
      [
        { model: 'm', messages: [{ role: 'user', content: 5 }] },
        err(
          "Invalid type for 'messages[0].content': expected one of a string " +
            'or array of objects, but got an integer instead.',
          'messages[0].content',
          'invalid_type',
        ),
      ],
      [
        {
          model: 'm',
          messages: [sys, { role: 'assistant', content: null, tool_calls: [call] }, { role: 'user', content: 'hi' }],
        },
        err(
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each " +
            "'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
          'messages.[1].role',
        ),
      ],
      [
        { model: 'm', messages: [sys], tool_choice: 'auto' },
        err(
          "Invalid value for 'tool_choice': 'tool_choice' is only allowed when 'tools' are specified.",
          'tool_choice',
        ),
      ],
      [
        { model: 'm', messages: [sys], tools: [{ type: 'function', function: { name: 'book consult' } }] },
        err(
          "Invalid 'tools[0].function.name': string does not match pattern. " +
            "Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
          'tools[0].function.name',
          'invalid_value',
        ),
      ],
      [{ model: 'm', messages: [sys], temprature: 1 }, err('Unrecognized request argument supplied: temprature')],
    ];
    for (const [body, expected] of cases)
      assert.deepEqual(await post(body), { status: 400, body: expected }, JSON.stringify(body));
    assert.deepEqual(await post({}, '/v1/completions'), {
      status: 404,
      body: err('Invalid URL (POST /v1/completions)'),
    });
    // A conversation with its tool calls answered is accepted; content parts are read as text.
    const ok = await post({
      model: 'm',
      messages: [
        sys,
        { role: 'user', content: [{ type: 'text', text: 'hi' }] },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: 'call_1', content: 'x' },
      ],
    });
    assert.equal(ok.status, 200);
  });
});

// The OpenAI-compatible chat client against the chat-completions simulator: answers, tool calls,
// malformed completions, context overflow, and fatal 4xx with the provider's message. Retries are
// in test/api/openai-chat-client-retries.test.ts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ChatRequest } from '../../src/agent/chat-model.ts';
import { CHAT_FAILURES, CHAT_SIM_API_KEY, startChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { OpenAIChatClient } from '../../src/agent/openai/openai-chat-client.ts';
import { chatSimulatorSetup, SYSTEM, greetRequest, stopRequest } from '../helpers/chat-simulator-setup.ts';

const chat = chatSimulatorSetup();
const { delays, client } = chat;

describe('answers', () => {
  it('a text answer; the request is the chat-completions wire format with the Bearer key', async () => {
    const result = await client().complete(greetRequest);
    assert.deepEqual(result, {
      ok: true,
      message: { content: 'Hi Ada, this is Mia from Sunny Roofs. Do you own the property? (Yes or No)' },
      finishReason: 'stop',
    });
    const [req] = chat.sim.requests;
    assert.deepEqual(
      [req?.method, req?.path, req?.headers.authorization, req?.headers['content-type']],
      ['POST', '/v1/chat/completions', `Bearer ${CHAT_SIM_API_KEY}`, 'application/json'],
    );
    assert.deepEqual(req?.body, {
      model: 'gpt-4o-mini',
      messages: greetRequest.messages,
      tools: greetRequest.tools,
      tool_choice: 'auto',
    });
  });

  it(
    'tool calls come back with their JSON arguments; without ' + 'tools, neither tools nor tool_choice is sent',
    async () => {
      const result = await client().complete(stopRequest);
      assert.ok(result.ok);
      assert.equal(result.message.content, null);
      const [call] = result.message.tool_calls ?? [];
      assert.match(call?.id ?? '', /^call_[0-9a-f]{24}$/);
      assert.deepEqual(
        [call?.type, call?.function.name, JSON.parse(call?.function.arguments ?? '')],
        ['function', 'optOut', { reason: 'The lead asked us to stop messaging them.' }],
      );

      const plain = await client().complete({ model: 'm', messages: [SYSTEM] });
      assert.ok(plain.ok);
      assert.deepEqual(Object.keys(chat.sim.requests[1]!.body as object), ['model', 'messages']);
    },
  );

  it(
    'servers that differ in details: arguments as an object, no ' +
      'tool-call type, an empty key sends no Authorization',
    async () => {
      const open = await startChatSimulator({ apiKeys: [] });
      try {
        open.failNext({
          kind: 'http',
          status: 200,
          body: {
            choices: [
              { message: { tool_calls: [{ id: 'c1', function: { name: 'listSlots', arguments: { daysAhead: 7 } } }] } },
            ],
          },
        });
        const result = await new OpenAIChatClient({ baseUrl: `${open.baseUrl}/`, apiKey: '' }).complete(greetRequest);
        assert.deepEqual(result, {
          ok: true,
          message: {
            content: null,
            tool_calls: [{ id: 'c1', type: 'function', function: { name: 'listSlots', arguments: '{"daysAhead":7}' } }],
          },
        });
        assert.equal(open.requests[0]?.headers.authorization, undefined);
        assert.ok(
          (await new OpenAIChatClient({ baseUrl: open.baseUrl, apiKey: '' }).complete(greetRequest)).ok,
          'a keyless server answers',
        );
      } finally {
        await open.close();
      }
    },
  );

  it('a 200 whose body is not a completion is retried like a 5xx, then retryable; a refusal is fatal', async () => {
    chat.sim.failNext({ kind: 'http', status: 200, body: { object: 'list', data: [] } }, 3);
    assert.deepEqual(await client().complete(greetRequest), {
      ok: false,
      kind: 'retryable',
      message: 'The chat model server sent an unexpected response body (choices).',
      httpStatus: 200,
    });
    assert.equal(chat.sim.requests.length, 3);
    chat.sim.failNext({ kind: 'http', status: 200, body: '<html>login</html>' }, 3);
    assert.match(
      ((await client().complete(greetRequest)) as { message: string }).message,
      /not JSON: is the base URL right\?/,
    );
    assert.equal(chat.sim.requests.length, 6);
    // An error body sent with 200, as some proxies do; then a good answer.
    chat.sim.failNext({
      kind: 'http',
      status: 200,
      body: { error: { message: 'upstream failed', type: 'server_error', param: null, code: null } },
    });
    assert.equal((await client().complete(greetRequest)).ok, true);
    assert.equal(chat.sim.requests.length, 8);
    chat.sim.failNext({
      kind: 'http',
      status: 200,
      body: { choices: [{ message: { content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' }] },
    });
    assert.deepEqual(await client().complete(greetRequest), {
      ok: false,
      kind: 'fatal',
      message: 'The chat model answered with neither text nor tool calls (the model refused).',
      httpStatus: 200,
    });
    assert.equal(chat.sim.requests.length, 9);
  });

  it('context too long: context_overflow at once, not retried', async () => {
    const body = {
      error: {
        message: "This model's maximum context length is 128000 tokens.",
        type: 'invalid_request_error',
        param: 'messages',
        code: 'context_length_exceeded',
      },
    };
    chat.sim.failNext({ kind: 'http', status: 400, body });
    assert.equal(((await client().complete(greetRequest)) as { kind: string }).kind, 'context_overflow');
    chat.sim.failNext({ kind: 'http', status: 413, body: { error: 'context too long' } });
    assert.equal(((await client().complete(greetRequest)) as { kind: string }).kind, 'context_overflow');
    assert.equal(chat.sim.requests.length, 2);
  });

  it(
    'maxWaitMs: a longer Retry-After ends the call at once with ' + 'retryAfterMs, for the caller to reschedule',
    async () => {
      chat.sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '3600' }), 3);
      const result = await client({ maxWaitMs: 2000 }).complete(greetRequest);
      assert.deepEqual([result.ok, (result as { retryAfterMs?: number }).retryAfterMs], [false, 3_600_000]);
      assert.equal(chat.sim.requests.length, 1);
      assert.deepEqual(delays, []);
    },
  );
});

describe('fatal answers', () => {
  it('a wrong key: 401 once, never retried, and neither the key nor its masked echo is in the message', async () => {
    const secret = 'sk-proj-THISISASECRETKEY1234567890abcd';
    const result = await client({ apiKey: secret }).complete(greetRequest);
    assert.deepEqual(result, {
      ok: false,
      kind: 'fatal',
      httpStatus: 401,
      message:
        'The chat model server answered 401 invalid_api_key: Incorrect API key provided: ' +
        '[redacted]. You can find your API key at https://platform.openai.com/account/api-keys.',
    });
    assert.equal(chat.sim.requests.length, 1);
    const message = (result as { message: string }).message;
    assert.ok(!message.includes(secret) && !message.includes('abcd') && !message.includes('***'));
  });

  it('no key at all: OpenAI\'s "You didn\'t provide an API key"', async () => {
    const result = await client({ apiKey: '' }).complete(greetRequest);
    assert.ok(
      !result.ok &&
        result.kind === 'fatal' &&
        result.message.startsWith("The chat model server answered 401: You didn't provide an API key."),
    );
  });

  it("an invalid request: 400 with OpenAI's message, not retried", async () => {
    const orphanTool: ChatRequest = {
      model: 'gpt-4o-mini',
      messages: [SYSTEM, { role: 'tool', tool_call_id: 'call_1', content: 'x' }],
    };
    assert.deepEqual(await client().complete(orphanTool), {
      ok: false,
      kind: 'fatal',
      httpStatus: 400,
      message:
        'The chat model server answered 400: Invalid parameter: messages with role ' +
        "'tool' must be a response to a preceeding message with 'tool_calls'.",
    });
    assert.equal(chat.sim.requests.length, 1);
  });

  it('an unknown model: 404 model_not_found', async () => {
    const strict = await startChatSimulator({ models: ['gpt-4o-mini'] });
    try {
      const result = await new OpenAIChatClient({ baseUrl: strict.baseUrl, apiKey: strict.apiKey }).complete({
        ...greetRequest,
        model: 'gpt-9',
      });
      assert.deepEqual(result, {
        ok: false,
        kind: 'fatal',
        httpStatus: 404,
        message:
          'The chat model server answered 404 model_not_found: The model ' +
          '`gpt-9` does not exist or you do not have access to it.',
      });
    } finally {
      await strict.close();
    }
  });
});

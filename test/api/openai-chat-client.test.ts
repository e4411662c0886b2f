// The OpenAI-compatible chat client against the chat-completions simulator: answers, tool calls,
// the official SDK's retry rules (statuses, x-should-retry, retry-after-ms / retry-after, backoff),
// insufficient_quota never retried, fatal 4xx with the provider's message, timeouts, cancels.
import assert from 'node:assert/strict';
import { after, afterEach, before, beforeEach, describe, it } from 'node:test';
import type { ChatMessage, ChatRequest } from '../../src/agent/chat-model.ts';
import {
  CHAT_FAILURES,
  CHAT_SIM_API_KEY,
  startChatSimulator,
  type ChatSimulator,
} from '../../src/simulators/chat-model/chat-simulator.ts';
import { OpenAIChatClient, type OpenAIChatClientOptions } from '../../src/agent/openai/openai-chat-client.ts';
import { retryDelayMs } from '../../src/agent/openai/openai-retry.ts';
import { toolDeclarations } from '../../src/agent/tool-registry.ts';

const NOW = Date.parse('2050-09-04T10:00:00.000Z');
const SYSTEM: ChatMessage = {
  role: 'system',
  content: [
    '## Who you are',
    'You are Mia, speaking for Sunny Roofs. What Sunny Roofs offers: solar.',
    '## What we know about the lead',
    '<lead_data>',
    'Name: "Ada Lovelace"',
    '</lead_data>',
    '## Questions still open',
    '- q_owner: Do you own the property? (required; one of: Yes, No)',
  ].join('\n'),
};
const greetRequest: ChatRequest = { model: 'gpt-4o-mini', messages: [SYSTEM], tools: toolDeclarations() };
const stopRequest: ChatRequest = {
  model: 'gpt-4o-mini',
  messages: [SYSTEM, { role: 'user', content: 'STOP' }],
  tools: toolDeclarations(),
};

let sim: ChatSimulator;
let delays: number[];

before(async () => {
  sim = await startChatSimulator();
});
after(() => sim.close());
beforeEach(() => {
  sim.requests.length = 0;
  delays = [];
});
afterEach(() => {
  sim.clearFailures();
  sim.setDelay(0);
});

/** A client whose waits are recorded instead of slept; jitter off (random 0) so delays are exact. */
function client(opts: Partial<OpenAIChatClientOptions> = {}): OpenAIChatClient {
  return new OpenAIChatClient({
    baseUrl: sim.baseUrl,
    apiKey: CHAT_SIM_API_KEY,
    sleep: async (ms) => void delays.push(ms),
    now: () => NOW,
    random: () => 0,
    ...opts,
  });
}

describe('answers', () => {
  it('a text answer; the request is the chat-completions wire format with the Bearer key', async () => {
    const result = await client().complete(greetRequest);
    assert.deepEqual(result, {
      ok: true,
      message: { content: 'Hi Ada, this is Mia from Sunny Roofs. Do you own the property? (Yes or No)' },
      finishReason: 'stop',
    });
    const [req] = sim.requests;
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

  it('tool calls come back with their JSON arguments; without tools, neither tools nor tool_choice is sent', async () => {
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
    assert.deepEqual(Object.keys(sim.requests[1]!.body as object), ['model', 'messages']);
  });

  it('servers that differ in details: arguments as an object, no tool-call type, an empty key sends no Authorization', async () => {
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
  });

  it('a 200 whose body is not a completion is retried like a 5xx, then retryable; a refusal is fatal', async () => {
    sim.failNext({ kind: 'http', status: 200, body: { object: 'list', data: [] } }, 3);
    assert.deepEqual(await client().complete(greetRequest), {
      ok: false,
      kind: 'retryable',
      message: 'The chat model server sent an unexpected response body (choices).',
      httpStatus: 200,
    });
    assert.equal(sim.requests.length, 3);
    sim.failNext({ kind: 'http', status: 200, body: '<html>login</html>' }, 3);
    assert.match(
      ((await client().complete(greetRequest)) as { message: string }).message,
      /not JSON: is the base URL right\?/,
    );
    assert.equal(sim.requests.length, 6);
    // An error body sent with 200, as some proxies do; then a good answer.
    sim.failNext({
      kind: 'http',
      status: 200,
      body: { error: { message: 'upstream failed', type: 'server_error', param: null, code: null } },
    });
    assert.equal((await client().complete(greetRequest)).ok, true);
    assert.equal(sim.requests.length, 8);
    sim.failNext({
      kind: 'http',
      status: 200,
      body: { choices: [{ message: { content: null, refusal: 'I cannot help with that.' }, finish_reason: 'stop' }] },
    });
    assert.deepEqual(await client().complete(greetRequest), {
      ok: false,
      kind: 'fatal',
      message:
        'The chat model answered with neither text nor tool calls (the model refused: I cannot help with that.).',
      httpStatus: 200,
    });
    assert.equal(sim.requests.length, 9);
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
    sim.failNext({ kind: 'http', status: 400, body });
    assert.equal(((await client().complete(greetRequest)) as { kind: string }).kind, 'context_overflow');
    sim.failNext({ kind: 'http', status: 413, body: { error: 'context too long' } });
    assert.equal(((await client().complete(greetRequest)) as { kind: string }).kind, 'context_overflow');
    assert.equal(sim.requests.length, 2);
  });

  it('maxWaitMs: a longer Retry-After ends the call at once with retryAfterMs, for the caller to reschedule', async () => {
    sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '3600' }), 3);
    const result = await client({ maxWaitMs: 2000 }).complete(greetRequest);
    assert.deepEqual([result.ok, (result as { retryAfterMs?: number }).retryAfterMs], [false, 3_600_000]);
    assert.equal(sim.requests.length, 1);
    assert.deepEqual(delays, []);
  });
});

describe('retries', () => {
  it('500 twice, then an answer: three attempts with backoff 0.5 s, 1 s', async () => {
    sim.failNext(CHAT_FAILURES.serverError(), 2);
    assert.ok((await client().complete(greetRequest)).ok);
    assert.equal(sim.requests.length, 3);
    assert.deepEqual(delays, [500, 1000]);
  });

  it('500 three times: retries spent, retryable with the provider message', async () => {
    sim.failNext(CHAT_FAILURES.serverError(), 3);
    assert.deepEqual(await client().complete(greetRequest), {
      ok: false,
      kind: 'retryable',
      httpStatus: 500,
      message:
        'The chat model server answered 500: The server had an error while processing your request. Sorry about that!',
    });
    assert.equal(sim.requests.length, 3);
  });

  it('408, 409, 429 and 503 are retried; backoff doubles up to 8 s, with at most 25 % jitter', async () => {
    for (const status of [408, 409, 429, 503])
      sim.failNext({
        kind: 'http',
        status,
        body: { error: { message: `no ${status}`, type: 'x', param: null, code: null } },
      });
    assert.ok((await client({ maxRetries: 6 }).complete(greetRequest)).ok);
    assert.equal(sim.requests.length, 5);
    assert.deepEqual(delays, [500, 1000, 2000, 4000]);
    const noHeaders = new Headers();
    assert.deepEqual(
      [4, 5, 9].map((i) => retryDelayMs(noHeaders, i, NOW, () => 0)),
      [8000, 8000, 8000],
    );
    assert.equal(
      retryDelayMs(noHeaders, 0, NOW, () => 0.999999),
      375,
    );
  });

  it('retry-after-ms wins over retry-after; retry-after in seconds or as an HTTP date; over 60 s the backoff is used', async () => {
    sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '3', ms: '250' }));
    sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '2.5' }));
    assert.ok((await client().complete(greetRequest)).ok);
    assert.deepEqual(delays, [250, 2500]);

    delays = [];
    sim.failNext({ ...CHAT_FAILURES.rateLimited(), headers: { 'retry-after': new Date(NOW + 7000).toUTCString() } });
    sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '120' }));
    assert.ok((await client().complete(greetRequest)).ok);
    assert.deepEqual(delays, [7000, 1000]);
  });

  it('x-should-retry: false stops a 500 at once (fatal); x-should-retry: true retries even a 400', async () => {
    sim.failNext({ ...CHAT_FAILURES.serverError(), headers: { 'x-should-retry': 'false' } });
    const stopped = await client().complete(greetRequest);
    assert.deepEqual([stopped.ok, !stopped.ok && stopped.kind, sim.requests.length], [false, 'fatal', 1]);

    sim.requests.length = 0;
    sim.failNext(
      {
        kind: 'http',
        status: 400,
        body: { error: { message: 'try again', type: 'invalid_request_error', param: null, code: null } },
        headers: { 'x-should-retry': 'true' },
      },
      3,
    );
    const spent = await client().complete(greetRequest);
    assert.deepEqual(spent, {
      ok: false,
      kind: 'retryable',
      message: 'The chat model server answered 400: try again',
      httpStatus: 400,
    });
    assert.equal(sim.requests.length, 3);
  });

  it('429 insufficient_quota is never retried, whatever the headers say', async () => {
    sim.failNext(
      { ...CHAT_FAILURES.insufficientQuota(), headers: { 'x-should-retry': 'true', 'retry-after': '1' } },
      3,
    );
    const result = await client().complete(greetRequest);
    assert.deepEqual(
      [result.ok, !result.ok && result.kind, !result.ok && result.httpStatus],
      [false, 'insufficient_quota', 429],
    );
    assert.match(
      (result as { message: string }).message,
      /^The chat model server answered 429 insufficient_quota: You exceeded your current quota/,
    );
    assert.equal(sim.requests.length, 1);
    assert.deepEqual(delays, []);
  });

  it('a hanging server times out per attempt and is retried; a dropped connection too', async () => {
    sim.failNext({ kind: 'hang' }, 2);
    const hung = await client({ timeoutMs: 50, maxRetries: 1 }).complete(greetRequest);
    assert.deepEqual(hung, { ok: false, kind: 'retryable', message: 'The chat model did not answer within 50 ms.' });
    assert.equal(sim.requests.length, 2);

    sim.requests.length = 0;
    sim.failNext({ kind: 'disconnect' });
    assert.ok((await client().complete(greetRequest)).ok);
    assert.equal(sim.requests.length, 2);
  });

  it('nobody listening: retried, then retryable', async () => {
    const gone = await startChatSimulator();
    await gone.close();
    const result = await new OpenAIChatClient({
      baseUrl: gone.baseUrl,
      apiKey: 'k',
      sleep: async (ms) => void delays.push(ms),
      random: () => 0,
    }).complete(greetRequest);
    assert.deepEqual(result, {
      ok: false,
      kind: 'retryable',
      message: 'Could not reach the chat model (ECONNREFUSED).',
    });
    assert.deepEqual(delays, [500, 1000]);
  });

  it('the caller cancelling stops at once: during an attempt and during a backoff wait', async () => {
    sim.setDelay(60_000);
    const controller = new AbortController();
    const pending = client().complete(greetRequest, controller.signal);
    controller.abort();
    assert.deepEqual(await pending, {
      ok: false,
      kind: 'retryable',
      message: 'The request to the chat model was cancelled.',
    });
    sim.setDelay(0);

    sim.requests.length = 0;
    sim.failNext(CHAT_FAILURES.overloaded(), 3);
    const waiting = new AbortController();
    const c = client({ sleep: async () => waiting.abort() });
    assert.deepEqual(await c.complete(greetRequest, waiting.signal), {
      ok: false,
      kind: 'retryable',
      message: 'The request to the chat model was cancelled.',
    });
    assert.equal(sim.requests.length, 1);
  });
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
        'The chat model server answered 401 invalid_api_key: Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.',
    });
    assert.equal(sim.requests.length, 1);
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
        "The chat model server answered 400: Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
    });
    assert.equal(sim.requests.length, 1);
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
          'The chat model server answered 404 model_not_found: The model `gpt-9` does not exist or you do not have access to it.',
      });
    } finally {
      await strict.close();
    }
  });
});

describe('the simulator speaks the wire protocol', () => {
  async function post(body: unknown, path = '/v1/chat/completions') {
    const res = await fetch(`${sim.url}${path}`, {
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
          "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly. The OpenAI API expects a JSON payload, but what was sent was not valid JSON. If you have trouble figuring out how to fix this, please contact us through our help center at help.openai.com.)",
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
          "Invalid value: 'bot'. Supported values are: 'system', 'assistant', 'user', 'function', 'tool', and 'developer'.",
          'messages[0].role',
          'invalid_value',
        ),
      ],
      [
        { model: 'm', messages: [{ role: 'user', content: 5 }] },
        err(
          "Invalid type for 'messages[0].content': expected one of a string or array of objects, but got an integer instead.",
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
          "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: call_1",
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
          "Invalid 'tools[0].function.name': string does not match pattern. Expected a string that matches the pattern '^[a-zA-Z0-9_-]+$'.",
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

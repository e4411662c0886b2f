// The OpenAI-compatible chat client's retries against the chat-completions simulator: the official
// SDK's rules (statuses, x-should-retry, retry-after-ms / retry-after, backoff), insufficient_quota
// never retried, timeouts, dropped connections, cancels.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CHAT_FAILURES, startChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { OpenAIChatClient } from '../../src/agent/openai/openai-chat-client.ts';
import { retryDelayMs } from '../../src/agent/openai/openai-retry.ts';
import { chatSimulatorSetup, NOW, greetRequest } from '../helpers/chat-simulator-setup.ts';

const chat = chatSimulatorSetup();
const { delays, client } = chat;

describe('retries', () => {
  it('500 twice, then an answer: three attempts with backoff 0.5 s, 1 s', async () => {
    chat.sim.failNext(CHAT_FAILURES.serverError(), 2);
    assert.ok((await client().complete(greetRequest)).ok);
    assert.equal(chat.sim.requests.length, 3);
    assert.deepEqual(delays, [500, 1000]);
  });

  it('500 three times: retries spent, retryable with the provider message', async () => {
    chat.sim.failNext(CHAT_FAILURES.serverError(), 3);
    assert.deepEqual(await client().complete(greetRequest), {
      ok: false,
      kind: 'retryable',
      httpStatus: 500,
      message:
        'The chat model server answered 500: The server had an error while processing your request. Sorry about that!',
    });
    assert.equal(chat.sim.requests.length, 3);
  });

  it('408, 409, 429 and 503 are retried; backoff doubles up to 8 s, with at most 25 % jitter', async () => {
    for (const status of [408, 409, 429, 503])
      chat.sim.failNext({
        kind: 'http',
        status,
        body: { error: { message: `no ${status}`, type: 'x', param: null, code: null } },
      });
    assert.ok((await client({ maxRetries: 6 }).complete(greetRequest)).ok);
    assert.equal(chat.sim.requests.length, 5);
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

  it(
    'retry-after-ms wins over retry-after; retry-after in seconds ' +
      'or as an HTTP date; over 60 s the backoff is used',
    async () => {
      chat.sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '3', ms: '250' }));
      chat.sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '2.5' }));
      assert.ok((await client().complete(greetRequest)).ok);
      assert.deepEqual(delays, [250, 2500]);

      delays.length = 0;
      chat.sim.failNext({
        ...CHAT_FAILURES.rateLimited(),
        headers: { 'retry-after': new Date(NOW + 7000).toUTCString() },
      });
      chat.sim.failNext(CHAT_FAILURES.rateLimited({ seconds: '120' }));
      assert.ok((await client().complete(greetRequest)).ok);
      assert.deepEqual(delays, [7000, 1000]);
    },
  );

  it('x-should-retry: false stops a 500 at once (fatal); x-should-retry: true retries even a 400', async () => {
    chat.sim.failNext({ ...CHAT_FAILURES.serverError(), headers: { 'x-should-retry': 'false' } });
    const stopped = await client().complete(greetRequest);
    assert.deepEqual([stopped.ok, !stopped.ok && stopped.kind, chat.sim.requests.length], [false, 'fatal', 1]);

    chat.sim.requests.length = 0;
    chat.sim.failNext(
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
    assert.equal(chat.sim.requests.length, 3);
  });

  it('429 insufficient_quota is never retried, whatever the headers say', async () => {
    chat.sim.failNext(
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
    assert.equal(chat.sim.requests.length, 1);
    assert.deepEqual(delays, []);
  });

  it('a hanging server times out per attempt and is retried; a dropped connection too', async () => {
    chat.sim.failNext({ kind: 'hang' }, 2);
    const hung = await client({ timeoutMs: 50, maxRetries: 1 }).complete(greetRequest);
    assert.deepEqual(hung, { ok: false, kind: 'retryable', message: 'The chat model did not answer within 50 ms.' });
    assert.equal(chat.sim.requests.length, 2);

    chat.sim.requests.length = 0;
    chat.sim.failNext({ kind: 'disconnect' });
    assert.ok((await client().complete(greetRequest)).ok);
    assert.equal(chat.sim.requests.length, 2);
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
    chat.sim.setDelay(60_000);
    const controller = new AbortController();
    const pending = client().complete(greetRequest, controller.signal);
    controller.abort();
    assert.deepEqual(await pending, {
      ok: false,
      kind: 'retryable',
      message: 'The request to the chat model was cancelled.',
    });
    chat.sim.setDelay(0);

    chat.sim.requests.length = 0;
    chat.sim.failNext(CHAT_FAILURES.overloaded(), 3);
    const waiting = new AbortController();
    const c = client({ sleep: async () => waiting.abort() });
    assert.deepEqual(await c.complete(greetRequest, waiting.signal), {
      ok: false,
      kind: 'retryable',
      message: 'The request to the chat model was cancelled.',
    });
    assert.equal(chat.sim.requests.length, 1);
  });
});

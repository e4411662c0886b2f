import type { EgressOptions } from '../../shared/egress-policy.ts';
import {
  failureMessage,
  providerRequest,
  requestFailure,
  type ResponseHeaders,
} from '../../shared/provider-request.ts';
import { setTimeout as wait } from 'node:timers/promises';
import type { ChatModel, ChatRequest, ChatResult, ChatToolCall } from '../chat-model.ts';
import { getJson, isRecord, type LookupFailure, type SettingsLookup } from '../../shared/settings-lookup.ts';
import { isContextOverflow, requestedDelayMs, retryDelayMs, shouldRetryResponse } from './openai-retry.ts';
import { ChatCompletionSchema, readErrorBody, type ChatCompletionBody } from './openai-wire.ts';

// Client for any OpenAI-compatible chat-completions server (OpenAI itself, Ollama, vLLM,
// LiteLLM, …; OpenAI's chat-completions reference, docs/LLM.md). Retries follow the official SDK's rules
// (openai-retry.ts), except that a 429 `insufficient_quota` is answered at once: waiting does not
// bring money back, a human must act.

export interface OpenAIChatClientOptions {
  /** Up to and including the version path, e.g. https://api.openai.com/v1 or http://localhost:11434/v1. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`; an empty key sends no Authorization header (local servers). */
  apiKey: string;
  /** Per attempt. Default 60 000 ms. */
  timeoutMs?: number;
  /** Retries after the first attempt. Default 2, as the official SDK. */
  maxRetries?: number;
  /** Waits between attempts; injected so tests observe delays without waiting. Must reject when `signal` aborts. */
  sleep?: (ms: number, signal?: AbortSignal) => Promise<void>;
  /** Current time in ms, for Retry-After given as an HTTP date. Default Date.now. */
  now?: () => number;
  /** Jitter source in [0, 1). Default Math.random. */
  random?: () => number;
  /** Set when a workspace chose the base URL: connect only where the address policy allows. */
  egress?: EgressOptions;
  /**
   * The longest Retry-After the client waits out itself. A server asking for more ends the call
   * at once with `retryAfterMs`, for the caller to reschedule (the turn worker: no sleeping while a
   * worker slot is held). Default: the SDK's rule (up to 60 s waited; longer asks ignored).
   */
  maxWaitMs?: number;
}

type Attempt =
  | { kind: 'response'; status: number; headers: ResponseHeaders; text: string }
  | { kind: 'network'; message: string }
  | { kind: 'cancelled' };

const MAX_MESSAGE = 500;

export class OpenAIChatClient implements ChatModel {
  readonly #url: string;
  readonly #baseUrl: string;
  readonly #apiKey: string;
  readonly #timeoutMs: number;
  readonly #maxRetries: number;
  readonly #sleep: (ms: number, signal?: AbortSignal) => Promise<void>;
  readonly #now: () => number;
  readonly #random: () => number;
  readonly #egress: { egress?: EgressOptions };
  readonly #maxWaitMs: number | undefined;

  constructor(opts: OpenAIChatClientOptions) {
    this.#baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.#url = `${this.#baseUrl}/chat/completions`;
    this.#apiKey = opts.apiKey;
    this.#timeoutMs = opts.timeoutMs ?? 60_000;
    this.#maxRetries = opts.maxRetries ?? 2;
    this.#sleep = opts.sleep ?? ((ms, signal) => wait(ms, undefined, signal ? { signal } : {}));
    this.#now = opts.now ?? Date.now;
    this.#random = opts.random ?? Math.random;
    this.#egress = opts.egress ? { egress: opts.egress } : {};
    this.#maxWaitMs = opts.maxWaitMs;
  }

  async complete(request: ChatRequest, signal?: AbortSignal): Promise<ChatResult> {
    const body: Record<string, unknown> = { model: request.model, messages: request.messages };
    // OpenAI refuses tool_choice without tools, so both are sent or neither.
    if (request.tools && request.tools.length > 0) {
      body.tools = request.tools;
      body.tool_choice = 'auto';
    }
    const json = JSON.stringify(body);
    for (let attempt = 0; ; attempt++) {
      const a = await this.#attempt(json, signal);
      if (a.kind === 'cancelled') return cancelled();
      const retriesLeft = attempt < this.#maxRetries;
      if (a.kind === 'network') {
        if (!retriesLeft) return { ok: false, kind: 'retryable', message: a.message };
        if (!(await this.#pause(undefined, attempt, signal))) return cancelled();
        continue;
      }
      if (a.status >= 200 && a.status < 300) {
        const result = this.#success(a.status, a.text);
        // A malformed answer (no tool-call id, no choices, an error body with 200) is a server
        // fault like a 5xx: retried, and in the end the caller's to hand over.
        if (result.ok || result.kind !== 'retryable' || !retriesLeft) return result;
        if (!(await this.#pause(undefined, attempt, signal))) return cancelled();
        continue;
      }
      const error = readErrorBody(a.text);
      const message = this.#describe(a.status, error, a.text);
      if (a.status === 429 && (error.code === 'insufficient_quota' || error.type === 'insufficient_quota')) {
        return { ok: false, kind: 'insufficient_quota', message, httpStatus: a.status };
      }
      if (a.status >= 400 && a.status < 500 && isContextOverflow(error)) {
        return { ok: false, kind: 'context_overflow', message, httpStatus: a.status };
      }
      const retryable = shouldRetryResponse(a.status, a.headers);
      const asked = requestedDelayMs(a.headers, this.#now());
      const longWait = retryable && asked !== undefined && this.#maxWaitMs !== undefined && asked > this.#maxWaitMs;
      if (!retryable || !retriesLeft || longWait) {
        const wait = retryable && asked !== undefined && asked > 0 ? { retryAfterMs: asked } : {};
        return { ok: false, kind: retryable ? 'retryable' : 'fatal', message, httpStatus: a.status, ...wait };
      }
      if (!(await this.#pause(a.headers, attempt, signal))) return cancelled();
    }
  }

  async #attempt(json: string, signal: AbortSignal | undefined): Promise<Attempt> {
    if (signal?.aborted) return { kind: 'cancelled' };
    const headers: Record<string, string> = { 'content-type': 'application/json', accept: 'application/json' };
    if (this.#apiKey !== '') headers.authorization = `Bearer ${this.#apiKey}`;
    const timeout = AbortSignal.timeout(this.#timeoutMs);
    try {
      const res = await providerRequest('openai', this.#url, {
        method: 'POST',
        headers,
        body: json,
        signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
        ...this.#egress,
      });
      return { kind: 'response', status: res.status, headers: res.headers, text: res.text };
    } catch (err) {
      if (signal?.aborted) return { kind: 'cancelled' };
      // Not the caller's signal (checked above): a timeout is this request's own.
      return { kind: 'network', message: failureMessage(requestFailure(err), 'the chat model', this.#timeoutMs) };
    }
  }

  /**
   * Whether the key is accepted and `model` exists (`workspace verify`), without generating
   * anything: `GET {base}/models/{model}`. Servers that are OpenAI-compatible for chat but lack
   * that route (a 404 that is not OpenAI's `model_not_found`, a 405, …) are asked for the list
   * `GET {base}/models` instead, and the name is looked up in it.
   */
  async findModel(model: string): Promise<SettingsLookup<{ via: 'retrieve' | 'list' }>> {
    const one = await this.#getModels(`/models/${encodeURIComponent(model)}`);
    if (!one.ok) return one;
    // Any model object will do: some servers answer with the canonical name (`llama3.1:latest`).
    if (one.status >= 200 && one.status < 300 && isRecord(one.json) && typeof one.json.id === 'string')
      return { ok: true, value: { via: 'retrieve' } };
    const error = readErrorBody(one.text);
    if (one.status === 401 || one.status === 403 || (one.status === 404 && error.code === 'model_not_found'))
      return this.#lookupFailure(one.status, error, one.text);
    const list = await this.#getModels('/models');
    if (!list.ok) return list;
    if (list.status < 200 || list.status >= 300)
      return this.#lookupFailure(list.status, readErrorBody(list.text), list.text);
    const data = isRecord(list.json) && Array.isArray(list.json.data) ? list.json.data : undefined;
    if (!data)
      return {
        ok: false,
        message: 'The chat model server answered GET /models without a list of models: is the base URL right?',
      };
    const ids = data.flatMap((m) => (isRecord(m) && typeof m.id === 'string' ? [m.id] : []));
    // Ollama lists `name:latest` for a model requested as `name`.
    if (ids.includes(model) || ids.includes(`${model}:latest`)) return { ok: true, value: { via: 'list' } };
    const shown = ids.slice(0, 5).join(', ') + (ids.length > 5 ? ', …' : '');
    return {
      ok: false,
      httpStatus: 404,
      code: 'model_not_found',
      message: `The server lists ${ids.length} model(s)${ids.length ? ` (${shown})` : ''}, not ${model}.`,
    };
  }

  async #getModels(path: string): Promise<{ ok: true; status: number; json: unknown; text: string } | LookupFailure> {
    const headers: Record<string, string> = this.#apiKey === '' ? {} : { authorization: `Bearer ${this.#apiKey}` };
    const timeoutMs = Math.min(this.#timeoutMs, 15_000);
    const url = `${this.#baseUrl}${path}`;
    const got = await getJson('openai', url, headers, timeoutMs, 'the chat model server', this.#egress.egress);
    if (!got.ok) return { ...got.failure, message: this.#redact(got.failure.message) };
    return { ok: true, status: got.status, json: got.json, text: got.text };
  }

  #lookupFailure(status: number, error: { message?: string; code?: string }, text: string): LookupFailure {
    return {
      ok: false,
      httpStatus: status,
      message: this.#describe(status, error, text),
      ...(error.code ? { code: error.code } : {}),
    };
  }

  /** False when the caller cancelled while waiting. */
  async #pause(
    headers: ResponseHeaders | undefined,
    attempt: number,
    signal: AbortSignal | undefined,
  ): Promise<boolean> {
    try {
      await this.#sleep(retryDelayMs(headers, attempt, this.#now(), this.#random), signal);
      return !signal?.aborted;
    } catch {
      return false;
    }
  }

  #success(status: number, text: string): ChatResult {
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      const message = 'The chat model server sent a response that is not JSON: is the base URL right?';
      return { ok: false, kind: 'retryable', message, httpStatus: status };
    }
    const parsed = ChatCompletionSchema.safeParse(data);
    if (!parsed.success) {
      const where = parsed.error.issues
        .map((i) => i.path.join('.') || 'body')
        .slice(0, 3)
        .join(', ');
      const error = readErrorBody(text).message ? ' with an error in it' : '';
      const message = `The chat model server sent an unexpected response body${error} (${where}).`;
      return { ok: false, kind: 'retryable', message, httpStatus: status };
    }
    return toResult(parsed.data, status);
  }

  #describe(status: number, error: { message?: string; code?: string }, text: string): string {
    // A server the workspace chose could be anything that answers HTTP: its words are not
    // repeated (they reach the workspace's logs), only the status and an OpenAI-style code.
    if (this.#egress.egress) {
      const code = error.code && /^[a-z0-9_]{1,40}$/.test(error.code) ? ` ${error.code}` : '';
      return `The chat model server answered HTTP ${status}${code}.`;
    }
    // Non-JSON bodies (proxy error pages) are shortened rather than passed on whole.
    const detail = error.message ?? (text.trim().slice(0, 200) || '(empty body)');
    return this.#redact(
      `The chat model server answered ${status}${error.code ? ` ${error.code}` : ''}: ${detail}`,
    ).slice(0, MAX_MESSAGE);
  }

  /** The key never leaves this class: not the whole key, and not OpenAI's masked echo of it. */
  #redact(text: string): string {
    let out = this.#apiKey.length >= 4 ? text.split(this.#apiKey).join('[redacted]') : text;
    out = out.replace(/\b(sk-[A-Za-z0-9_-]*\*+[A-Za-z0-9_-]*|sk-[A-Za-z0-9_-]{8,})/g, '[redacted]');
    return out.replace(/(Incorrect API key provided: )\S+?(\.?\s|\.?$)/, '$1[redacted]$2');
  }
}

function toResult(data: ChatCompletionBody, status: number): ChatResult {
  const choice = data.choices[0]!;
  const { content, refusal } = choice.message;
  const toolCalls: ChatToolCall[] = (choice.message.tool_calls ?? []).map((c) => ({
    id: c.id,
    type: 'function',
    function: {
      name: c.function.name,
      arguments:
        typeof c.function.arguments === 'string' ? c.function.arguments : JSON.stringify(c.function.arguments ?? {}),
    },
  }));
  const finish = typeof choice.finish_reason === 'string' ? { finishReason: choice.finish_reason } : {};
  if (toolCalls.length > 0)
    return { ok: true, message: { content: content ?? null, tool_calls: toolCalls }, ...finish };
  if (typeof content === 'string') return { ok: true, message: { content }, ...finish };
  // A refusal's words are not repeated: they can quote the lead's name and messages, and this
  // message reaches the process's log.
  const why = refusal ? 'the model refused' : `finish_reason ${choice.finish_reason ?? 'missing'}`;
  return {
    ok: false,
    kind: 'fatal',
    message: `The chat model answered with neither text nor tool calls (${why}).`,
    httpStatus: status,
  };
}

function cancelled(): ChatResult {
  // Cancelled by our side (shutdown): the turn can run again later.
  return { ok: false, kind: 'retryable', message: 'The request to the chat model was cancelled.' };
}

import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import { validateChatRequest, type ValidChatRequest } from './chat-request-validation.ts';
import { openAIError } from '../../agent/openai/openai-wire.ts';
import { scriptedReply, type AssistantReply } from './scripted-policy.ts';
import { startLocalHttpServer } from '../local-http-server.ts';

// A local stand-in for an OpenAI-compatible chat-completions server (OpenAI's chat-completions reference): the same
// route, Bearer check, error bodies and response shape, with a deterministic "model" (the
// scripted qualification policy) so tests and the demo run a whole WhatsApp conversation
// offline through the real client. Failures can be queued to exercise the client's retry rules.
// `GET /v1/models[/{model}]` answer too (what `workspace verify` reads).

export const CHAT_SIM_API_KEY = 'sk-sim-leadintake-0000000000000000';

/** Answer one request (or several) with this instead of the model's reply. */
export type ChatFailure =
  /** Any status and body (an object is sent as JSON, a string as it is), with extra headers. */
  | { kind: 'http'; status: number; body?: unknown; headers?: Record<string, string> }
  /** Never answers (until the client gives up or the simulator closes): the client's timeout fires. */
  | { kind: 'hang' }
  /** Drops the connection without an answer. */
  | { kind: 'disconnect' };

export type ChatHttpFailure = Extract<ChatFailure, { kind: 'http' }>;

/** OpenAI's bodies for the failures a client must handle differently. */
export const CHAT_FAILURES = {
  serverError: (): ChatHttpFailure => ({
    kind: 'http',
    status: 500,
    body: openAIError('The server had an error while processing your request. Sorry about that!', 'server_error'),
  }),
  overloaded: (): ChatHttpFailure => ({
    kind: 'http',
    status: 503,
    body: openAIError('The engine is currently overloaded, please try again later.', 'server_error'),
  }),
  /** A rate limit, optionally with Retry-After (seconds) and retry-after-ms. */
  rateLimited: (retryAfter?: { seconds?: string; ms?: string }): ChatHttpFailure => ({
    kind: 'http',
    status: 429,
    body: openAIError(
      'Rate limit reached for gpt-4o-mini in organization org-sim on requests per min (RPM): ' +
        'Limit 3, Used 3, Requested 1. Please try again in 20s.',
      'requests',
      'requests',
      'rate_limit_exceeded',
    ),
    headers: {
      ...(retryAfter?.seconds !== undefined ? { 'retry-after': retryAfter.seconds } : {}),
      ...(retryAfter?.ms !== undefined ? { 'retry-after-ms': retryAfter.ms } : {}),
    },
  }),
  insufficientQuota: (): ChatHttpFailure => ({
    kind: 'http',
    status: 429,
    body: openAIError(
      'You exceeded your current quota, please check your plan and billing details. ' +
        'For more information on this error, read the docs: ' +
        'https://platform.openai.com/docs/guides/error-codes/api-errors.',
      'insufficient_quota',
      null,
      'insufficient_quota',
    ),
  }),
} as const;

export interface ChatSimulatorOptions {
  port?: number;
  /**
   * Keys accepted as `Authorization: Bearer …`. Default [CHAT_SIM_API_KEY]; an empty list accepts any request, as
   * Ollama does.
   */
  apiKeys?: string[];
  /**
   * Models that exist; others get OpenAI's 404 model_not_found. Default: any model (GET /v1/models lists gpt-4o-mini).
   */
  models?: string[];
  /**
   * Default true: `GET /v1/models/{model}` answers like OpenAI. False: only the list route exists,
   * like OpenAI-compatible servers without the retrieve route (a 404 that is not model_not_found).
   */
  modelRetrieve?: boolean;
  /** The "model". Default: the scripted qualification policy. */
  policy?: (request: ValidChatRequest) => AssistantReply;
  /** Delay before each answer (a slow model). Default 0. */
  delayMs?: number;
  /** For `created`. Default the system clock. */
  now?: () => Date;
}

/** `body` is the parsed JSON, the raw text when it was not JSON, undefined when empty. */
export interface RecordedChatRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface ChatSimulator {
  /** http://127.0.0.1:<port> */
  url: string;
  /** `${url}/v1`: what the client's baseUrl is set to. */
  baseUrl: string;
  /** The first accepted key (CHAT_SIM_API_KEY by default). */
  apiKey: string;
  requests: RecordedChatRequest[];
  /** Answers the next `times` requests (default 1) with `failure`, before auth and validation. */
  failNext(failure: ChatFailure, times?: number): void;
  clearFailures(): void;
  setDelay(ms: number): void;
  setPolicy(policy: (request: ValidChatRequest) => AssistantReply): void;
  close(): Promise<void>;
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(status, {
    'content-type': typeof body === 'string' ? 'text/plain; charset=utf-8' : 'application/json',
    'content-length': Buffer.byteLength(text),
    'x-request-id': `req_${randomBytes(16).toString('hex')}`,
    ...headers,
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** OpenAI echoes a wrong key masked: its first characters and last four. */
function maskKey(key: string): string {
  return key.length <= 8 ? '*'.repeat(key.length) : `${key.slice(0, 3)}${'*'.repeat(key.length - 7)}${key.slice(-4)}`;
}

const NO_KEY =
  "You didn't provide an API key. You need to provide your API key in an Authorization header " +
  'using Bearer auth (i.e. Authorization: Bearer YOUR_KEY), ' +
  "or as the password field (with blank username) if you're accessing the API from your browser " +
  'and are prompting for a username and password. ' +
  'You can obtain an API key from https://platform.openai.com/account/api-keys.';

export async function startChatSimulator(opts: ChatSimulatorOptions = {}): Promise<ChatSimulator> {
  const apiKeys = opts.apiKeys ?? [CHAT_SIM_API_KEY];
  const models = opts.models ? new Set(opts.models) : undefined;
  const now = opts.now ?? (() => new Date());
  let policy = opts.policy ?? scriptedReply;
  let delayMs = opts.delayMs ?? 0;
  const failures: ChatFailure[] = [];
  const requests: RecordedChatRequest[] = [];
  const closing = new AbortController(); // ends hangs and delays on close()

  /** Waits `ms` (forever when undefined); false when the client left or the simulator closes. */
  async function pause(res: ServerResponse, ms?: number): Promise<boolean> {
    const clientGone = new AbortController();
    res.once('close', () => clientGone.abort());
    try {
      await sleep(ms ?? 2_147_483_647, undefined, { signal: AbortSignal.any([closing.signal, clientGone.signal]) });
      return true;
    } catch {
      return false;
    }
  }

  function completion(reply: AssistantReply, request: ValidChatRequest): Record<string, unknown> {
    const calls = reply.tool_calls ?? [];
    const message = {
      role: 'assistant',
      content: reply.content,
      ...(calls.length > 0 ? { tool_calls: calls } : {}),
      refusal: null,
      annotations: [],
    };
    // A rough token count (4 characters a token) so usage looks like a real one.
    const prompt = Math.ceil(JSON.stringify(request.messages).length / 4);
    const done = Math.ceil(JSON.stringify(message).length / 4);
    return {
      id: `chatcmpl-${randomBytes(15).toString('base64url')}`,
      object: 'chat.completion',
      created: Math.floor(now().getTime() / 1000),
      model: request.model,
      choices: [
        {
          index: 0,
          message,
          logprobs: null,
          finish_reason: reply.finish_reason ?? (calls.length > 0 ? 'tool_calls' : 'stop'),
        },
      ],
      usage: { prompt_tokens: prompt, completion_tokens: done, total_tokens: prompt + done },
      service_tier: 'default',
      system_fingerprint: 'fp_leadintake_sim',
    };
  }

  /** OpenAI's `Model` object and `ListModelsResponse` (its OpenAPI document). */
  function readModels(res: ServerResponse, id: string | undefined): void {
    const model = (m: string) => ({ id: m, object: 'model', created: 1_686_935_002, owned_by: 'leadintake-simulator' });
    if (id === undefined) send(res, 200, { object: 'list', data: (opts.models ?? ['gpt-4o-mini']).map(model) });
    else if (models && !models.has(id)) {
      send(
        res,
        404,
        openAIError(`The model '${id}' does not exist`, 'invalid_request_error', 'model', 'model_not_found'),
      );
    } else send(res, 200, model(id));
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    let parsed: unknown = rawBody === '' ? undefined : rawBody;
    try {
      parsed = JSON.parse(rawBody);
    } catch {
      /* keep the raw text */
    }
    requests.push({ method, path, headers: req.headers, body: parsed });

    const failure = failures.shift();
    if (failure?.kind === 'hang') return void (await pause(res));
    if (failure?.kind === 'disconnect') return void req.socket.destroy();
    if (failure) return send(res, failure.status, failure.body ?? '', failure.headers);

    const route = path.replace(/\/+$/, '');
    const modelRead = /^\/v1\/models(?:\/([^/]+))?$/.exec(route);
    const readable = modelRead && method === 'GET' && (modelRead[1] === undefined || opts.modelRetrieve !== false);
    if (!readable && (method !== 'POST' || route !== '/v1/chat/completions')) {
      return send(res, 404, openAIError(`Invalid URL (${method} ${path})`, 'invalid_request_error'));
    }
    if (apiKeys.length > 0) {
      const key = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
      if (key === undefined) return send(res, 401, openAIError(NO_KEY, 'invalid_request_error'));
      if (!apiKeys.includes(key)) {
        const message =
          `Incorrect API key provided: ${maskKey(key)}. ` +
          'You can find your API key at https://platform.openai.com/account/api-keys.';
        return send(res, 401, openAIError(message, 'invalid_request_error', null, 'invalid_api_key'));
      }
    }
    if (readable) return readModels(res, modelRead[1] === undefined ? undefined : decodeURIComponent(modelRead[1]));
    const checked = validateChatRequest(rawBody);
    if (!checked.ok) return send(res, 400, checked.body);
    if (models && !models.has(checked.request.model)) {
      const message = `The model \`${checked.request.model}\` does not exist or you do not have access to it.`;
      return send(res, 404, openAIError(message, 'invalid_request_error', null, 'model_not_found'));
    }
    if (delayMs > 0 && !(await pause(res, delayMs))) return;
    const reply = policy(checked.request);
    if (reply.raw) return send(res, reply.raw.status, reply.raw.body);
    send(res, 200, completion(reply, checked.request), { 'openai-processing-ms': String(delayMs) });
  }

  const http = await startLocalHttpServer(handle, {
    port: opts.port,
    onFailure: (res) =>
      send(
        res,
        500,
        openAIError('The server had an error while processing your request. Sorry about that!', 'server_error'),
      ),
  });
  const { url } = http;

  return {
    url,
    baseUrl: `${url}/v1`,
    apiKey: apiKeys[0] ?? '',
    requests,
    failNext(failure, times = 1) {
      for (let i = 0; i < times; i++) failures.push(failure);
    },
    clearFailures: () => void (failures.length = 0),
    setDelay: (ms) => void (delayMs = ms),
    setPolicy: (p) => void (policy = p),
    close: () => {
      closing.abort();
      return http.close();
    },
  };
}

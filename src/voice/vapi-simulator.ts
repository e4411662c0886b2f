// Local stand-in for the Vapi REST API (providers.md §1) so tests and the demo run offline
// through the real VapiClient. It mirrors Vapi's observable behaviour: NestJS error bodies,
// class-validator "whitelist" rejection of unknown properties, and the "Couldn't Get …"
// messages. Wording we could not confirm against the live API is marked UNCONFIRMED.
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

export const SIM_API_KEY = 'vapi-test-key';
export const SIM_ORG_ID = '3f1c9a52-6b0e-4d7a-9c21-8e5b7d4a0f13';
export const SIM_ASSISTANT_ID = '8c0b6e2d-4f5a-4b19-a7d3-2e9f1c6b5a40';
export const SIM_PHONE_NUMBER_ID = 'b27d4e91-0c3f-4a68-8e15-6d9a3b2c7f08';

/** Vapi's exact 401 body (support.vapi.ai thread 28586614); key order matters for byte equality. */
const INVALID_KEY_BODY = {
  message: 'Invalid Key. Hot tip, you may be using the private key instead of the public key, or vice versa.',
  error: 'Unauthorized',
  statusCode: 401,
};

export type VapiFailureMode = 'none' | 'bad-key' | 'unknown-assistant' | 'bad-phone-number' | 'server-error' | 'hang-up' | 'slow';

/** Defaults: key SIM_API_KEY, assistant SIM_ASSISTANT_ID, phone number SIM_PHONE_NUMBER_ID, random port, slowMs 15000. */
export interface VapiSimulatorOptions { port?: number; apiKeys?: string[]; assistants?: string[]; phoneNumbers?: string[]; failure?: VapiFailureMode; slowMs?: number }

/** `body` is the parsed JSON, the raw text when it was not JSON, undefined when empty. */
export interface RecordedRequest { method: string; path: string; headers: IncomingHttpHeaders; body: unknown }

/** The Call object as Vapi returns it. Mutable on purpose: playing call events later updates it in place. */
export interface VapiCall {
  id: string;
  orgId: string;
  createdAt: string;
  updatedAt: string;
  type: 'outboundPhoneCall';
  status: string;
  cost: number;
  [field: string]: unknown;
}

export interface RecordedCall { call: VapiCall; requestBody: Record<string, unknown> }

export interface VapiSimulator {
  url: string;
  calls: RecordedCall[];
  requests: RecordedRequest[];
  setFailure(mode: VapiFailureMode, slowMs?: number): void;
  addAssistant(id: string): void;
  addPhoneNumber(id: string): void;
  close(): Promise<void>;
}

// ---- validation, shaped like class-validator + NestJS ValidationPipe(forbidNonWhitelisted) ----
// A rule returns messages for one property; nested objects prefix their children's messages with
// "<property>." exactly as NestJS flattens nested ValidationErrors.
type Json = Record<string, unknown>;
type Rule = (value: unknown, key: string, parent: Json) => string[];
type Shape = Record<string, Rule>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const any: Rule = () => [];
const object: Rule = (v, k) => (isObject(v) ? [] : [`${k} must be an object`]);
const bool: Rule = (v, k) => (typeof v === 'boolean' ? [] : [`${k} must be a boolean value`]);
const array: Rule = (v, k) => (Array.isArray(v) ? [] : [`${k} must be an array`]);
const str = (max?: number, min?: number): Rule => (v, k) => {
  if (typeof v !== 'string') return [`${k} must be a string`];
  const out: string[] = [];
  if (min !== undefined && v.length < min) out.push(`${k} must be longer than or equal to ${min} characters`);
  if (max !== undefined && v.length > max) out.push(`${k} must be shorter than or equal to ${max} characters`);
  return out;
};
const num = (min: number, max: number): Rule => (v, k) => {
  if (typeof v !== 'number' || !Number.isFinite(v)) return [`${k} must be a number conforming to the specified constraints`];
  if (v < min) return [`${k} must not be less than ${min}`];
  return v > max ? [`${k} must not be greater than ${max}`] : [];
};
const nested = (shape: () => Shape): Rule => (v, k) =>
  isObject(v) ? validate(v, shape()).map((m) => `${k}.${m}`) : [`nested property ${k} must be either object or array`];
/** Properties we accept but do not model deeply (Vapi validates them; our client never sends them). */
const loose = (names: string): Shape => Object.fromEntries(names.split(' ').map((n) => [n, any]));

// customer.number: 3–40 chars, E.164 unless numberE164CheckEnabled=false (then alphanumeric, V-SPEC).
// The E.164 message wording is UNCONFIRMED (recalled from community reports).
const customerNumber: Rule = (v, k, parent) => {
  const basic = str(40, 3)(v, k, parent);
  if (basic.length > 0 || typeof v !== 'string') return basic;
  const ok = parent.numberE164CheckEnabled === false ? /^\+?[a-zA-Z0-9]+$/.test(v) : /^\+[1-9]\d{1,14}$/.test(v);
  return ok ? [] : [`${k} must be a valid phone number in the E.164 format. Hot tip, you may be missing the country code (Eg. US: +1).`];
};

// Property names are those of V-SPEC AssistantOverrides / CreateCustomerDTO / CreateCallDTO.
const overridesShape = (): Shape => ({
  ...loose('transcriber model voice firstMessageInterruptionsEnabled voicemailDetection backgroundSound ' +
    'modelOutputInMessagesEnabled transportConfigurations observabilityPlan credentials hooks tools:append endCallPhrases ' +
    'compliancePlan backgroundSpeechDenoisingPlan analysisPlan artifactPlan startSpeakingPlan stopSpeakingPlan ' +
    'monitorPlan credentialIds server keypadInputPlan firstMessageMode'),
  firstMessage: str(),
  clientMessages: array,
  serverMessages: array,
  maxDurationSeconds: num(10, 43200),
  variableValues: object, // free-form keys
  metadata: object, // free-form keys
  name: str(40),
  voicemailMessage: str(1000),
  endCallMessage: str(1000),
});
const customerShape = (): Shape => ({
  numberE164CheckEnabled: bool,
  extension: str(10),
  assistantOverrides: nested(overridesShape),
  squadOverrides: nested(overridesShape),
  number: customerNumber,
  sipUri: str(),
  name: str(40),
  email: str(40),
  externalId: str(40),
});
const createCallShape = (): Shape => ({
  ...loose('transport customers schedulePlan assistant squad workflow workflowOverrides phoneNumber'),
  assistantVersion: str(),
  name: str(40),
  assistantId: str(),
  assistantOverrides: nested(overridesShape),
  squadId: str(),
  squadOverrides: nested(overridesShape),
  workflowId: str(),
  customerId: str(),
  customer: nested(customerShape),
  phoneNumberId: str(),
});

/** Whitelist errors first, then per-property checks: the order class-validator reports them. */
function validate(obj: Json, shape: Shape): string[] {
  const out = Object.keys(obj).filter((k) => !Object.hasOwn(shape, k)).map((k) => `property ${k} should not exist`);
  for (const [key, rule] of Object.entries(shape)) {
    if (obj[key] !== undefined) out.push(...rule(obj[key], key, obj));
  }
  return out;
}

/** Vapi ids look like UUIDv7: 48-bit ms timestamp, version 7, RFC 4122 variant. */
function uuidv7(): string {
  const b = randomBytes(16);
  b.writeUIntBE(Date.now(), 0, 6);
  b[6] = (b[6]! & 0x0f) | 0x70;
  b[8] = (b[8]! & 0x3f) | 0x80;
  const h = b.toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

const nest = (statusCode: number, error: string, message: string | string[]) => ({ message, error, statusCode });
const notFound = { message: 'Not Found', error: 'Not Found', statusCode: 404 };

function send(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startVapiSimulator(opts: VapiSimulatorOptions = {}): Promise<VapiSimulator> {
  const apiKeys = new Set(opts.apiKeys ?? [SIM_API_KEY]);
  const started = new Date().toISOString();
  const assistants = new Map<string, string>(); // id -> createdAt
  const phoneNumbers = new Map<string, string>();
  for (const id of opts.assistants ?? [SIM_ASSISTANT_ID]) assistants.set(id, started);
  for (const id of opts.phoneNumbers ?? [SIM_PHONE_NUMBER_ID]) phoneNumbers.set(id, started);
  let failure: VapiFailureMode = opts.failure ?? 'none';
  let slowMs = opts.slowMs ?? 15_000;
  const calls: RecordedCall[] = [];
  const callsById = new Map<string, RecordedCall>(); // same objects as `calls`, for GET /call/:id and later event playback
  const requests: RecordedRequest[] = [];
  const sockets = new Set<Socket>();
  const closing = new AbortController(); // aborts pending `slow` waits on close()

  function createCall(body: Json): [number, unknown] {
    const messages = validate(body, createCallShape());
    if (messages.length > 0) return [400, nest(400, 'Bad Request', messages)];
    const phoneNumberId = body.phoneNumberId as string | undefined;
    if (phoneNumberId === undefined && body.phoneNumber === undefined) {
      return [400, nest(400, 'Bad Request', "Couldn't Get Phone Number. Need Either `phoneNumberId` Or `phoneNumber`.")];
    }
    if (failure === 'bad-phone-number' || (phoneNumberId !== undefined && !phoneNumbers.has(phoneNumberId))) {
      // UNCONFIRMED wording: our best guess in the same "Couldn't Get …" family as the assistant message.
      return [400, nest(400, 'Bad Request', `Couldn't Get Phone Number. \`phoneNumberId\` ${phoneNumberId} Does Not Exist.`)];
    }
    const assistantId = body.assistantId as string | undefined;
    const hasAssistant = ['assistantId', 'assistant', 'squadId', 'squad', 'workflowId', 'workflow'].some((k) => body[k] !== undefined);
    if (!hasAssistant) {
      // UNCONFIRMED wording (Vapi needs some assistant source; exact text not captured).
      return [400, nest(400, 'Bad Request', "Couldn't Get Assistant. Need Either `assistant` Or `assistantId`.")];
    }
    if (failure === 'unknown-assistant' || (assistantId !== undefined && !assistants.has(assistantId))) {
      return [400, nest(400, 'Bad Request', `Couldn't Get Assistant. \`assistantId\` ${assistantId} Does Not Exist.`)];
    }
    const now = new Date().toISOString();
    // `monitor` is left out: Vapi only fills listen/control URLs when monitorPlan enables them.
    const call: VapiCall = {
      id: uuidv7(), orgId: SIM_ORG_ID, createdAt: now, updatedAt: now, type: 'outboundPhoneCall', status: 'queued', cost: 0,
    };
    for (const k of ['assistantId', 'assistant', 'squadId', 'workflowId', 'phoneNumberId', 'phoneNumber', 'customer', 'customerId', 'assistantOverrides', 'name']) {
      if (body[k] !== undefined) call[k] = structuredClone(body[k]);
    }
    call.subscriptionLimits = { concurrencyBlocked: false, concurrencyLimit: 10, remainingConcurrentCalls: 9 };
    const record: RecordedCall = { call, requestBody: body };
    calls.push(record);
    callsById.set(call.id, record);
    return [201, call];
  }

  /** Returns a handler for known routes; undefined lets the caller answer NestJS's route 404. */
  function route(method: string, path: string, rawBody: string, contentType: string): (() => [number, unknown]) | undefined {
    if (method === 'POST' && path === '/call') {
      return () => {
        // Like body-parser: only JSON content types are parsed; anything else arrives as {}.
        if (!contentType.includes('json') || rawBody.trim() === '') return createCall({});
        let body: unknown;
        try {
          body = JSON.parse(rawBody);
        } catch (err) {
          return [400, nest(400, 'Bad Request', (err as Error).message)];
        }
        // Our own wording: body-parser (strict) rejects JSON that is not an object with a parse error.
        if (!isObject(body)) return [400, nest(400, 'Bad Request', 'Request body must be a JSON object.')];
        return createCall(body);
      };
    }
    const m = /^\/(call|assistant|phone-number)\/([^/]+)$/.exec(path);
    if (method !== 'GET' || !m) return undefined;
    const [, kind, id = ''] = m;
    if (kind === 'call') return () => { const r = callsById.get(id); return r ? [200, r.call] : [404, notFound]; };
    const store = kind === 'assistant' ? assistants : phoneNumbers;
    return () => {
      const createdAt = store.get(id);
      if (createdAt === undefined) return [404, notFound];
      return [200, { id, orgId: SIM_ORG_ID, name: `Simulated ${kind}`, createdAt, updatedAt: createdAt }];
    };
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    let parsed: unknown = rawBody === '' ? undefined : rawBody;
    try { parsed = JSON.parse(rawBody); } catch { /* keep raw text */ }
    requests.push({ method, path, headers: req.headers, body: parsed });

    if (failure === 'slow') {
      // Stop waiting if the client gives up or the simulator closes, so nothing outlives close().
      const clientGone = new AbortController();
      res.once('close', () => clientGone.abort());
      try {
        await sleep(slowMs, undefined, { signal: AbortSignal.any([closing.signal, clientGone.signal]) });
      } catch {
        return;
      }
    }
    if (failure === 'hang-up') {
      req.socket.destroy();
      return;
    }
    const handler = route(method, path, rawBody, req.headers['content-type'] ?? '');
    // NestJS answers unknown routes before any guard runs.
    if (!handler) return send(res, 404, nest(404, 'Not Found', `Cannot ${method} ${path}`));
    const key = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
    if (failure === 'bad-key' || key === undefined || !apiKeys.has(key)) return send(res, 401, INVALID_KEY_BODY);
    if (failure === 'server-error') return send(res, 500, { message: 'Internal server error', statusCode: 500 });
    const [status, body] = handler();
    send(res, status, body);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => {
      if (!res.headersSent && !res.destroyed) send(res, 500, { message: 'Internal server error', statusCode: 500 });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  const port = typeof address === 'object' && address ? address.port : 0;

  return {
    url: `http://127.0.0.1:${port}`,
    calls,
    requests,
    setFailure(mode, ms) {
      failure = mode;
      if (ms !== undefined) slowMs = ms;
    },
    addAssistant: (id) => void assistants.set(id, new Date().toISOString()),
    addPhoneNumber: (id) => void phoneNumbers.set(id, new Date().toISOString()),
    close: () =>
      new Promise<void>((resolve) => {
        closing.abort();
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy(); // keep-alive and pending requests
      }),
  };
}

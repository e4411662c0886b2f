// Local stand-in for the Vapi REST API (Vapi's API docs) so tests and the demo run offline
// through the real VapiClient. It mirrors Vapi's observable behaviour: NestJS error bodies,
// class-validator "whitelist" rejection of unknown properties (vapi-simulator-validation.ts), and
// the "Couldn't Get …" messages. Wording we could not confirm against the live API is marked
// UNCONFIRMED. With a persona it also plays the call against the server URL the call was created
// with (vapi-call-player.ts, vapi-personas.ts).
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { CallPlayer, type Delivery, type PlayOptions, type PlayResult } from './vapi-call-player.ts';
import { hmacPlanWithDefaults, type HmacPlan } from '../../voice/vapi/vapi-hmac.ts';
import type { VapiPersona } from '../personas/vapi-personas.ts';
import type { VapiCall } from './vapi-sim-messages.ts';
import { isObject, validateCreateCall, type Json } from './vapi-simulator-validation.ts';
import { startLocalHttpServer } from '../local-http-server.ts';

export type { VapiCall } from './vapi-sim-messages.ts';
export type { Delivery, PlayOptions, PlayResult } from './vapi-call-player.ts';
export type { VapiPersona } from '../personas/vapi-personas.ts';

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

export type VapiFailureMode =
  | 'none'
  | 'bad-key'
  | 'unknown-assistant'
  | 'bad-phone-number'
  | 'server-error'
  | 'hang-up'
  | 'slow';

/** Calls created while set are played with this persona, right after `POST /call` is answered. */
export interface AutoPlay extends PlayOptions {
  /**
   * One persona for every call, or chosen per call (the sandbox: by the customer's number).
   * `nth`: this call is the nth the simulator created for the customer's number (1 for the first).
   */
  persona: VapiPersona | ((call: VapiCall, nth: number) => VapiPersona);
  /** Deliver the ringing status-update before answering `POST /call` (a fast Vapi, a slow us). */
  ringBeforeAnswer?: boolean;
}

/**
 * Defaults: key SIM_API_KEY, assistant SIM_ASSISTANT_ID, phone number SIM_PHONE_NUMBER_ID, random port, slowMs 15000,
 * no playback.
 */
export interface VapiSimulatorOptions {
  port?: number;
  apiKeys?: string[];
  assistants?: string[];
  phoneNumbers?: string[];
  failure?: VapiFailureMode;
  slowMs?: number;
  autoPlay?: AutoPlay;
  /** Webhook credentials (HMAC plans) by credential id, for `server.credentialId`. */
  credentials?: Record<string, Partial<HmacPlan> & { secretKey: string }>;
  /** The calls' clock (timestamps, HMAC timestamps). Default: the real time. */
  now?: () => Date;
  /** Forget an auto-played call once it ended (GET /call/:id then 404s): a simulator that runs for days. */
  forgetEndedCalls?: boolean;
  /** A valid `POST /call` this answers with `[status, body]` instead of creating the call (null: created). */
  refuseCall?: (body: Record<string, unknown>) => [number, unknown] | null;
}

/** `body` is the parsed JSON, the raw text when it was not JSON, undefined when empty. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

export interface RecordedCall {
  call: VapiCall;
  requestBody: Record<string, unknown>;
}

export interface VapiSimulator {
  url: string;
  calls: RecordedCall[];
  requests: RecordedRequest[];
  /** Every server message the simulator delivered, with our server's answer. */
  deliveries: Delivery[];
  setFailure(mode: VapiFailureMode, slowMs?: number): void;
  setAutoPlay(autoPlay: AutoPlay | null): void;
  /** Plays a created call now; resolves when its last message was answered. */
  play(callId: string, persona: VapiPersona, opts?: PlayOptions): Promise<PlayResult>;
  /** Resolves when every playback started so far has finished. */
  settled(): Promise<PlayResult[]>;
  addAssistant(id: string): void;
  addPhoneNumber(id: string): void;
  close(): Promise<void>;
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
  res.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(text),
  });
  res.end(text);
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function startVapiSimulator(opts: VapiSimulatorOptions = {}): Promise<VapiSimulator> {
  const apiKeys = new Set(opts.apiKeys ?? [SIM_API_KEY]);
  const now = opts.now ?? (() => new Date());
  const started = new Date().toISOString();
  const assistants = new Map<string, string>(); // id -> createdAt
  const phoneNumbers = new Map<string, string>();
  for (const id of opts.assistants ?? [SIM_ASSISTANT_ID]) assistants.set(id, started);
  for (const id of opts.phoneNumbers ?? [SIM_PHONE_NUMBER_ID]) phoneNumbers.set(id, started);
  const credentials = new Map(
    Object.entries(opts.credentials ?? {}).map(([id, plan]) => [id, hmacPlanWithDefaults(plan)]),
  );
  let failure: VapiFailureMode = opts.failure ?? 'none';
  let slowMs = opts.slowMs ?? 15_000;
  let autoPlay: AutoPlay | null = opts.autoPlay ?? null;
  const calls: RecordedCall[] = [];
  // Calls created per customer number, for personas that change with the attempt (the sandbox's
  // "answers the third call"). Bounded: the oldest numbers go first in a simulator that runs for days.
  const callsPerNumber = new Map<string, number>();
  function countCallTo(number: string): number {
    const nth = (callsPerNumber.get(number) ?? 0) + 1;
    callsPerNumber.delete(number);
    callsPerNumber.set(number, nth);
    if (callsPerNumber.size > 10_000) callsPerNumber.delete(callsPerNumber.keys().next().value!);
    return nth;
  }
  const callsById = new Map<string, RecordedCall>(); // same objects as `calls`, for GET /call/:id and playback
  const requests: RecordedRequest[] = [];
  const deliveries: Delivery[] = [];
  const playbacks: Promise<PlayResult>[] = [];
  const closing = new AbortController(); // aborts pending `slow` waits and playbacks on close()
  const playerDeps = { now, signal: closing.signal, credentials, onDelivery: (d: Delivery) => void deliveries.push(d) };

  function createCall(body: Json): [number, unknown] {
    const messages = validateCreateCall(body);
    if (messages.length > 0) return [400, nest(400, 'Bad Request', messages)];
    const phoneNumberId = body.phoneNumberId as string | undefined;
    if (phoneNumberId === undefined && body.phoneNumber === undefined) {
      return [
        400,
        nest(400, 'Bad Request', "Couldn't Get Phone Number. Need Either `phoneNumberId` Or `phoneNumber`."),
      ];
    }
    if (failure === 'bad-phone-number' || (phoneNumberId !== undefined && !phoneNumbers.has(phoneNumberId))) {
      // UNCONFIRMED wording: our best guess in the same "Couldn't Get …" family as the assistant message.
      return [
        400,
        nest(400, 'Bad Request', `Couldn't Get Phone Number. \`phoneNumberId\` ${phoneNumberId} Does Not Exist.`),
      ];
    }
    const assistantId = body.assistantId as string | undefined;
    const hasAssistant = ['assistantId', 'assistant', 'squadId', 'squad', 'workflowId', 'workflow'].some(
      (k) => body[k] !== undefined,
    );
    if (!hasAssistant) {
      // UNCONFIRMED wording (Vapi needs some assistant source; exact text not captured).
      return [400, nest(400, 'Bad Request', "Couldn't Get Assistant. Need Either `assistant` Or `assistantId`.")];
    }
    if (failure === 'unknown-assistant' || (assistantId !== undefined && !assistants.has(assistantId))) {
      return [400, nest(400, 'Bad Request', `Couldn't Get Assistant. \`assistantId\` ${assistantId} Does Not Exist.`)];
    }
    const credentialId = ((body.assistantOverrides as Json | undefined)?.server as Json | undefined)?.credentialId;
    if (typeof credentialId === 'string' && !credentials.has(credentialId)) {
      // UNCONFIRMED wording.
      return [
        400,
        nest(400, 'Bad Request', `Couldn't Get Credential. \`credentialId\` ${credentialId} Does Not Exist.`),
      ];
    }
    const refused = opts.refuseCall?.(body);
    if (refused) return refused;
    const createdAt = now().toISOString();
    // `monitor` is left out: Vapi only fills listen/control URLs when monitorPlan enables them.
    const call: VapiCall = {
      id: uuidv7(),
      orgId: SIM_ORG_ID,
      createdAt,
      updatedAt: createdAt,
      type: 'outboundPhoneCall',
      // A call with a schedulePlan waits, as Vapi's does, until its earliestAt.
      status: body.schedulePlan === undefined ? 'queued' : 'scheduled',
      cost: 0,
    };
    for (const k of [
      'assistantId',
      'assistant',
      'squadId',
      'workflowId',
      'phoneNumberId',
      'phoneNumber',
      'customer',
      'customerId',
      'assistantOverrides',
      'schedulePlan',
      'name',
    ]) {
      if (body[k] !== undefined) call[k] = structuredClone(body[k]);
    }
    call.subscriptionLimits = { concurrencyBlocked: false, concurrencyLimit: 10, remainingConcurrentCalls: 9 };
    const record: RecordedCall = { call, requestBody: body };
    calls.push(record);
    callsById.set(call.id, record);
    return [201, call];
  }

  /** Tracks a playback; `begin` may wait (for the answer to go out) before playing. */
  function track(playback: Promise<PlayResult>): Promise<PlayResult> {
    playbacks.push(playback);
    playback.catch(() => {}); // aborted by close(); callers who await still see the error
    return playback;
  }

  /** Answers `POST /call`; with auto-play, starts the call's playback once the answer is out. */
  async function postCall(rawBody: string, contentType: string, res: ServerResponse): Promise<[number, unknown]> {
    // Like body-parser: only JSON content types are parsed; anything else arrives as {}.
    let body: unknown = {};
    if (contentType.includes('json') && rawBody.trim() !== '') {
      try {
        body = JSON.parse(rawBody);
      } catch (err) {
        return [400, nest(400, 'Bad Request', (err as Error).message)];
      }
    }
    // Our own wording: body-parser (strict) rejects JSON that is not an object with a parse error.
    if (!isObject(body)) return [400, nest(400, 'Bad Request', 'Request body must be a JSON object.')];
    const [status, answer] = createCall(body);
    const play = autoPlay;
    if (status !== 201 || !play) return [status, answer];
    const call = answer as VapiCall;
    const nth = countCallTo(String((call.customer as Json | undefined)?.number ?? ''));
    const earliestAt = Date.parse(String((call.schedulePlan as Json | undefined)?.earliestAt ?? ''));
    const scheduled = Number.isFinite(earliestAt);
    // A scheduled call's clock starts at its earliestAt (or now, if that has passed).
    const deps = scheduled ? { ...playerDeps, now: () => new Date(Math.max(now().getTime(), earliestAt)) } : playerDeps;
    const player = new CallPlayer(call, play, deps);
    if (play.ringBeforeAnswer && !scheduled) await player.ring();
    // Tracked now, played once the answer is out: settled() never misses a call it answered.
    const playback = track(
      new Promise<void>((resolve) => {
        res.once('finish', resolve);
        res.once('close', resolve);
      })
        .then(() => (scheduled ? untilScheduled(earliestAt, play.realMsPerSecond ?? 0) : undefined))
        .then(() => player.play(typeof play.persona === 'function' ? play.persona(call, nth) : play.persona)),
    );
    if (opts.forgetEndedCalls) {
      void playback
        .finally(() => {
          callsById.delete(call.id);
          const at = playbacks.indexOf(playback);
          if (at >= 0) playbacks.splice(at, 1);
        })
        .catch(() => {});
    }
    return [status, answer];
  }

  /**
   * Waits for a scheduled call's time at the playback's pace: `realMsPerSecond` real ms per
   * simulated second until earliestAt (0, as in tests: at once; 1000: Vapi's real wait).
   */
  async function untilScheduled(earliestAt: number, realMsPerSecond: number): Promise<void> {
    const ms = ((earliestAt - now().getTime()) / 1000) * realMsPerSecond;
    if (ms > 0) await sleep(ms, undefined, { signal: closing.signal });
  }

  function lookup(kind: string, id: string): [number, unknown] {
    if (kind === 'call') {
      const r = callsById.get(id);
      return r ? [200, r.call] : [404, notFound];
    }
    const createdAt = (kind === 'assistant' ? assistants : phoneNumbers).get(id);
    if (createdAt === undefined) return [404, notFound];
    return [200, { id, orgId: SIM_ORG_ID, name: `Simulated ${kind}`, createdAt, updatedAt: createdAt }];
  }

  /**
   * "Delete Call": answers the call and forgets it (GET then 404s). A call still scheduled ends
   * `scheduled-call-deleted` (an auto-played call already waiting for its time still plays).
   */
  function deleteCall(id: string): [number, unknown] {
    const r = callsById.get(id);
    if (!r) return [404, notFound];
    callsById.delete(id);
    if (r.call.status === 'scheduled')
      Object.assign(r.call, { status: 'ended', endedReason: 'scheduled-call-deleted' });
    return [200, r.call];
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const rawBody = await readBody(req);
    const method = req.method ?? 'GET';
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    let parsed: unknown = rawBody === '' ? undefined : rawBody;
    try {
      parsed = JSON.parse(rawBody);
    } catch {
      /* keep raw text */
    }
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
    const m = /^\/(call|assistant|phone-number)\/([^/]+)$/.exec(path);
    const known =
      (method === 'POST' && path === '/call') ||
      (method === 'GET' && m !== null) ||
      (method === 'DELETE' && m?.[1] === 'call');
    // NestJS answers unknown routes before any guard runs.
    if (!known) return send(res, 404, nest(404, 'Not Found', `Cannot ${method} ${path}`));
    const key = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? '')?.[1]?.trim();
    if (failure === 'bad-key' || key === undefined || !apiKeys.has(key)) return send(res, 401, INVALID_KEY_BODY);
    if (failure === 'server-error') return send(res, 500, { message: 'Internal server error', statusCode: 500 });
    if (method === 'DELETE') return send(res, ...deleteCall(m![2]!));
    const [status, body] = m ? lookup(m[1]!, m[2]!) : await postCall(rawBody, req.headers['content-type'] ?? '', res);
    send(res, status, body);
  }

  const http = await startLocalHttpServer(handle, {
    port: opts.port,
    onFailure: (res) => send(res, 500, { message: 'Internal server error', statusCode: 500 }),
  });
  return {
    url: http.url,
    calls,
    requests,
    deliveries,
    setFailure(mode, ms) {
      failure = mode;
      if (ms !== undefined) slowMs = ms;
    },
    setAutoPlay: (play) => void (autoPlay = play),
    play(callId, persona, playOpts = {}) {
      const record = callsById.get(callId);
      if (!record) return Promise.reject(new Error(`No simulated call ${callId}.`));
      return track(new CallPlayer(record.call, playOpts, playerDeps).play(persona));
    },
    async settled() {
      // Playbacks may start while earlier ones are awaited (auto-play after an answer).
      let seen = -1;
      while (seen !== playbacks.length) {
        seen = playbacks.length;
        await Promise.allSettled(playbacks);
      }
      return Promise.all(playbacks);
    },
    addAssistant: (id) => void assistants.set(id, new Date().toISOString()),
    addPhoneNumber: (id) => void phoneNumbers.set(id, new Date().toISOString()),
    close: () => {
      closing.abort();
      return http.close();
    },
  };
}

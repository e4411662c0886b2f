import type { IncomingMessage, ServerResponse } from 'node:http';
import { setTimeout as delay } from 'node:timers/promises';
import { personaReply, type LeadPersonaName } from '../personas/lead-personas.ts';
import {
  graphErrorBody,
  invalidToken,
  reEngagement,
  unknownObject,
  unknownPath,
  validateSend,
  type GraphErrorSpec,
  type ParsedSend,
} from './meta-sim-graph.ts';
import {
  META_SIM,
  type MetaSimFailure,
  type MetaSimPhoneNumber,
  type MetaSimRequest,
  type MetaSimSend,
  type MetaSimulator,
  type MetaSimulatorOptions,
  type PersonaOptions,
} from './meta-sim-types.ts';
import { startLocalHttpServer } from '../local-http-server.ts';
import {
  messageWebhook,
  newDelivery,
  newWamid,
  postWebhook,
  SerialQueues,
  statusWebhook,
  type MetaSimDelivery,
  type StatusError,
} from './meta-sim-webhooks.ts';

// Local stand-in for Meta's WhatsApp Cloud API (Meta's WhatsApp Cloud API docs) so tests and the demo run
// offline through the real MetaWhatsAppClient: `POST /{version}/{phone-number-id}/messages` with
// Graph's auth, validation and error shapes, the 24-hour window, signed status webhooks, and a
// scripted lead persona per recipient who answers through signed message webhooks; and
// `GET /{version}/{phone-number-id}`, which `workspace verify` reads.
//
// The 131047 window error: Meta's WhatsApp Cloud API documentation and developers' reports show it
// both synchronously (HTTP 400) and as a `failed` status webhook, unconfirmed which one an account gets. `windowError`
// picks one:
// 'sync' (default) answers 400, 'async' accepts with 200 and then posts the failed status.

export { META_SIM } from './meta-sim-types.ts';
export type {
  MetaSimDelivery,
  MetaSimFailure,
  MetaSimPhoneNumber,
  MetaSimRequest,
  MetaSimSend,
  MetaSimTemplate,
  MetaSimulator,
  MetaSimulatorOptions,
  PersonaOptions,
  StatusError,
} from './meta-sim-types.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
const digits = (phone: string): string => phone.replace(/\D/g, '');

export async function startMetaSimulator(opts: MetaSimulatorOptions = {}): Promise<MetaSimulator> {
  const now = opts.now ?? (() => new Date());
  const numbers = new Map<string, MetaSimPhoneNumber>();
  for (const n of opts.phoneNumbers ?? [defaultNumber()]) numbers.set(n.id, structuredClone(n));
  const personas = new Map<string, { persona: LeadPersonaName } & PersonaOptions>();
  const recipientFailures = new Map<string, StatusError>();
  const waIds = new Map<string, string>(); // digits of the number sent to -> the wa_id Graph answers
  const lastInbound = new Map<string, number>(); // `${phoneNumberId}:${waId}` -> ms
  const injected: MetaSimFailure[] = [];
  const requests: MetaSimRequest[] = [];
  const sends: MetaSimSend[] = [];
  const deliveries: MetaSimDelivery[] = [];
  const queues = new SerialQueues();
  const closing = new AbortController();
  const statuses = opts.statuses ?? ['sent', 'delivered', 'read'];
  const webhookTimeoutMs = opts.webhookTimeoutMs ?? 5000;

  const numberOrFirst = (id: string | undefined): MetaSimPhoneNumber => {
    const number = numbers.get(id ?? [...numbers.keys()][0] ?? '');
    if (!number) throw new Error(`meta simulator: unknown phone number id ${id}`);
    return number;
  };
  const pause = async (ms: number | undefined) => {
    if (ms) await delay(ms, undefined, { signal: closing.signal });
  };
  const urlFor = (number: MetaSimPhoneNumber, waId: string, override?: string) =>
    override ?? personas.get(waId)?.webhookUrl ?? number.webhookUrl;

  async function deliver(
    kind: MetaSimDelivery['kind'],
    number: MetaSimPhoneNumber,
    url: string | undefined,
    payload: unknown,
  ): Promise<MetaSimDelivery> {
    const delivery = newDelivery(kind, url, number.appSecret, payload);
    deliveries.push(delivery);
    await postWebhook(delivery, number.appSecret, webhookTimeoutMs);
    return delivery;
  }

  async function leadWrites(
    number: MetaSimPhoneNumber,
    waId: string,
    text: string,
    name: string,
    url: string | undefined,
  ) {
    const at = now();
    lastInbound.set(`${number.id}:${waId}`, at.getTime());
    return deliver(
      'message',
      number,
      url,
      messageWebhook(number, { from: waId, name, wamid: newWamid(waId), text, at }),
    );
  }

  /** After an accepted send: its statuses, then the persona's answer, in order for this recipient. */
  function afterSend(number: MetaSimPhoneNumber, send: MetaSimSend, failure: StatusError | undefined) {
    const category = send.kind === 'template' ? 'utility' : 'service';
    const post = (status: 'sent' | 'delivered' | 'read' | 'failed', error?: StatusError) => async () => {
      await pause(opts.delays?.statusMs);
      const payload = statusWebhook(number, {
        wamid: send.wamid,
        status,
        recipient: send.to,
        at: now(),
        category,
        ...(error ? { error } : {}),
      });
      await deliver('status', number, urlFor(number, send.to), payload);
    };
    const key = `${number.id}:${send.to}`;
    if (failure) return queues.push(key, post('failed', failure));
    for (const status of statuses) queues.push(key, post(status));
    queues.push(key, async () => {
      const lead = personas.get(send.to);
      const reply = lead ? personaReply(lead.persona, send.text) : null;
      if (!lead || reply === null) return;
      await pause(opts.delays?.replyMs);
      await leadWrites(number, send.to, reply, lead.name ?? 'Simulated Lead', urlFor(number, send.to));
    });
  }

  function acceptSend(number: MetaSimPhoneNumber, parsed: ParsedSend, body: unknown): [number, unknown] {
    if (parsed.waId === digits(number.displayPhoneNumber)) {
      return errorAnswer({
        status: 400,
        code: 131021,
        message: '(#131021) Recipient cannot be sender',
        details: 'Sender and recipient phone number is the same.',
      });
    }
    const opened = lastInbound.get(`${number.id}:${parsed.waId}`);
    const windowOpen = opened !== undefined && now().getTime() - opened < DAY_MS;
    let failure = recipientFailures.get(parsed.waId);
    if (parsed.kind === 'text' && !windowOpen) {
      if ((opts.windowError ?? 'sync') === 'sync') return errorAnswer(reEngagement());
      const e = reEngagement();
      failure = { code: e.code, title: 'Re-engagement message', details: e.details! };
    }
    const wamid = newWamid(parsed.waId);
    const text = parsed.kind === 'text' ? parsed.text : parsed.rendered;
    const send: MetaSimSend = {
      phoneNumberId: number.id,
      to: parsed.waId,
      kind: parsed.kind,
      text,
      wamid,
      body,
      at: now(),
    };
    sends.push(send);
    afterSend(number, send, failure);
    const message = parsed.kind === 'template' ? { id: wamid, message_status: 'accepted' } : { id: wamid };
    return [
      200,
      { messaging_product: 'whatsapp', contacts: [{ input: parsed.input, wa_id: parsed.waId }], messages: [message] },
    ];
  }

  function handleSend(
    phoneNumberId: string,
    token: string | undefined,
    rawBody: string,
  ): [number, unknown] | 'hang-up' {
    const failure = injected.shift();
    if (failure === 'hang-up') return 'hang-up';
    if (failure) return errorAnswer(failure);
    const known = [...numbers.values()].some((n) => n.accessToken === token);
    if (token === undefined || !known) return errorAnswer(invalidToken());
    const number = numbers.get(phoneNumberId);
    if (!number || number.accessToken !== token) return errorAnswer(unknownObject(phoneNumberId));
    let body: unknown = {};
    try {
      body = JSON.parse(rawBody);
    } catch {
      /* Graph then sees no parameters at all */
    }
    const checked = validateSend(body, number.templates);
    if (!checked.ok) return errorAnswer(checked.error);
    const waId = waIds.get(checked.send.waId) ?? checked.send.waId;
    return acceptSend(number, { ...checked.send, waId }, body);
  }

  /** `GET /{version}/{phone-number-id}` with Graph's default fields (what `workspace verify` reads). */
  function readNumber(phoneNumberId: string, token: string | undefined): [number, unknown] {
    if (token === undefined || ![...numbers.values()].some((n) => n.accessToken === token))
      return errorAnswer(invalidToken());
    const number = numbers.get(phoneNumberId);
    if (!number || number.accessToken !== token) return errorAnswer(unknownObject(phoneNumberId, 'get'));
    return [
      200,
      {
        verified_name: number.verifiedName ?? 'Simulated Business',
        display_phone_number: number.displayPhoneNumber,
        quality_rating: 'GREEN',
        id: number.id,
      },
    ];
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    const url = new URL(req.url ?? '/', 'http://localhost');
    let parsed: unknown = rawBody === '' ? undefined : rawBody;
    try {
      parsed = JSON.parse(rawBody);
    } catch {
      /* keep the raw text */
    }
    const record: MetaSimRequest = {
      method: req.method ?? 'GET',
      path: url.pathname,
      headers: req.headers,
      body: parsed,
    };
    requests.push(record);
    const route = /^\/(v\d+\.\d+)\/([^/]+)\/messages\/?$/.exec(url.pathname);
    const node = /^\/(v\d+\.\d+)\/(\d+)\/?$/.exec(url.pathname);
    const token =
      /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '')?.[1] ??
      url.searchParams.get('access_token') ??
      undefined;
    const answer =
      route && req.method === 'POST'
        ? handleSend(decodeURIComponent(route[2]!), token, rawBody)
        : node && req.method === 'GET'
          ? readNumber(node[2]!, token)
          : errorAnswer(unknownPath(url.pathname.split('/').slice(2).join('/')));
    if (answer === 'hang-up') {
      req.socket.destroy();
      return;
    }
    [record.status, record.response] = answer;
    const text = JSON.stringify(answer[1]);
    const headers: Record<string, string | number> = {
      'content-type': 'application/json; charset=UTF-8',
      'content-length': Buffer.byteLength(text),
      'facebook-api-version': (route ?? node)?.[1] ?? META_SIM.version,
    };
    const error = (answer[1] as { error?: { message?: string } }).error;
    if (error)
      headers['www-authenticate'] = `OAuth "Facebook Platform" "invalid_request" "${error.message ?? ''}"`.replace(
        /[^\x20-\x7e]/g,
        '?',
      );
    res.writeHead(answer[0], headers);
    res.end(text);
  }

  const http = await startLocalHttpServer(handle, {
    port: opts.port,
    onFailure: (res) => void res.writeHead(500).end(),
  });
  const { url } = http;

  return {
    url,
    graphBaseUrl: `${url}/${META_SIM.version}`,
    requests,
    sends,
    deliveries,
    addPhoneNumber: (number) => void numbers.set(number.id, structuredClone(number)),
    setWebhookUrl(phoneNumberId, webhookUrl) {
      const number = numbers.get(phoneNumberId);
      if (!number) throw new Error(`meta simulator: unknown phone number id ${phoneNumberId}`);
      number.webhookUrl = webhookUrl;
    },
    setPersona(phone, persona, personaOpts = {}) {
      if (persona === null) personas.delete(digits(phone));
      else personas.set(digits(phone), { persona, ...personaOpts });
    },
    async leadSays(phone, text, inboundOpts = {}) {
      const number = numberOrFirst(inboundOpts.phoneNumberId);
      const waId = digits(phone);
      const name = inboundOpts.name ?? personas.get(waId)?.name ?? 'Simulated Lead';
      return new Promise((resolve, reject) => {
        const url = urlFor(number, waId, inboundOpts.webhookUrl);
        queues.push(`${number.id}:${waId}`, () => leadWrites(number, waId, text, name, url).then(resolve, reject));
      });
    },
    setWaId(phone, waId) {
      if (waId === null) waIds.delete(digits(phone));
      else waIds.set(digits(phone), digits(waId));
    },
    openWindow(phone, at, phoneNumberId) {
      lastInbound.set(`${numberOrFirst(phoneNumberId).id}:${digits(phone)}`, (at ?? now()).getTime());
    },
    failNextSends(count, failure) {
      for (let i = 0; i < count; i += 1) injected.push(failure);
    },
    failRecipient(phone, error) {
      if (error) recipientFailures.set(digits(phone), error);
      else recipientFailures.delete(digits(phone));
    },
    idle: () => queues.idle(),
    close: () => {
      closing.abort();
      return http.close();
    },
  };
}

function errorAnswer(spec: GraphErrorSpec): [number, unknown] {
  return [spec.status, graphErrorBody(spec)];
}

function defaultNumber(): MetaSimPhoneNumber {
  const { phoneNumberId: id, displayPhoneNumber, wabaId, accessToken, appSecret, template } = META_SIM;
  return { id, displayPhoneNumber, wabaId, accessToken, appSecret, templates: [{ ...template }] };
}

import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { systemClock, type Clock } from '../../shared/clock.ts';
import { personaReply, type LeadPersonaName } from '../personas/lead-personas.ts';
import {
  TWILIO_WINDOW_CLOSED,
  TWILIO_WINDOW_CLOSED_MESSAGE,
  twilioErrorBody,
  type TwilioErrorBody,
} from '../../whatsapp/twilio/twilio-errors.ts';
import { accountResource, incomingNumbersPage } from './twilio-sim-account.ts';
import {
  basicCredentials,
  checkSend,
  injectedErrorMessage,
  messageResource,
  rfc2822,
  twilioSid,
  type ValidSend,
} from './twilio-sim-messages.ts';
import { WebhookQueue, type SimWebhookDelivery } from './twilio-sim-webhooks.ts';

// Local stand-in for Twilio's Messages API on WhatsApp (Twilio's Messages API docs), for tests and the demo
// (plus the Account and IncomingPhoneNumbers reads that `workspace verify` makes):
// the real TwilioClient talks to it over HTTP. It checks Basic auth and the form like Twilio,
// enforces the 24-hour window per (sender, lead), posts signed status callbacks, and plays a
// scripted lead (lead-personas.ts) who answers through signed inbound webhooks.
//
// The window rule follows Twilio's documented behaviour (Twilio's Messages API docs): a free-form Body to a
// lead whose window is closed is accepted (201 `queued`) and then fails through the status
// callback with ErrorCode 63016. `windowError: 'rest'` answers a synchronous 400 with code 63016
// instead, for the case (UNCONFIRMED) that an account sees it at create time.

export const SIM_ACCOUNT_SID = 'AC5f0c3d9a1b7e42c8a6d0e9f1b2c3d4e5';
export const SIM_AUTH_TOKEN = '9d1f6b2a7c4e8f0a3b5d7e9c1a2b4d6f';
export const SIM_WHATSAPP_SENDER = '+15557770100';
export const SIM_TEMPLATE_SID = 'HX8a7b6c5d4e3f2a1b0c9d8e7f6a5b4c3d';
export const SIM_TEMPLATE_BODY = 'Hi {{1}}, thanks for your enquiry! Do you have a minute for a few quick questions?';
export const WINDOW_MS = 24 * 60 * 60 * 1000;

export interface TwilioSimulatorOptions {
  port?: number;
  accountSid?: string;
  authToken?: string;
  /** Registered WhatsApp senders, `+digits`. Default [SIM_WHATSAPP_SENDER]. */
  senders?: string[];
  /** The account's phone numbers (IncomingPhoneNumbers), `+digits`. Default: the senders. */
  incomingNumbers?: string[];
  /** The Account resource's status. Default active. */
  accountStatus?: 'active' | 'suspended' | 'closed';
  /** Approved templates, ContentSid → body with {{1}}. Default { SIM_TEMPLATE_SID: SIM_TEMPLATE_BODY }. */
  templates?: Record<string, string>;
  /** Clock for the 24-hour window. */
  now?: Clock;
  /** Wait before each status callback / each persona reply. Default 0. */
  statusDelayMs?: number;
  replyDelayMs?: number;
  windowError?: 'callback' | 'rest';
  /** Where persona replies and leadSays() post unless setPersona names another URL. */
  inboundUrl?: string;
  /**
   * The persona of a lead no setPersona named, decided per accepted message (the sandbox picks it
   * from the phone's last digits and the inbound URL from the message's StatusCallback).
   */
  personaFor?: (message: {
    to: string;
    from: string;
    statusCallback?: string;
    /** Templates accepted for `to` so far, this message included (a lead that answers only the 3rd). */
    templatesSent: number;
  }) => { name: LeadPersonaName; inboundUrl: string; profileName?: string } | null;
  /**
   * Default true. False: free-form messages are delivered whatever the 24-hour window, for a
   * simulator that does not see every inbound message (one per process, docs/SANDBOX.md).
   */
  enforceWindow?: boolean;
}

/** A synchronous REST failure (Twilio's error JSON with this status and code), or a dropped connection. */
export type SimSendFailure = { status: number; code: number; message?: string } | { hangUp: true };
/** An accepted message that then fails through its status callbacks. */
export interface SimDeliveryFailure {
  status?: 'failed' | 'undelivered';
  errorCode: number;
  errorMessage?: string;
}

export interface SimMessage extends ValidSend {
  sid: string;
  /** The form exactly as received. */
  params: Record<string, string>;
  /** The resource as GET …/Messages/{sid}.json returns it now. */
  resource: Record<string, unknown>;
  /** Statuses the message went through so far. */
  statuses: string[];
}

export interface SimRequest {
  method: string;
  path: string;
  authorization?: string;
  params: Record<string, string>;
}

export interface TwilioSimulator {
  url: string;
  accountSid: string;
  authToken: string;
  sender: string;
  templateSid: string;
  /** Accepted messages, in order. */
  messages: SimMessage[];
  requests: SimRequest[];
  webhooks: SimWebhookDelivery[];
  /** The lead at `phone` (`+digits`) answers each accepted message as `persona` (reply null: stays silent). */
  setPersona(phone: string, persona: LeadPersonaName, opts?: { inboundUrl?: string; profileName?: string }): void;
  clearPersona(phone: string): void;
  /** The lead writes first: posts a signed inbound message and opens the window. */
  leadSays(
    phone: string,
    text: string,
    opts?: { inboundUrl?: string; profileName?: string },
  ): Promise<SimWebhookDelivery>;
  /** Marks an inbound message from `phone` at `at` (default now) without posting anything. */
  openWindow(phone: string, at?: Date): void;
  failNextSends(count: number, failure: SimSendFailure): void;
  failNextDeliveries(count: number, failure: SimDeliveryFailure): void;
  /** Approves one more template (a follow-up's own), ContentSid → body with {{1}}. */
  addTemplate(contentSid: string, body: string): void;
  /** Callbacks and replies queued or in flight. */
  readonly pending: number;
  /** Resolves when no callback or reply is pending (work queued meanwhile is awaited too). */
  idle(): Promise<void>;
  close(): Promise<void>;
}

interface Persona {
  name: LeadPersonaName;
  inboundUrl: string;
  profileName: string;
}

export async function startTwilioSimulator(opts: TwilioSimulatorOptions = {}): Promise<TwilioSimulator> {
  const accountSid = opts.accountSid ?? SIM_ACCOUNT_SID;
  const authToken = opts.authToken ?? SIM_AUTH_TOKEN;
  const senders = new Set(opts.senders ?? [SIM_WHATSAPP_SENDER]);
  const sender = [...senders][0] ?? SIM_WHATSAPP_SENDER;
  const incomingNumbers = opts.incomingNumbers ?? [...senders];
  const templates = new Map(Object.entries(opts.templates ?? { [SIM_TEMPLATE_SID]: SIM_TEMPLATE_BODY }));
  const now = opts.now ?? systemClock;
  const channelInstallSid = twilioSid('XE');
  const queue = new WebhookQueue(authToken);
  const messages: SimMessage[] = [];
  const requests: SimRequest[] = [];
  const personas = new Map<string, Persona>();
  const lastInbound = new Map<string, number>(); // `${sender}|${lead}` → ms
  const templatesSent = new Map<string, number>(); // lead → templates accepted, kept when `messages` is trimmed
  let sendFailures: { count: number; failure: SimSendFailure } = { count: 0, failure: { hangUp: true } };
  let deliveryFailures: { count: number; failure: SimDeliveryFailure } = { count: 0, failure: { errorCode: 0 } };

  const windowOpen = (from: string, to: string) =>
    now().getTime() - (lastInbound.get(`${from}|${to}`) ?? -Infinity) < WINDOW_MS;
  const inboundUrlFor = (url: string | undefined) => {
    const chosen = url ?? opts.inboundUrl;
    if (chosen === undefined)
      throw new Error('twilio simulator: no inboundUrl for the lead (setPersona/leadSays option or simulator option)');
    return chosen;
  };

  async function postInbound(
    lead: string,
    text: string,
    url: string,
    profileName: string,
    to = sender,
  ): Promise<SimWebhookDelivery> {
    lastInbound.set(`${to}|${lead}`, now().getTime());
    const sid = twilioSid('SM');
    // Field set and order of a captured WhatsApp inbound (Twilio's Messages API docs).
    return queue.post('inbound', url, {
      SmsMessageSid: sid,
      NumMedia: '0',
      ProfileName: profileName,
      MessageType: 'text',
      SmsSid: sid,
      WaId: lead.slice(1),
      SmsStatus: 'received',
      Body: text,
      To: `whatsapp:${to}`,
      NumSegments: '1',
      ReferralNumMedia: '0',
      MessageSid: sid,
      AccountSid: accountSid,
      From: `whatsapp:${lead}`,
      ApiVersion: '2010-04-01',
    });
  }

  async function report(message: SimMessage, status: string, error?: { code: number; message: string }): Promise<void> {
    const at = now();
    Object.assign(message.resource, { status, date_updated: rfc2822(at) });
    if (status === 'sent') message.resource.date_sent = rfc2822(at);
    if (error) Object.assign(message.resource, { error_code: error.code, error_message: error.message });
    message.statuses.push(status);
    if (message.statusCallback === undefined) return;
    const params: Record<string, string> = {
      ChannelPrefix: 'whatsapp',
      ApiVersion: '2010-04-01',
      MessageStatus: status,
      SmsSid: message.sid,
      SmsStatus: status,
      ChannelInstallSid: channelInstallSid,
      To: `whatsapp:${message.to}`,
      From: `whatsapp:${message.from}`,
      MessageSid: message.sid,
      StructuredMessage: 'false',
      AccountSid: accountSid,
      ChannelToAddress: message.to,
    };
    if (error) Object.assign(params, { ErrorCode: String(error.code), ErrorMessage: error.message });
    await queue.post('status', message.statusCallback, params);
  }

  /** Queues the message's life after the 201: statuses, then the persona's answer. */
  function play(message: SimMessage, answered: Promise<unknown>): void {
    let failure: SimDeliveryFailure | undefined;
    if (deliveryFailures.count > 0) {
      deliveryFailures.count -= 1;
      failure = deliveryFailures.failure;
    } else if (message.kind === 'text' && opts.enforceWindow !== false && !windowOpen(message.from, message.to)) {
      failure = { status: 'failed', errorCode: TWILIO_WINDOW_CLOSED, errorMessage: TWILIO_WINDOW_CLOSED_MESSAGE };
    }
    const key = message.to;
    const delay = opts.statusDelayMs ?? 0;
    // Callbacks never overtake the create response (Twilio cannot call back about a message it has not answered for).
    queue.enqueue(key, 0, async () => void (await answered));
    queue.enqueue(key, delay, () => report(message, 'queued'));
    if (failure) {
      const error = {
        code: failure.errorCode,
        message: failure.errorMessage ?? `Message failed with error ${failure.errorCode}.`,
      };
      if (failure.status === 'undelivered') queue.enqueue(key, delay, () => report(message, 'sent'));
      queue.enqueue(key, delay, () => report(message, failure.status ?? 'failed', error));
      return;
    }
    queue.enqueue(key, delay, () => report(message, 'sent'));
    queue.enqueue(key, delay, () => report(message, 'delivered'));
    const chosen = personas.has(message.to)
      ? undefined
      : opts.personaFor?.({ ...message, templatesSent: templatesSent.get(message.to) ?? 0 });
    const persona =
      personas.get(message.to) ??
      (chosen ? { ...chosen, profileName: chosen.profileName ?? 'Simulated Lead' } : undefined);
    const reply = persona && personaReply(persona.name, message.text);
    if (persona && reply) {
      queue.enqueue(
        key,
        opts.replyDelayMs ?? 0,
        async () => void (await postInbound(message.to, reply, persona.inboundUrl, persona.profileName, message.from)),
      );
    }
  }

  function createMessage(params: URLSearchParams, res: ServerResponse): [number, unknown] | 'hang-up' {
    if (sendFailures.count > 0) {
      sendFailures.count -= 1;
      const f = sendFailures.failure;
      if ('hangUp' in f) return 'hang-up';
      return [f.status, twilioErrorBody(f.status, f.code, f.message ?? injectedErrorMessage(f.code))];
    }
    const checked = checkSend(params, { senders, templates });
    if (!checked.ok) return [checked.error.status, checked.error];
    const send = checked.send;
    if (opts.windowError === 'rest' && send.kind === 'text' && !windowOpen(send.from, send.to)) {
      return [400, twilioErrorBody(400, TWILIO_WINDOW_CLOSED, TWILIO_WINDOW_CLOSED_MESSAGE)];
    }
    const sid = twilioSid('SM');
    const message: SimMessage = {
      ...send,
      sid,
      params: Object.fromEntries(params),
      resource: messageResource(accountSid, sid, send, now()),
      statuses: [],
    };
    messages.push(message);
    if (send.kind === 'template') templatesSent.set(send.to, (templatesSent.get(send.to) ?? 0) + 1);
    play(message, new Promise((resolve) => res.once('close', resolve)));
    return [201, structuredClone(message.resource)];
  }

  function route(
    req: IncomingMessage,
    path: string,
    params: URLSearchParams,
    query: URLSearchParams,
    res: ServerResponse,
  ): [number, unknown] | 'hang-up' {
    const m = /^\/2010-04-01\/Accounts\/([^/]+)\/Messages(?:\/([^/]+))?\.json$/.exec(path);
    const read = /^\/2010-04-01\/Accounts\/([^/.]+)(\/IncomingPhoneNumbers)?\.json$/.exec(path);
    const notFound: [number, TwilioErrorBody] = [
      404,
      twilioErrorBody(404, 20404, `The requested resource ${path} was not found`),
    ];
    if (!(m && (req.method === 'POST' || req.method === 'GET')) && !(read && req.method === 'GET')) return notFound;
    const [user, password] = basicCredentials(req.headers.authorization);
    if (user !== accountSid || password !== authToken) return [401, twilioErrorBody(401, 20003, 'Authenticate')];
    if (read) {
      if (decodeURIComponent(read[1]!) !== accountSid) return notFound;
      return [
        200,
        read[2]
          ? incomingNumbersPage(accountSid, incomingNumbers, query)
          : accountResource(accountSid, opts.accountStatus ?? 'active'),
      ];
    }
    if (!m || decodeURIComponent(m[1]!) !== accountSid) return notFound;
    if (req.method === 'POST' && m[2] === undefined) return createMessage(params, res);
    const found = req.method === 'GET' && m[2] !== undefined ? messages.find((x) => x.sid === m[2]) : undefined;
    return found ? [200, found.resource] : notFound;
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://sim.local');
      const path = url.pathname;
      // Like Twilio, only a form body carries parameters; anything else reads as an empty form.
      const isForm = (req.headers['content-type'] ?? '').toLowerCase().startsWith('application/x-www-form-urlencoded');
      const params = new URLSearchParams(isForm ? Buffer.concat(chunks).toString('utf8') : '');
      const entry: SimRequest = { method: req.method ?? 'GET', path, params: Object.fromEntries(params) };
      if (req.headers.authorization !== undefined) entry.authorization = req.headers.authorization;
      requests.push(entry);
      const answer = route(req, path, params, url.searchParams, res);
      if (answer === 'hang-up') return void req.socket.destroy();
      const [status, body] = answer;
      const text = JSON.stringify(body);
      const headers: Record<string, string | number> = {
        'content-type': 'application/json; charset=utf-8',
        'content-length': Buffer.byteLength(text),
        'twilio-request-id': twilioSid('RQ'),
      };
      if (status === 401) headers['www-authenticate'] = 'Basic realm="Twilio API"';
      res.writeHead(status, headers).end(text);
    });
  });
  await new Promise<void>((resolve) => server.listen(opts.port ?? 0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    sender,
    templateSid: [...templates.keys()][0] ?? SIM_TEMPLATE_SID,
    addTemplate: (contentSid, body) => void templates.set(contentSid, body),
    messages,
    requests,
    webhooks: queue.deliveries,
    setPersona: (phone, name, o = {}) =>
      void personas.set(phone, {
        name,
        inboundUrl: inboundUrlFor(o.inboundUrl),
        profileName: o.profileName ?? 'Simulated Lead',
      }),
    clearPersona: (phone) => void personas.delete(phone),
    leadSays: (phone, text, o = {}) => {
      const persona = personas.get(phone);
      return postInbound(
        phone,
        text,
        inboundUrlFor(o.inboundUrl ?? persona?.inboundUrl),
        o.profileName ?? persona?.profileName ?? 'Simulated Lead',
      );
    },
    openWindow: (phone, at = now()) => void lastInbound.set(`${sender}|${phone}`, at.getTime()),
    failNextSends: (count, failure) => void (sendFailures = { count, failure }),
    failNextDeliveries: (count, failure) => void (deliveryFailures = { count, failure }),
    get pending() {
      return queue.pending;
    },
    idle: () => queue.idle(),
    close: async () => {
      queue.close();
      await queue.idle();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
    },
  };
}

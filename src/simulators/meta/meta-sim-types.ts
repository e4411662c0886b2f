import type { IncomingHttpHeaders } from 'node:http';
import type { LeadPersonaName } from '../personas/lead-personas.ts';
import type { GraphErrorSpec, MetaSimTemplate } from './meta-sim-graph.ts';
import type { MetaSimDelivery, StatusError } from './meta-sim-webhooks.ts';

// The Meta simulator's public shapes and defaults (the server is in meta-simulator.ts).

export type { MetaSimDelivery, MetaSimTemplate, StatusError };

export const META_SIM = {
  phoneNumberId: '106540352242922',
  displayPhoneNumber: '15550783881',
  wabaId: '419561257915477',
  accessToken: 'meta-sim-access-token',
  appSecret: 'meta-sim-app-secret',
  version: 'v23.0',
  template: {
    name: 'lead_first_contact',
    language: 'en_US',
    body: 'Hi {{1}}, thanks for your enquiry! Could you answer a few quick questions here on WhatsApp?',
  },
} as const;

export interface MetaSimPhoneNumber {
  id: string;
  displayPhoneNumber: string;
  /** The business name Meta approved for the number. Default 'Simulated Business'. */
  verifiedName?: string;
  wabaId: string;
  /** The token that may send from this number; any other known token gets 100/33, an unknown one 401/190. */
  accessToken: string;
  /** Signs this number's webhooks. */
  appSecret: string;
  /** Where its status and message webhooks go (a persona's own URL takes precedence). */
  webhookUrl?: string;
  templates: MetaSimTemplate[];
}

/** A canned Graph error for `failNextSends`, or 'hang-up' to drop the connection unanswered. */
export type MetaSimFailure = GraphErrorSpec | 'hang-up';

export interface MetaSimulatorOptions {
  port?: number;
  /** Default: one number made of META_SIM's values. */
  phoneNumbers?: MetaSimPhoneNumber[];
  /** The simulator's clock (window rule, timestamps). Default: the system clock. */
  now?: () => Date;
  windowError?: 'sync' | 'async';
  /** Statuses posted for an accepted send, in order. Default sent, delivered, read. */
  statuses?: Array<'sent' | 'delivered' | 'read'>;
  /** Pause before each status and before a persona's reply. Default 0. */
  delays?: { statusMs?: number; replyMs?: number };
  /** Timeout of each webhook POST. Default 5000 ms. */
  webhookTimeoutMs?: number;
}

export interface MetaSimRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
  status?: number;
  response?: unknown;
}

export interface MetaSimSend {
  phoneNumberId: string;
  /** The recipient's wa_id (digits). */
  to: string;
  kind: 'text' | 'template';
  /** What the lead sees: the text, or the template's body with its parameters filled in. */
  text: string;
  wamid: string;
  body: unknown;
  at: Date;
}

export interface PersonaOptions {
  webhookUrl?: string /** Profile name in the webhook's contacts. Default 'Simulated Lead'. */;
  name?: string;
}

export interface MetaSimulator {
  /** `http://127.0.0.1:<port>` */
  url: string;
  /** `url` + `/v23.0`: the base URL for MetaWhatsAppClient. */
  graphBaseUrl: string;
  requests: MetaSimRequest[];
  /** Accepted sends only. */
  sends: MetaSimSend[];
  deliveries: MetaSimDelivery[];
  addPhoneNumber(number: MetaSimPhoneNumber): void;
  setWebhookUrl(phoneNumberId: string, url: string | undefined): void;
  /** The lead at `phone` (any format) answers every accepted send with `personaReply`; null removes it. */
  setPersona(phone: string, persona: LeadPersonaName | null, opts?: PersonaOptions): void;
  /** The lead writes (first or again): posts a signed message webhook and reopens the 24-hour window. */
  leadSays(
    phone: string,
    text: string,
    opts?: { phoneNumberId?: string; webhookUrl?: string; name?: string },
  ): Promise<MetaSimDelivery>;
  /**
   * Sends to `phone` reach the WhatsApp account `waId` and answer it as `contacts[0].wa_id` (as Meta
   * does for Mexican `521…` or Brazilian numbers without the ninth digit); null removes it.
   */
  setWaId(phone: string, waId: string | null): void;
  /** Marks the lead's last message as sent at `at` (default now) without a webhook. */
  openWindow(phone: string, at?: Date, phoneNumberId?: string): void;
  /** The next `count` sends answer this failure (after the route matched, before auth, like an outage). */
  failNextSends(count: number, failure: MetaSimFailure): void;
  /** Sends to `phone` are accepted, then fail by status webhook with this error (e.g. 131026); undefined clears. */
  failRecipient(phone: string, error: StatusError | undefined): void;
  /** Resolves once every queued status and persona reply has been posted. */
  idle(): Promise<void>;
  close(): Promise<void>;
}

import crypto from 'node:crypto';
import { META_SIGNATURE_HEADER, signMetaBody } from '../../whatsapp/meta/meta-signature.ts';
import { postToWebhook } from '../local-http-server.ts';

// Webhooks the Meta simulator posts: the real envelope (Meta's WhatsApp OpenAPI document WebhookPayload, examples "Text
// Message" and the messages/status reference), serialised and signed like Meta does it, plus
// the per-recipient ordering and the bookkeeping that lets tests await quiescence.

export interface SimBusinessNumber {
  id: string;
  displayPhoneNumber: string;
  wabaId: string;
  appSecret: string;
}

export interface MetaSimDelivery {
  kind: 'message' | 'status';
  /** Where it went; undefined when no webhook URL was configured for it (then it was not sent). */
  url: string | undefined;
  /** The exact bytes posted. */
  body: string;
  /** The `X-Hub-Signature-256` value. */
  signature: string;
  /** The receiver's HTTP status. Meta retries non-200 for days; the simulator records and moves on. */
  status?: number;
  responseText?: string;
  error?: string;
}

export interface StatusError {
  code: number;
  title: string;
  details: string;
}

const ERROR_CODES_URL = 'https://developers.facebook.com/docs/whatsapp/cloud-api/support/error-codes/';

function envelope(number: SimBusinessNumber, value: Record<string, unknown>): Record<string, unknown> {
  return {
    object: 'whatsapp_business_account',
    entry: [
      {
        id: number.wabaId,
        changes: [
          {
            value: {
              messaging_product: 'whatsapp',
              metadata: { display_phone_number: number.displayPhoneNumber, phone_number_id: number.id },
              ...value,
            },
            field: 'messages',
          },
        ],
      },
    ],
  };
}

const unix = (at: Date): string => String(Math.floor(at.getTime() / 1000));

export function messageWebhook(
  number: SimBusinessNumber,
  m: { from: string; name: string; wamid: string; text: string; at: Date },
): Record<string, unknown> {
  return envelope(number, {
    contacts: [{ profile: { name: m.name }, wa_id: m.from }],
    messages: [{ from: m.from, id: m.wamid, timestamp: unix(m.at), type: 'text', text: { body: m.text } }],
  });
}

export function statusWebhook(
  number: SimBusinessNumber,
  s: {
    wamid: string;
    status: 'sent' | 'delivered' | 'read' | 'failed';
    recipient: string;
    at: Date;
    category: 'utility' | 'service';
    error?: StatusError;
  },
): Record<string, unknown> {
  const status: Record<string, unknown> = {
    id: s.wamid,
    status: s.status,
    timestamp: unix(s.at),
    recipient_id: s.recipient,
  };
  if (s.status === 'failed' && s.error) {
    status.errors = [
      {
        code: s.error.code,
        title: s.error.title,
        message: s.error.title,
        error_data: { details: s.error.details },
        href: ERROR_CODES_URL,
      },
    ];
  }
  if (s.status === 'sent' || s.status === 'delivered') {
    // v23 still carries `conversation`; per-message pricing (PMP) applies since July 2025.
    // Simplification: Meta sends `pricing` on sent and one of delivered/read, we send it on both.
    status.pricing = { billable: s.category !== 'service', pricing_model: 'PMP', category: s.category };
  }
  return envelope(number, { statuses: [status] });
}

/**
 * JSON as Meta writes it: non-ASCII escaped as \uXXXX and `/` as `\/`, which is why receivers
 * must verify the raw bytes (re-serialising gives different ones).
 */
export function metaJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
    .replace(/\//g, '\\/');
}

/** Posts one signed delivery; never throws (the outcome is recorded on the delivery). */
export async function postWebhook(delivery: MetaSimDelivery, appSecret: string, timeoutMs: number): Promise<void> {
  if (delivery.url === undefined) {
    delivery.error = 'no webhook URL configured';
    return;
  }
  try {
    const res = await postToWebhook(
      delivery.url,
      {
        'content-type': 'application/json',
        'user-agent': 'facebookexternalua',
        [META_SIGNATURE_HEADER]: delivery.signature,
        // Graph's legacy SHA-1 header; receivers should ignore it (UNCONFIRMED that WhatsApp still sends it).
        'x-hub-signature': `sha1=${crypto.createHmac('sha1', appSecret).update(delivery.body).digest('hex')}`,
      },
      delivery.body,
      { timeoutMs },
    );
    delivery.status = res.status;
    delivery.responseText = res.text;
  } catch (err) {
    delivery.error = (err as Error).message;
  }
}

export function newDelivery(
  kind: MetaSimDelivery['kind'],
  url: string | undefined,
  appSecret: string,
  payload: unknown,
): MetaSimDelivery {
  const body = metaJson(payload);
  return { kind, url, body, signature: signMetaBody(appSecret, body) };
}

/**
 * Runs tasks in order per key (one recipient's statuses and replies stay ordered) and lets
 * callers await the moment nothing is left, including tasks queued while waiting.
 */
export class SerialQueues {
  readonly #tails = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();

  push(key: string, task: () => Promise<void>): void {
    const run = (this.#tails.get(key) ?? Promise.resolve()).then(task).catch(() => undefined);
    this.#tails.set(key, run);
    this.#pending.add(run);
    void run.finally(() => {
      this.#pending.delete(run);
      if (this.#tails.get(key) === run) this.#tails.delete(key);
    });
  }

  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }
}

/** A Meta-looking message id: `wamid.` + base64 of the wa_id and a random tail. */
export function newWamid(waId: string): string {
  const tail = crypto.randomBytes(9).toString('hex').toUpperCase();
  return `wamid.${Buffer.from(`${waId}\u0015\u0002\u0000\u0011\u0018\u0012${tail}`).toString('base64')}`;
}

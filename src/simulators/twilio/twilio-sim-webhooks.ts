import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { computeTwilioSignature, TWILIO_SIGNATURE_HEADER } from '../../whatsapp/twilio/twilio-signature.ts';
import { postToWebhook } from '../local-http-server.ts';

// Outgoing side of the Twilio simulator: signed form POSTs (status callbacks and inbound
// messages) the way Twilio makes them, queued per conversation so that one lead's callbacks
// and replies arrive in order, and tracked so that tests can await quiescence instead of sleeping.

export interface SimWebhookDelivery {
  kind: 'status' | 'inbound';
  url: string;
  params: Record<string, string>;
  /** The X-Twilio-Signature sent: the auth token's HMAC over `url` and `params`. */
  signature: string;
  /** The receiver's answer; `error` when it could not be reached. */
  httpStatus?: number;
  responseText?: string;
  error?: string;
}

export class WebhookQueue {
  readonly deliveries: SimWebhookDelivery[] = [];
  readonly #authToken: string;
  readonly #chains = new Map<string, Promise<void>>();
  readonly #pending = new Set<Promise<void>>();
  readonly #closing = new AbortController();

  constructor(authToken: string) {
    this.#authToken = authToken;
  }

  /** Tasks still queued or running. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Runs `task` after every task queued earlier under the same key. A failing task is recorded
   * by the task itself; the chain goes on.
   */
  enqueue(key: string, delayMs: number, task: () => Promise<void>): void {
    const previous = this.#chains.get(key) ?? Promise.resolve();
    const run = previous.then(async () => {
      if (this.#closing.signal.aborted) return;
      if (delayMs > 0) await sleep(delayMs, undefined, { signal: this.#closing.signal }).catch(() => undefined);
      if (!this.#closing.signal.aborted) await task();
    });
    const tracked = run
      .catch(() => undefined)
      .finally(() => {
        this.#pending.delete(tracked);
        if (this.#chains.get(key) === tracked) this.#chains.delete(key);
      });
    this.#pending.add(tracked);
    this.#chains.set(key, tracked);
  }

  /** Resolves once nothing is queued or running, including work queued while waiting. */
  async idle(): Promise<void> {
    while (this.#pending.size > 0) await Promise.all([...this.#pending]);
  }

  /** Posts a signed form and records the delivery; never throws. */
  async post(
    kind: SimWebhookDelivery['kind'],
    url: string,
    params: Record<string, string>,
  ): Promise<SimWebhookDelivery> {
    const signature = computeTwilioSignature(this.#authToken, url, params);
    const delivery: SimWebhookDelivery = { kind, url, params, signature };
    this.deliveries.push(delivery);
    try {
      const res = await postToWebhook(
        url,
        {
          'content-type': 'application/x-www-form-urlencoded; charset=utf-8',
          [TWILIO_SIGNATURE_HEADER]: signature,
          'i-twilio-idempotency-token': randomUUID(),
          'user-agent': 'TwilioProxy/1.1',
        },
        new URLSearchParams(params).toString(),
        {
          // Twilio gives up on a webhook after 15 seconds; so does the simulator, so idle() always ends.
          timeoutMs: 15_000,
          signal: this.#closing.signal,
        },
      );
      delivery.httpStatus = res.status;
      delivery.responseText = res.text;
    } catch (err) {
      delivery.error = (err as Error).message;
    }
    return delivery;
  }

  /** Drops queued work and aborts requests in flight. */
  close(): void {
    this.#closing.abort();
  }
}

import type { PgBoss } from 'pg-boss';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import { WEBHOOK_DELIVERY_QUEUE } from '../jobs/queues.ts';
import { countWebhookDelivery } from '../metrics/metrics.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { SecretBox } from '../workspaces/secret-box.ts';
import * as q from './webhook-delivery-queries.ts';
import { markEndpointFailed, markEndpointSucceeded } from './webhook-endpoint-queries.ts';
import { webhookBody } from './webhook-payload.ts';
import { sendWebhook, type SendOutcome } from './webhook-sender.ts';
import { signatureHeader } from './standard-webhooks-signature.ts';

/**
 * Seconds before each retry, each delay ±20 %: the Standard Webhooks (Svix) schedule, which ends
 * after about 27.6 hours, then two more attempts 20 and 24 hours apart, so that a receiver down
 * over a weekend still gets its events: 10 attempts over about three days.
 */
export const RETRY_SCHEDULE_SECONDS = [
  5,
  5 * 60,
  30 * 60,
  2 * 3600,
  5 * 3600,
  10 * 3600,
  10 * 3600,
  20 * 3600,
  24 * 3600,
] as const;
/** An endpoint whose every attempt failed for this long is disabled. */
export const DISABLE_AFTER_MS = 5 * 24 * 3600 * 1000;

export interface DeliveryServiceDeps {
  pool: Pool;
  boss: PgBoss;
  log: Logger;
  clock: Clock;
  secrets: SecretBox;
  timeoutMs: number;
  /** The operator's EGRESS_ALLOW_PRIVATE_NETWORKS (src/shared/egress-policy.ts). */
  allowPrivateNetworks: boolean;
  /** Tests shorten the schedule; production uses RETRY_SCHEDULE_SECONDS. */
  retryScheduleSeconds?: readonly number[];
  /** Tests fix the jitter (a factor in [0.8, 1.2)); production draws it. */
  jitter?: () => number;
}

export type AttemptResult = 'sent' | 'retrying' | 'failed' | 'waiting' | 'nothing' | 'early';

/** One webhook-delivery job: one attempt of one delivery, then its retry or its successor scheduled. */
export class WebhookDeliveryService {
  readonly #d: DeliveryServiceDeps;
  constructor(d: DeliveryServiceDeps) {
    this.#d = d;
  }

  async attempt(deliveryId: string): Promise<AttemptResult> {
    const d = this.#d;
    const claim = await q.claimDelivery(d.pool, deliveryId, d.clock(), d.timeoutMs + 20_000);
    // pg-boss retries the job later; by then the holder has finished or its lease has lapsed.
    if (claim.kind === 'leased') throw new Error(`webhook delivery ${deliveryId} is being attempted elsewhere`);
    if (claim.kind === 'early') {
      // Not due by this clock: `next_attempt_at` comes from the database's clock or another
      // process's, and this job must not end with the delivery pending and no job left for it.
      const seconds = (claim.dueAt.getTime() - d.clock().getTime()) / 1000;
      await withTransaction(d.pool, (tx) => this.#enqueue(tx, deliveryId, Math.max(1, seconds)));
      return 'early';
    }
    if (claim.kind !== 'claimed') return claim.kind;
    const delivery = claim.delivery;
    const body = webhookBody(delivery.event);
    const now = d.clock();
    const timestamp = Math.floor(now.getTime() / 1000);
    const secrets = [d.secrets.open(delivery.secretCiphertext, delivery.endpointId) as string];
    // During a rotation's overlap both secrets sign, so receivers still holding the old one verify.
    if (
      delivery.previousSecretCiphertext &&
      delivery.previousSecretExpiresAt &&
      delivery.previousSecretExpiresAt > now
    ) {
      secrets.push(d.secrets.open(delivery.previousSecretCiphertext, delivery.endpointId) as string);
    }
    const sent = await sendWebhook(
      {
        url: delivery.url,
        body,
        livemode: delivery.event.livemode,
        headers: {
          'webhook-id': delivery.event.messageId,
          'webhook-timestamp': String(timestamp),
          'webhook-signature': signatureHeader(secrets, delivery.event.messageId, timestamp, body),
        },
      },
      { timeoutMs: d.timeoutMs, allowPrivateNetworks: d.allowPrivateNetworks },
    );
    return this.#record(delivery, sent);
  }

  async #record(delivery: q.ClaimedDelivery, sent: SendOutcome): Promise<AttemptResult> {
    const d = this.#d;
    const now = d.clock();
    const schedule = d.retryScheduleSeconds ?? RETRY_SCHEDULE_SECONDS;
    const attemptNo = delivery.attempts + 1;
    const ok = sent.outcome === 'succeeded';
    const retryIn =
      !ok && attemptNo <= schedule.length ? schedule[attemptNo - 1]! * (d.jitter ?? defaultJitter)() : null;
    let disabled = false;
    await withTransaction(d.pool, async (tx) => {
      await q.insertAttempt(tx, {
        deliveryId: delivery.id,
        at: now,
        outcome: sent.outcome,
        statusCode: sent.statusCode,
        latencyMs: sent.latencyMs,
        reason: sent.reason,
      });
      if (ok) await markEndpointSucceeded(tx, delivery.endpointId);
      else
        disabled = await markEndpointFailed(tx, delivery.endpointId, now, new Date(now.getTime() - DISABLE_AFTER_MS));
      if (retryIn !== null) {
        await q.scheduleRetry(tx, delivery.id, new Date(now.getTime() + retryIn * 1000));
        await this.#enqueue(tx, delivery.id, retryIn);
      } else {
        await q.completeDelivery(tx, delivery.id, ok ? 'succeeded' : 'failed', now);
        // The next event of this lead for this endpoint waited for this one.
        const next = await q.nextInLine(tx, delivery.endpointId, delivery.leadId);
        if (next) await this.#enqueue(tx, next, 0);
      }
    });
    countWebhookDelivery(ok ? 'succeeded' : sent.outcome === 'refused' ? 'refused' : 'failed', delivery.event.livemode);
    const fields = {
      endpointId: delivery.endpointId,
      deliveryId: delivery.id,
      eventType: delivery.event.type,
      attempt: attemptNo,
      outcome: sent.outcome,
      statusCode: sent.statusCode,
      latencyMs: sent.latencyMs,
    };
    if (ok) d.log.info(fields, 'webhook delivered');
    else
      d.log.info(
        { ...fields, retryInSeconds: retryIn === null ? null : Math.round(retryIn) },
        'webhook attempt failed',
      );
    if (disabled)
      d.log.warn(
        { endpointId: delivery.endpointId },
        'webhook endpoint disabled: every delivery attempt failed for 5 days',
      );
    return ok ? 'sent' : retryIn === null ? 'failed' : 'retrying';
  }

  /** A job for the delivery, created in the caller's transaction (so it exists exactly when the change commits). */
  async #enqueue(tx: PoolClient, deliveryId: string, afterSeconds: number): Promise<void> {
    const db = { executeSql: (text: string, values?: unknown[]) => tx.query(text, values) };
    await this.#d.boss.send(
      WEBHOOK_DELIVERY_QUEUE,
      { deliveryId },
      { db, ...(afterSeconds > 0 ? { startAfter: Math.ceil(afterSeconds) } : {}) },
    );
  }
}

/** ±20 %: receivers that failed together are not all retried in the same second. */
const defaultJitter = () => 0.8 + Math.random() * 0.4;

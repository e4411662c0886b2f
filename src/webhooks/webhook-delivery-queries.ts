import type { Queryable } from '../db/pool.ts';
import type { Channel } from '../workspaces/workspace-queries.ts';

export interface ClaimedDelivery {
  id: string;
  endpointId: string;
  leadId: string;
  attempts: number;
  url: string;
  secretCiphertext: Buffer;
  previousSecretCiphertext: Buffer | null;
  previousSecretExpiresAt: Date | null;
  event: {
    messageId: string;
    type: string;
    livemode: boolean;
    at: Date;
    lead: Record<string, any>;
    detail: Record<string, any>;
    channel: Channel;
  };
}

export type ClaimResult =
  | { kind: 'claimed'; delivery: ClaimedDelivery }
  /** Done, or its endpoint is disabled: nothing to do for this job. */
  | { kind: 'nothing' }
  /** Pending but not due by this process's clock (a job started early, or clocks apart): run again at `dueAt`. */
  | { kind: 'early'; dueAt: Date }
  /** An earlier delivery of the same lead to the same endpoint is pending: it wakes this one when done. */
  | { kind: 'waiting' }
  /** Another attempt holds the lease (or a crashed one did): try again later. */
  | { kind: 'leased' };

/**
 * Takes the lease of a due delivery for one attempt. The lease outlives the send's timeout, so a
 * duplicate job cannot send the same delivery twice at once; a crashed attempt's lease lapses.
 */
export async function claimDelivery(db: Queryable, id: string, now: Date, leaseMs: number): Promise<ClaimResult> {
  const { rows } = await db.query(
    `WITH d AS (
       SELECT d.*, e.enabled, e.url, e.secret_ciphertext, e.previous_secret_ciphertext, e.previous_secret_expires_at,
              EXISTS (SELECT 1 FROM webhook_deliveries p WHERE p.endpoint_id = d.endpoint_id AND p.lead_id = d.lead_id
                        AND p.status = 'pending' AND p.id < d.id) AS blocked
         FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
        WHERE d.id = $1
     ), claimed AS (
       UPDATE webhook_deliveries w
       SET lease_until = $2::timestamptz + make_interval(secs => $3::double precision / 1000)
         FROM d WHERE w.id = d.id AND d.status = 'pending' AND d.enabled AND NOT d.blocked AND d.next_attempt_at <= $2
          AND (d.lease_until IS NULL OR d.lease_until <= $2)
       RETURNING w.id
     )
     SELECT d.*, (SELECT id FROM claimed) IS NOT NULL AS claimed,
     ev.message_id, ev.type, ev.livemode, ev.at, ev.lead, ev.detail, ws.channel
       FROM d JOIN webhook_events ev ON ev.id = d.event_id JOIN workspaces ws ON ws.id = ev.workspace_id`,
    [id, now, leaseMs],
  );
  const r = rows[0];
  if (r?.status !== 'pending' || !r.enabled) return { kind: 'nothing' };
  if (r.next_attempt_at > now) return { kind: 'early', dueAt: r.next_attempt_at };
  if (r.blocked) return { kind: 'waiting' };
  if (!r.claimed) return { kind: 'leased' };
  return {
    kind: 'claimed',
    delivery: {
      id: String(r.id),
      endpointId: r.endpoint_id,
      leadId: r.lead_id,
      attempts: r.attempts,
      url: r.url,
      secretCiphertext: r.secret_ciphertext,
      previousSecretCiphertext: r.previous_secret_ciphertext,
      previousSecretExpiresAt: r.previous_secret_expires_at,
      event: {
        messageId: r.message_id,
        type: r.type,
        livemode: r.livemode,
        at: r.at,
        lead: r.lead,
        detail: r.detail,
        channel: r.channel,
      },
    },
  };
}

export async function insertAttempt(
  db: Queryable,
  a: { deliveryId: string; at: Date; outcome: string; statusCode: number | null; latencyMs: number; reason: string },
): Promise<void> {
  // `response_excerpt` holds our own one-line reason (webhook-sender.ts), never the receiver's answer.
  await db.query(
    'INSERT INTO webhook_attempts (delivery_id, at, outcome, status_code, latency_ms, response_excerpt) ' +
      'VALUES ($1, $2, $3, $4, $5, $6)',
    [a.deliveryId, a.at, a.outcome, a.statusCode, a.latencyMs, a.reason],
  );
}

/** Ends a delivery (succeeded, or failed for good) and releases its lease. */
export async function completeDelivery(
  db: Queryable,
  id: string,
  status: 'succeeded' | 'failed',
  now: Date,
): Promise<void> {
  await db.query(
    'UPDATE webhook_deliveries SET status = $2, attempts = attempts + 1, completed_at = $3, lease_until = NULL ' +
      'WHERE id = $1',
    [id, status, now],
  );
}

export async function scheduleRetry(db: Queryable, id: string, at: Date): Promise<void> {
  await db.query(
    'UPDATE webhook_deliveries SET attempts = attempts + 1, next_attempt_at = $2, lease_until = NULL WHERE id = $1',
    [id, at],
  );
}

/** The next pending delivery of the same lead to the same endpoint, which waited for this one. */
export async function nextInLine(db: Queryable, endpointId: string, leadId: string): Promise<string | null> {
  const { rows } = await db.query(
    `SELECT id FROM webhook_deliveries WHERE endpoint_id = $1
      AND lead_id = $2 AND status = 'pending' ORDER BY id LIMIT 1`,
    [endpointId, leadId],
  );
  return rows[0] ? String(rows[0].id) : null;
}

/**
 * Makes failed deliveries of an endpoint (all, or one) pending again with a fresh retry schedule,
 * and queues them through the outbox in the same statement (a running relay hands them to the
 * job queue); returns how many.
 */
export async function reopenFailed(db: Queryable, endpointId: string, now: Date, deliveryId?: string): Promise<number> {
  const { rows } = await db.query(
    `WITH d AS (
       UPDATE webhook_deliveries SET status = 'pending', attempts = 0,
       next_attempt_at = $2, completed_at = NULL, lease_until = NULL
        WHERE endpoint_id = $1 AND status = 'failed' AND ($3::bigint IS NULL OR id = $3::bigint)
       RETURNING id
     ), o AS (
       INSERT INTO outbox (queue, payload) SELECT 'webhook-delivery',
       jsonb_build_object('deliveryId', id) FROM d ORDER BY id
     )
     SELECT count(*)::int AS n FROM d`,
    [endpointId, now, deliveryId ?? null],
  );
  return rows[0].n;
}

/** Queues the endpoint's pending deliveries again (after it is re-enabled), through the outbox. */
export async function requeuePending(db: Queryable, endpointId: string): Promise<void> {
  await db.query(
    `INSERT INTO outbox (queue, payload)
     SELECT 'webhook-delivery', jsonb_build_object('deliveryId', id) FROM webhook_deliveries
      WHERE endpoint_id = $1 AND status = 'pending' ORDER BY id`,
    [endpointId],
  );
}

export interface DeliveryLogRow {
  deliveryId: string;
  eventType: string;
  messageId: string;
  leadId: string;
  status: string;
  attempts: Array<{ at: string; outcome: string; statusCode: number | null; latencyMs: number; response: string }>;
}

/**
 * What the log says of an attempt: with a status, only the status (attempts recorded by earlier
 * versions kept the first KiB of the receiver's answer, which is not shown); without, our reason.
 */
const RESPONSE_LINE = `CASE WHEN a.status_code IS NULL
  THEN a.response_excerpt ELSE 'answered HTTP ' || a.status_code END`;

/** The endpoint's latest deliveries, newest first, each with its attempts. */
export async function deliveryLog(db: Queryable, endpointId: string, limit: number): Promise<DeliveryLogRow[]> {
  const { rows } = await db.query(
    `SELECT d.id, d.status, d.lead_id, ev.type, ev.message_id,
            COALESCE((SELECT jsonb_agg(jsonb_build_object('at', a.at, 'outcome', a.outcome, 'statusCode', a.status_code,
                                                          'latencyMs', a.latency_ms, 'response',
                                                          ${RESPONSE_LINE}) ORDER BY a.id)
                        FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]') AS attempts
       FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id
      WHERE d.endpoint_id = $1 ORDER BY d.id DESC LIMIT $2`,
    [endpointId, limit],
  );
  return rows.map((r) => ({
    deliveryId: String(r.id),
    eventType: r.type,
    messageId: r.message_id,
    leadId: r.lead_id,
    status: r.status,
    attempts: r.attempts,
  }));
}

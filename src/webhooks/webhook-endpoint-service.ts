import { randomUUID } from 'node:crypto';
import { withTransaction, type Pool } from '../db/pool.ts';
import type { Clock } from '../shared/clock.ts';
import { webhookUrlProblem, type EgressOptions } from '../shared/egress-policy.ts';
import type { SecretBox } from '../workspaces/secret-box.ts';
import { findLiveWorkspaceBySlug } from '../workspaces/workspace-queries.ts';
import * as dq from './webhook-delivery-queries.ts';
import * as eq from './webhook-endpoint-queries.ts';
import { WEBHOOK_EVENT_TYPES, type WebhookEventType } from './webhook-payload.ts';
import { newWebhookSecret } from './standard-webhooks-signature.ts';

/** A rotated-out secret keeps signing this long, so receivers can switch without missing a message. */
export const PREVIOUS_SECRET_VALID_MS = 24 * 3600 * 1000;

export interface EndpointView {
  id: string;
  url: string;
  eventTypes: string[];
  enabled: boolean;
  /** Why it was disabled, when it was (an endpoint failing every attempt for 5 days). */
  disabledReason: string | null;
  disabledAt: string | null;
  failingSince: string | null;
  createdAt: string;
}

export type EndpointError =
  | { error: 'no_workspace' }
  | { error: 'bad_url'; problem: string }
  | { error: 'bad_event_type'; type: string }
  | { error: 'no_endpoint' }
  | { error: 'too_many_endpoints'; max: number };

/**
 * Managing a workspace's endpoints: the operations behind `leadintake webhook …`, free of any
 * CLI or HTTP concern so an admin API can call the same ones.
 */
export class WebhookEndpointService {
  readonly #pool: Pool;
  readonly #secrets: SecretBox;
  readonly #clock: Clock;
  readonly #egress: EgressOptions;
  readonly #maxEndpoints: number;
  /**
   * `egress`: the operator's EGRESS_ALLOW_PRIVATE_NETWORKS; private and loopback URLs are refused without it.
   * `maxEndpoints`: MAX_WEBHOOK_ENDPOINTS_PER_WORKSPACE, enforced by `add`.
   */
  constructor(
    pool: Pool,
    secrets: SecretBox,
    clock: Clock,
    egress: EgressOptions = { allowPrivateNetworks: false },
    maxEndpoints = Infinity,
  ) {
    this.#pool = pool;
    this.#secrets = secrets;
    this.#clock = clock;
    this.#egress = egress;
    this.#maxEndpoints = maxEndpoints;
  }

  async add(
    slug: string,
    url: string,
    eventTypes: readonly string[],
  ): Promise<{ endpoint: EndpointView; secret: string } | EndpointError> {
    const problem = webhookUrlProblem(url, this.#egress);
    if (problem) return { error: 'bad_url', problem };
    const unknown = eventTypes.find((t) => !(WEBHOOK_EVENT_TYPES as readonly string[]).includes(t));
    if (unknown !== undefined) return { error: 'bad_event_type', type: unknown };
    const ws = await findLiveWorkspaceBySlug(this.#pool, slug);
    if (!ws) return { error: 'no_workspace' };
    const id = randomUUID();
    const secret = newWebhookSecret();
    // Counted under the workspace's lock: concurrent adds cannot pass the cap together.
    return withTransaction(this.#pool, async (tx) => {
      const max = this.#maxEndpoints;
      if ((await eq.lockAndCountEndpoints(tx, ws.id)) >= max) return { error: 'too_many_endpoints' as const, max };
      const secretCiphertext = this.#secrets.seal(secret, id);
      const row = await eq.insertEndpoint(tx, {
        id,
        workspaceId: ws.id,
        url,
        eventTypes: [...new Set(eventTypes)],
        secretCiphertext,
      });
      return { endpoint: view(row), secret };
    });
  }

  async list(slug: string): Promise<EndpointView[] | EndpointError> {
    const ws = await findLiveWorkspaceBySlug(this.#pool, slug);
    if (!ws) return { error: 'no_workspace' };
    return (await eq.listEndpoints(this.#pool, ws.id)).map(view);
  }

  async remove(endpointId: string): Promise<boolean> {
    return eq.deleteEndpoint(this.#pool, endpointId);
  }

  /** A new secret; the previous one keeps signing (both signatures are sent) for 24 hours. */
  async rotateSecret(endpointId: string): Promise<{ secret: string; previousValidUntil: string } | EndpointError> {
    const secret = newWebhookSecret();
    const until = new Date(this.#clock().getTime() + PREVIOUS_SECRET_VALID_MS);
    const done = await eq.rotateSecret(this.#pool, endpointId, this.#secrets.seal(secret, endpointId), until);
    return done ? { secret, previousValidUntil: until.toISOString() } : { error: 'no_endpoint' };
  }

  async deliveries(endpointId: string, limit: number): Promise<dq.DeliveryLogRow[] | EndpointError> {
    if (!(await eq.findEndpoint(this.#pool, endpointId))) return { error: 'no_endpoint' };
    return dq.deliveryLog(this.#pool, endpointId, limit);
  }

  /** Sends failed deliveries again (one, or all of the endpoint's); returns how many. */
  async replay(endpointId: string, deliveryId?: string): Promise<number | EndpointError> {
    if (!(await eq.findEndpoint(this.#pool, endpointId))) return { error: 'no_endpoint' };
    return dq.reopenFailed(this.#pool, endpointId, this.#clock(), deliveryId);
  }

  /** Re-enables an endpoint (disabled after 5 days of failures) and resumes its pending deliveries. */
  async enable(endpointId: string): Promise<boolean> {
    return withTransaction(this.#pool, async (tx) => {
      if (!(await eq.enableEndpoint(tx, endpointId))) return false;
      await dq.requeuePending(tx, endpointId);
      return true;
    });
  }
}

/** What the dashboard and the CLI say when the cap is reached. */
export const endpointLimitText = (max: number) =>
  `This workspace has ${max} webhook endpoints, the most this installation allows: remove one before adding another.`;

export const isEndpointError = (v: unknown): v is EndpointError =>
  typeof v === 'object' && v !== null && 'error' in v && !Array.isArray(v);

function view(r: eq.WebhookEndpointRow): EndpointView {
  return {
    id: r.id,
    url: r.url,
    eventTypes: r.eventTypes.length === 0 ? ['*'] : (r.eventTypes as WebhookEventType[]),
    enabled: r.enabled,
    disabledReason: r.disabledReason,
    disabledAt: r.disabledAt?.toISOString() ?? null,
    failingSince: r.failingSince?.toISOString() ?? null,
    createdAt: r.createdAt.toISOString(),
  };
}

import { z } from 'zod';
import { recordLeadEvent, transitionLead } from '../leads/lead-state.ts';
import { withTransaction, type Pool, type PoolClient } from '../db/pool.ts';
import { AppError } from '../shared/errors.ts';
import { REPAIRED_TEXT_EVENT, repairedTextData } from '../shared/storable-text.ts';
import type { Logger } from '../shared/logger.ts';
import { insertWebhookReceipt } from '../integration-log/webhook-receipt-queries.ts';
import { findLiveWorkspaceBySlug } from '../workspaces/workspace-queries.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { verifyCalcomSignature } from './calcom/calcom-signature.ts';
import { parseCalcomWebhook, type CalcomWebhookEvent } from './calcom/calcom-webhook-payload.ts';
import * as q from './booking-webhook-queries.ts';

export type CalcomWebhookOutcome =
  | { kind: 'applied'; leadId: string }
  | { kind: 'duplicate' }
  | { kind: 'ignored'; reason: 'unknown booking' | 'unsupported event' };

export interface CalcomWebhookDeps {
  pool: Pool;
  log: Logger;
  workspaces: WorkspaceService;
}

const PROVIDER = 'calcom';
// Same rule as the workspaces table; anything else cannot name a workspace.
const slugSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{0,62}$/);

/** Cal.com deliveries for one workspace: authenticate, dedupe, apply to the lead (no HTTP here). */
export class CalcomWebhookService {
  readonly #deps: CalcomWebhookDeps;

  constructor(deps: CalcomWebhookDeps) {
    this.#deps = deps;
  }

  /** `log`: the request's logger, so these lines carry its request id. */
  async receive(
    slug: string,
    rawBody: Buffer,
    signature: string | undefined,
    log: Logger = this.#deps.log,
  ): Promise<CalcomWebhookOutcome> {
    const { workspaceId, secret } = await this.#secretFor(slug);
    // Nothing is parsed, read or written for a delivery that Cal.com did not sign.
    if (!verifyCalcomSignature(secret, rawBody, signature)) {
      log.warn({ workspaceId }, 'calcom webhook signature rejected');
      throw new AppError('webhook_signature_invalid');
    }
    const event = parseCalcomWebhook(rawBody);
    const outcome =
      event.kind === 'unsupported'
        ? ({ kind: 'ignored', reason: 'unsupported event' } as const)
        : await withTransaction(this.#deps.pool, (tx) => this.#apply(tx, workspaceId, event));
    log.info(
      {
        workspaceId,
        trigger: event.trigger,
        outcome: outcome.kind,
        ...('leadId' in outcome ? { leadId: outcome.leadId } : {}),
      },
      'calcom webhook',
    );
    return outcome;
  }

  async #secretFor(slug: string): Promise<{ workspaceId: string; secret: string }> {
    if (!slugSchema.safeParse(slug).success) throw new AppError('workspace_not_found');
    const workspace = await findLiveWorkspaceBySlug(this.#deps.pool, slug);
    if (!workspace) throw new AppError('workspace_not_found');
    const scheduling = this.#deps.workspaces.settingsOf(workspace).scheduling;
    // Without a secret every delivery would be unauthenticated: the endpoint does not exist then.
    if (scheduling?.provider !== 'calcom' || !scheduling.webhookSecret) throw new AppError('workspace_not_found');
    return { workspaceId: workspace.id, secret: scheduling.webhookSecret };
  }

  // The lead is locked first, then the receipt is inserted: a duplicate returns before any
  // change, and the receipt commits together with the change and its timeline entry.
  async #apply(
    tx: PoolClient,
    workspaceId: string,
    event: Exclude<CalcomWebhookEvent, { kind: 'unsupported' }>,
  ): Promise<CalcomWebhookOutcome> {
    const lead = await findLead(tx, workspaceId, event);
    const fresh = await insertWebhookReceipt(tx, {
      provider: PROVIDER,
      workspaceId,
      dedupeKey: event.dedupeKey,
      leadId: lead?.id ?? null,
      type: event.trigger,
    });
    if (!fresh) return { kind: 'duplicate' };
    if (!lead) return { kind: 'ignored', reason: 'unknown booking' };
    if (event.kind === 'rescheduled') {
      await q.moveBooking(tx, lead.id, event.bookingUid, event.bookingStart);
      await recordLeadEvent(tx, lead.id, 'booking.rescheduled', {
        bookingUid: event.bookingUid,
        bookingStart: event.bookingStart.toISOString(),
        previousBookingUid: lead.bookingUid,
        previousBookingStart: lead.bookingStart?.toISOString() ?? null,
        actor: 'system',
      });
    } else if (event.kind === 'cancelled') {
      // A rejection ends the booking as a cancellation does, so it is recorded as one (an operator
      // follows up, lead.booking_changed goes out); its reason says the host rejected it.
      const reason = event.rejected ? `Rejected by the host${event.reason ? `: ${event.reason}` : ''}` : event.reason;
      const data = { bookingUid: event.bookingUid, reason };
      const moved = await transitionLead(tx, {
        leadId: lead.id,
        to: 'needs_human',
        actor: 'system',
        event: { type: 'booking.cancelled', data },
      });
      // Already with an operator (or closed as unqualified): the cancellation is still on record.
      if (!moved.ok)
        await recordLeadEvent(tx, lead.id, 'booking.cancelled', { ...data, status: lead.status, actor: 'system' });
    } else {
      await recordLeadEvent(tx, lead.id, 'booking.webhook', { trigger: event.trigger, bookingUid: event.bookingUid });
    }
    if (event.textRepaired)
      await recordLeadEvent(
        tx,
        lead.id,
        REPAIRED_TEXT_EVENT,
        repairedTextData(PROVIDER, event.trigger, { bookingUid: event.bookingUid }),
      );
    return { kind: 'applied', leadId: lead.id };
  }
}

function findLead(
  tx: PoolClient,
  workspaceId: string,
  event: Exclude<CalcomWebhookEvent, { kind: 'unsupported' }>,
): Promise<q.BookedLead | null> {
  switch (event.kind) {
    case 'cancelled':
      return q.lockLeadByBookingUid(tx, workspaceId, event.bookingUid);
    case 'rescheduled':
      return lockRescheduled(tx, workspaceId, event);
    case 'other':
      return q.findLeadForBooking(tx, workspaceId, event.bookingUid, event.leadId);
  }
}

async function lockRescheduled(
  tx: PoolClient,
  workspaceId: string,
  event: Extract<CalcomWebhookEvent, { kind: 'rescheduled' }>,
): Promise<q.BookedLead | null> {
  const byUid = event.previousBookingUid
    ? await q.lockLeadByBookingUid(tx, workspaceId, event.previousBookingUid)
    : null;
  if (byUid || !event.leadId) return byUid;
  return q.lockUnbookedLead(tx, workspaceId, event.leadId);
}

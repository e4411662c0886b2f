import type { Queryable } from '../db/pool.ts';
import { StatementBatcher } from '../db/statement-batcher.ts';
import { allowedFrom, type Actor, type LeadStatus } from '../leads/lead-state.ts';
import { countLeadTransition } from '../metrics/metrics.ts';
import type * as m from './message-queries.ts';

// Delivery statuses of our outbound messages (provider callbacks), applied the same way whether
// they arrive after the send was recorded (the usual case) or before it: a provider may call back
// before our commit, and such a status waits in whatsapp_early_statuses until the send is
// recorded. The send's recording and the callbacks about the same message are serialised by the
// message's advisory lock, which both take first: a callback either sees the recorded send or is
// held and found by the recording, never neither. Both are one statement each, functions of
// migrations/022 (why: docs/decisions/0004-record-sends-by-set.md); the statuses a process receives
// together are applied by one statement. A status reaches only the messages of the workspace and
// mode it was received for, and held ones only that workspace's sends (migrations/032).

export interface DeliveryStatus {
  status: 'queued' | 'sent' | 'delivered' | 'read' | 'failed' | 'undelivered';
  errorCode?: string | undefined;
  errorMessage?: string | undefined;
}

/** One status callback's event, as the batch applies it. */
export interface StatusItem extends DeliveryStatus {
  /**
   * The workspace and mode (live or sandbox) whose signature the callback carried: only a message
   * of theirs is looked at, whatever the provider id or key names.
   */
  workspaceId: string;
  livemode: boolean;
  provider: m.Provider;
  providerMessageId: string;
  /** Our idempotency key when the callback carries it (Twilio's StatusCallback URL does). */
  key: string | null;
  /** The timeline entry that says the provider's text had to be repaired to be stored, if it had. */
  repaired: { type: string; data: Record<string, unknown> } | null;
}

/**
 * held: no message of the workspace has this id yet; kept until the send is recorded. unknown: the
 * status names a key of ours, or a provider id another message has, but no message of the
 * workspace and mode; nothing was written.
 */
export type StatusOutcome =
  | { kind: 'applied'; leadId: string }
  | { kind: 'held' }
  | { kind: 'stale' }
  | { kind: 'unknown' };

// A failed delivery hands the lead to a person: the statuses the system may do that from.
const escalateFrom = () => allowedFrom('system', 'needs_human');

interface StatusRow {
  r_ord: number;
  r_outcome: StatusOutcome['kind'];
  r_lead_id: string | null;
  r_moved_from: LeadStatus | null;
}

/** Applies statuses, those submitted together in one statement (migrations/044's whatsapp_apply_statuses). */
export class DeliveryStatuses {
  readonly #batch: StatementBatcher<StatusItem, StatusOutcome>;

  constructor(db: Queryable) {
    this.#batch = new StatementBatcher({
      run: async (items) => {
        const { rows } = await db.query<StatusRow>({
          name: 'delivery-apply-statuses',
          text: 'SELECT r_ord, r_outcome, r_lead_id, r_moved_from FROM whatsapp_apply_statuses($1::jsonb, $2::text[])',
          values: [JSON.stringify(items.map(wireItem)), escalateFrom()],
        });
        const out = new Array<StatusOutcome>(items.length);
        for (const r of rows) {
          if (r.r_moved_from) countLeadTransition(r.r_moved_from, 'needs_human');
          out[r.r_ord - 1] =
            r.r_outcome === 'applied' ? { kind: 'applied', leadId: r.r_lead_id! } : { kind: r.r_outcome };
        }
        return out;
      },
    });
  }

  apply(item: StatusItem): Promise<StatusOutcome> {
    return this.#batch.submit(item);
  }
}

function wireItem(s: StatusItem) {
  return {
    workspaceId: s.workspaceId,
    livemode: s.livemode,
    provider: s.provider,
    providerMessageId: s.providerMessageId,
    key: s.key,
    status: s.status,
    errorCode: s.errorCode ?? null,
    errorMessage: s.errorMessage ?? null,
    repairedType: s.repaired?.type ?? null,
    repairedData: s.repaired?.data ?? null,
  };
}

/** A send the provider accepted, as its recording takes it. */
export interface AcceptedSend {
  provider: m.Provider;
  providerMessageId: string;
  messageId: number;
  turnId: number;
  leadId: string;
  /** Who the lead's move into its conversation is by. */
  actor: Actor;
  /** The `message.sent` timeline entry's data. */
  data: Record<string, unknown>;
}

/**
 * The provider accepted our message: the message and its turn are sent, the lead moves into its
 * conversation (by `actor`), the timeline gets `message.sent` with `data`, and statuses that
 * arrived first are applied — one statement, under the message's lock (a batch of one for
 * whatsapp_record_sends). Returns the status the lead moved from (null when it did not move).
 */
export async function recordAcceptedSend(db: Queryable, s: AcceptedSend): Promise<LeadStatus | null> {
  return (await recordAcceptedSends(db, [s]))[0] ?? null;
}

/**
 * Several accepted sends recorded as recordAcceptedSend records each, in one statement and one
 * transaction (migrations/043's whatsapp_record_sends, which takes every lock up front in the
 * order all callers use). Results in the order given.
 */
export async function recordAcceptedSends(db: Queryable, sends: AcceptedSend[]): Promise<(LeadStatus | null)[]> {
  const items = sends.map((s) => ({
    provider: s.provider,
    providerMessageId: s.providerMessageId,
    messageId: s.messageId,
    turnId: s.turnId,
    leadId: s.leadId,
    actor: s.actor,
    from: allowedFrom(s.actor, 'in_conversation'),
    data: s.data,
  }));
  const { rows } = await db.query<RecordRow & { r_ord: number }>({
    name: 'delivery-record-sends',
    text: 'SELECT r_ord, r_moved_from, r_escalated_from FROM whatsapp_record_sends($1::jsonb, $2::text[])',
    values: [JSON.stringify(items), escalateFrom()],
  });
  const out = new Array<LeadStatus | null>(sends.length).fill(null);
  for (const r of rows) out[r.r_ord - 1] = counted(r);
  return out;
}

/**
 * Records each accepted send of a batch of first contacts on `db` as soon as it is given, not
 * when its slowest sibling's provider call returns: a worker killed mid-batch then sends again
 * only what was truly in flight (a send the provider accepted but we had not recorded is sent
 * twice). Sends given while a recording runs go together in the next statement, so a batch
 * whose answers come back together is still recorded by few statements.
 */
export function sendRecorder(db: Queryable): (s: AcceptedSend) => Promise<LeadStatus | null> {
  const batch = new StatementBatcher<AcceptedSend, LeadStatus | null>({
    run: (sends) => recordAcceptedSends(db, sends),
  });
  return (s) => batch.submit(s);
}

interface RecordRow {
  r_moved_from: LeadStatus | null;
  r_escalated_from: LeadStatus | null;
}

/** Counts the recording's lead transitions in the metrics; returns the status the lead moved from. */
function counted(r: RecordRow | undefined): LeadStatus | null {
  const from = r?.r_moved_from ?? null;
  if (from) countLeadTransition(from, 'in_conversation');
  if (r?.r_escalated_from) countLeadTransition(r.r_escalated_from, 'needs_human');
  return from;
}

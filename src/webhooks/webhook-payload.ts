import { leadResponse, voiceCallView } from '../leads/lead-view.ts';
import type { ClaimedDelivery } from './webhook-delivery-queries.ts';

export const WEBHOOK_EVENT_TYPES = [
  'lead.created',
  'lead.status_changed',
  'lead.booking_changed',
  'call.ended',
  'message.received',
  'message.sent',
  'contact.attempted',
  'contact.plan_ended',
] as const;
export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

const iso = (v: unknown): string | null => (v == null ? null : new Date(v as string).toISOString());

/**
 * The JSON body of one event (docs/OUTBOUND-WEBHOOKS.md). `lead` is exactly the `lead` of
 * GET /api/public/leads/:id, built by the same function from the lead row as it was when the
 * event happened. Deterministic: every retry sends the same bytes.
 */
export function webhookBody(e: ClaimedDelivery['event']): string {
  const lead = leadResponse({ lead: e.lead, call: null }, e.channel).lead;
  return JSON.stringify({ type: e.type, timestamp: iso(e.at), livemode: e.livemode, data: { lead, ...eventData(e) } });
}

function eventData(e: ClaimedDelivery['event']): Record<string, unknown> {
  const d = e.detail;
  switch (e.type) {
    case 'lead.status_changed':
      return {
        previousStatus: d.from,
        status: d.to,
        qualificationNotes: e.lead.qualification_notes ?? null,
        bookingUid: e.lead.booking_uid ?? null,
        bookingStart: iso(e.lead.booking_start),
        // A booking by the agent says whom it booked (name and e-mail).
        ...(d.attendee ? { attendee: d.attendee } : {}),
      };
    case 'lead.booking_changed':
      return d.bookingStart !== undefined
        ? {
            change: 'rescheduled',
            bookingUid: d.bookingUid ?? null,
            bookingStart: d.bookingStart ?? null,
            previousBookingUid: d.previousBookingUid ?? null,
            previousBookingStart: d.previousBookingStart ?? null,
          }
        : { change: 'cancelled', bookingUid: d.bookingUid ?? null, reason: d.reason ?? null };
    case 'call.ended':
      return { voiceCall: d.call ? voiceCallView(d.call) : null };
    case 'message.received':
    case 'message.sent': {
      const m = d.message as Record<string, any> | null;
      return {
        message: m
          ? {
              id: String(m.id),
              direction: m.direction,
              provider: m.provider,
              kind: m.kind,
              text: m.body,
              status: m.status,
              createdAt: iso(m.created_at),
            }
          : null,
      };
    }
    case 'contact.attempted':
      // Only the documented fields: a channel's own extras on the timeline entry stay internal.
      return { channel: d.channel, attempt: d.attempt, kind: d.kind, outcome: d.outcome };
    case 'contact.plan_ended': {
      const c = d.cancelled as { kind: string; at: string } | undefined;
      return {
        reason: d.reason,
        attempts: d.attempts,
        cancelledAttempt: c ? { kind: c.kind, at: iso(c.at) } : null,
      };
    }
    default:
      return {};
  }
}

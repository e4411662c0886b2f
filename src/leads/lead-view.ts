import type { Channel } from '../workspaces/workspace-queries.ts';
import type { LeadWithCall } from './lead-queries.ts';

const iso = (v: Date | string | null | undefined): string | null => (v == null ? null : new Date(v).toISOString());

/** The body of GET /api/public/leads/:id (spec 2.4, 2.5); absent optional fields are null. */
export function leadResponse(found: LeadWithCall, channel: Channel) {
  const l = found.lead;
  const c = found.call;
  return {
    ok: true,
    lead: {
      id: l.id,
      channel,
      name: l.name,
      phone: l.phone,
      email: l.email,
      goal: l.goal,
      status: l.status,
      qualificationNotes: l.qualification_notes,
      bookingUid: l.booking_uid,
      bookingStart: iso(l.booking_start),
      metadata: l.metadata,
      formResponses: l.form_responses,
      createdAt: iso(l.created_at),
      updatedAt: iso(l.updated_at),
    },
    voiceCall:
      channel === 'voice' && c
        ? {
            providerCallId: c.provider_call_id,
            status: c.status,
            startedAt: iso(c.started_at),
            endedAt: iso(c.ended_at),
            durationSeconds: c.duration_seconds,
            summary: c.summary,
            transcript: c.transcript,
            recordingUrl: c.recording_url,
            endedReason: c.ended_reason,
          }
        : null,
  };
}

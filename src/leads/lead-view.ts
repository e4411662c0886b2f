import type { Channel } from '../workspaces/workspace-queries.ts';
import type { LeadRead } from './public-api-schemas.ts';
import type { LeadWithCall } from './lead-queries.ts';

const iso = (v: Date | string | null | undefined): string | null => (v == null ? null : new Date(v).toISOString());

/** The body of GET /api/public/leads/:id (docs/API.md, Reading a lead); absent optional fields are null. */
export function leadResponse(found: LeadWithCall, channel: Channel): LeadRead {
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
      createdAt: new Date(l.created_at).toISOString(),
      updatedAt: new Date(l.updated_at).toISOString(),
      // An addition where the spec is silent (docs/API.md): false for a sandbox lead.
      livemode: l.livemode !== false,
    },
    voiceCall: channel === 'voice' && c ? voiceCallView(c) : null,
  };
}

/** A call session row as the API's `voiceCall` (also the operators' latest call, lead-details.ts). */
export function voiceCallView(c: Record<string, any>): NonNullable<LeadRead['voiceCall']> {
  return {
    providerCallId: c.provider_call_id,
    status: c.status,
    startedAt: iso(c.started_at),
    endedAt: iso(c.ended_at),
    durationSeconds: c.duration_seconds,
    summary: c.summary,
    transcript: c.transcript,
    recordingUrl: c.recording_url,
    endedReason: c.ended_reason,
  };
}

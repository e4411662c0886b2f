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
    voiceCall: channel === 'voice' && c ? leadVoiceCall(c, found.nextCallAt ?? null) : null,
  };
}

/**
 * GET's `voiceCall`: the latest call session, unless it has ended and the lead's contact plan calls
 * again (docs/API.md, "Reading a lead"). Then it is that next call, `scheduled` at `scheduledAt`,
 * with no session fields yet: `ended` stays final for a client that polls by the spec.
 */
function leadVoiceCall(c: Record<string, any>, nextCallAt: Date | string | null): NonNullable<LeadRead['voiceCall']> {
  if (c.status !== 'ended' || nextCallAt === null) return voiceCallView(c);
  return {
    providerCallId: null,
    status: 'scheduled',
    startedAt: null,
    endedAt: null,
    durationSeconds: null,
    summary: null,
    transcript: null,
    recordingUrl: null,
    endedReason: null,
    scheduledAt: iso(nextCallAt)!,
  };
}

/** One call session as the API shows it (no `scheduledAt`: that is only on a call not placed yet). */
export interface CallSessionView {
  providerCallId: string;
  status: NonNullable<LeadRead['voiceCall']>['status'];
  startedAt: string | null;
  endedAt: string | null;
  durationSeconds: number | null;
  summary: string | null;
  transcript: string | null;
  recordingUrl: string | null;
  endedReason: string | null;
}

/**
 * A call session row as the API's `voiceCall` (also the operators' calls, lead-details.ts and the
 * lead page, and the `call.ended` webhook: exactly GET's `voiceCall` of an ended call).
 */
export function voiceCallView(c: Record<string, any>): CallSessionView {
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

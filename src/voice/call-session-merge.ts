import type { CallReport } from './vapi/vapi-message.ts';

// How server messages change a call session, as pure functions. Vapi's deliveries can repeat and
// arrive out of order (the report before the last status update), so the rules make the final
// state the same whatever the order:
// - the status only moves forward (queued → ringing → in-progress → forwarding → ended);
// - a status update fills a field only while it is empty;
// - the end-of-call-report, the authoritative account, sets every field it carries;
// - the duration is the report's when given, else derived from the timestamps, and recomputed
//   whenever a timestamp arrives later.

export interface SessionState {
  status: string;
  startedAt: Date | null;
  endedAt: Date | null;
  durationSeconds: number | null;
  summary: string | null;
  transcript: string | null;
  recordingUrl: string | null;
  endedReason: string | null;
  reportReceivedAt: Date | null;
}

export interface StatusUpdate {
  status: string;
  endedReason: string | null;
  /** The message's timestamp. */
  at: Date | null;
  /** `call.startedAt` / `call.endedAt` of the message's call object. */
  callStartedAt: Date | null;
  callEndedAt: Date | null;
}

// Vapi's Call.status values in call order; `not-found` and `deletion-failed` describe the
// record, not the call, and change nothing.
export const VAPI_CALL_STATUSES = ['scheduled', 'queued', 'ringing', 'in-progress', 'forwarding', 'ended'] as const;
const ORDER: readonly string[] = VAPI_CALL_STATUSES;

export function statusRank(status: string): number {
  return ORDER.indexOf(status);
}

export function mergeStatusUpdate(s: SessionState, u: StatusUpdate): SessionState {
  const rank = statusRank(u.status);
  const status = rank > statusRank(s.status) ? u.status : s.status;
  const startedAt = s.startedAt ?? u.callStartedAt ?? (u.status === 'in-progress' ? u.at : null);
  const endedAt = s.endedAt ?? (u.status === 'ended' ? (u.callEndedAt ?? u.at) : null);
  const endedReason = s.endedReason ?? (u.status === 'ended' ? u.endedReason : null);
  // A report's duration (or one derived from its timestamps) is never replaced by a status update.
  const durationSeconds =
    s.reportReceivedAt && s.durationSeconds !== null ? s.durationSeconds : derivedDuration(startedAt, endedAt);
  return { ...s, status, startedAt, endedAt, endedReason, durationSeconds };
}

export function mergeReport(s: SessionState, r: CallReport, receivedAt: Date): SessionState {
  const startedAt = r.startedAt ?? s.startedAt;
  const endedAt = r.endedAt ?? s.endedAt;
  return {
    status: 'ended',
    startedAt,
    endedAt,
    durationSeconds: r.durationSeconds ?? derivedDuration(startedAt, endedAt),
    summary: r.summary ?? s.summary,
    transcript: r.transcript ?? s.transcript,
    recordingUrl: r.recordingUrl ?? s.recordingUrl,
    endedReason: r.endedReason ?? s.endedReason,
    reportReceivedAt: receivedAt,
  };
}

/** Whole seconds between the two instants (never negative); null unless both are known. */
export function derivedDuration(startedAt: Date | null, endedAt: Date | null): number | null {
  if (!startedAt || !endedAt) return null;
  return Math.max(0, Math.round((endedAt.getTime() - startedAt.getTime()) / 1000));
}

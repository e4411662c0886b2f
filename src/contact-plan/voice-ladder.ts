import { agentFromColumn } from '../workspaces/agent-config.ts';
import { type ContactPlanSettings, contactPlanOf } from '../workspaces/contact-plan-config.ts';
import type { AttemptContext } from './contact-plan-queries.ts';
import { planDelayMs, workspaceTimeZone } from './contact-plan-service.ts';
import { type CallingWindow, nextCallingDayAt, nextOpening, windowZones } from './lead-clock.ts';

// The voice retry ladder (docs/VOICE.md, "Calling again"), as a pure function: after a call that
// did not reach the lead, when to call next, or that the plan has run out. The calling window
// itself is applied again by ContactPlanService when the step falls due.

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** How the last call went, among the outcomes that are tried again. */
export type RetryOutcome = 'no_answer' | 'busy' | 'voicemail' | 'failed';

export interface VoiceHistory {
  /** Attempts counted so far, the one that just ended included. */
  attempts: number;
  /** When each of the lead's calls was made (older ones are ignored). */
  callTimes: Date[];
  lastOutcome: RetryOutcome;
}

export type VoiceNextStep = { kind: 'call'; at: Date; reason: string } | { kind: 'exhausted'; detail?: string };

const SAID: Record<RetryOutcome, string> = {
  no_answer: 'no answer',
  busy: 'line busy or call declined',
  voicemail: 'voicemail',
  failed: 'the call could not be placed',
};

export function nextVoiceStep(i: {
  voice: ContactPlanSettings['voice'];
  window: CallingWindow;
  zones: string[];
  history: VoiceHistory;
  now: Date;
  /** false: a sandbox lead, whose delays run 60× faster (planDelayMs). */
  livemode: boolean;
}): VoiceNextStep {
  const { voice, history, now, livemode } = i;
  if (history.attempts >= voice.maxAttempts) return { kind: 'exhausted' };
  const said = SAID[history.lastOutcome];
  const after = (ms: number) => new Date(now.getTime() + planDelayMs(ms, livemode));
  let at: Date | null;
  let reason: string;
  const ladderMinutes = voice.retryAfterMinutes[history.attempts - 1];
  if (ladderMinutes !== undefined) {
    // A busy line or a declined call is never called straight back.
    const minutes =
      history.lastOutcome === 'busy' ? Math.max(ladderMinutes, voice.busyRetryAfterMinutes) : ladderMinutes;
    at = after(minutes * MINUTE_MS);
    reason = `${said}: call again in ${minutes} min`;
  } else {
    const nextDay = nextCallingDayAt(now, voice.nextDayAt, i.window, i.zones);
    at = nextDay && (livemode ? nextDay : after(nextDay.getTime() - now.getTime()));
    reason = `${said}: call again on the next calling day at ${voice.nextDayAt}`;
  }
  if (!at) return { kind: 'exhausted', detail: 'no calling window' };

  // At most maxAttemptsPer24h calls in any 24 hours: wait until the oldest that would be one too
  // many is a day old, then for the window to open.
  const day = planDelayMs(DAY_MS, livemode);
  const recent = history.callTimes.map((t) => t.getTime()).sort((a, b) => b - a);
  const oldestCounted = recent[voice.maxAttemptsPer24h - 1];
  if (oldestCounted !== undefined && oldestCounted + day > at.getTime()) {
    const allowed = new Date(oldestCounted + day);
    at = livemode ? nextOpening(allowed, i.window, i.zones) : allowed;
    if (!at) return { kind: 'exhausted', detail: 'no calling window' };
    reason = `${said}: at most ${voice.maxAttemptsPer24h} calls in 24 hours`;
  }
  return { kind: 'call', at, reason };
}

/**
 * The voicemail message of the next call: the workspace's text (its placeholders filled) unless a
 * message was left in the last 24 hours or the workspace has none; null then (hang up on a machine).
 */
export function voicemailMessageFor(i: {
  voice: ContactPlanSettings['voice'];
  voicemailLeftAt: Date | null;
  now: Date;
  livemode: boolean;
  vars: { leadFirstName: string; agentName: string; businessName: string };
}): string | null {
  const text = i.voice.voicemailMessage;
  if (text === null) return null;
  if (i.voicemailLeftAt && i.voicemailLeftAt.getTime() + planDelayMs(DAY_MS, i.livemode) > i.now.getTime()) return null;
  return text.replace(
    /\{\{\s*(leadFirstName|agentName|businessName)\s*\}\}/g,
    (_, k: keyof typeof i.vars) => i.vars[k],
  );
}

/** nextVoiceStep for a lead as stored: its workspace's settings, and the zones its window is read in. */
export async function nextVoiceStepFor(lead: AttemptContext, history: VoiceHistory, now: Date): Promise<VoiceNextStep> {
  const settings = contactPlanOf(agentFromColumn(lead.agent));
  const zones = await windowZones(now, settings.window, {
    phoneE164: lead.phoneE164,
    metadata: lead.metadata,
    workspaceTimeZone: workspaceTimeZone(lead.agent),
  });
  return nextVoiceStep({
    voice: settings.voice,
    window: settings.window,
    zones,
    history,
    now,
    livemode: lead.livemode,
  });
}

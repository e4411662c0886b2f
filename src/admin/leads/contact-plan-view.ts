import type { PlanRow, StepKind } from '../../contact-plan/contact-plan-queries.ts';
import type { ContactPlanView } from './contact-plan-schemas.ts';

// A plan row as the dashboard shows it (contact-plan-schemas.ts).

const iso = (d: Date | null) => (d ? d.toISOString() : null);

export function contactPlanView(plan: PlanRow | null, leadTimeZones: string[]): ContactPlanView {
  if (!plan) return null;
  return {
    attempts: plan.attempts,
    leadTimeZones,
    next: plan.next ? { kind: plan.next.kind, at: plan.next.at.toISOString(), reason: plan.next.reason } : null,
    inFlight: plan.inFlightSince !== null,
    endedAt: iso(plan.endedAt),
    endedReason: plan.endedReason,
    reachedAt: iso(plan.reachedAt),
  };
}

/** The inbox's "next attempt": only a running plan's. */
export function nextAttemptOf(plan: PlanRow | undefined): { kind: StepKind; at: string } | null {
  if (!plan?.next || plan.endedAt) return null;
  return { kind: plan.next.kind, at: plan.next.at.toISOString() };
}

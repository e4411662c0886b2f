import type { AgentConfig } from '../workspaces/agent-config.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';
import { insideWindow, nextOpening, windowZones } from './lead-clock.ts';

// A workspace that contacts first in the calling window (`contactPlan.firstContact: 'in_window'`,
// docs/FOLLOW-UP.md): the first call is dialled by Vapi at the window's next opening
// (`schedulePlan.earliestAt`, src/voice/first-call.ts) and the first WhatsApp template waits in the
// queue until then (the outbox row's start_after, src/leads/lead-batch-statement.ts). Either way the
// lead is stored and answered 201 as always.

/**
 * When the first contact may go out: null for now (an `immediate` workspace, or the window is
 * open), else the window's next opening. A window with no opening within two weeks (holidays
 * only) contacts now rather than never.
 */
export async function firstContactAfter(
  agent: AgentConfig | null,
  lead: { phoneE164: string; metadata: Record<string, unknown> | null },
  now: Date,
): Promise<Date | null> {
  // Read before parsing the settings: this runs on every POST, and most workspaces contact at once.
  if (agent?.contactPlan?.firstContact !== 'in_window') return null;
  const settings = contactPlanOf(agent);
  const zones = await windowZones(now, settings.window, {
    phoneE164: lead.phoneE164,
    metadata: lead.metadata,
    workspaceTimeZone: agent?.timeZone || 'UTC',
  });
  if (insideWindow(now, settings.window, zones)) return null;
  return nextOpening(now, settings.window, zones);
}

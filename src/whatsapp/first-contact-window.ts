import { insideWindow, leadTimeZones, nextOpening } from '../contact-plan/lead-clock.ts';
import { contactPlanOf } from '../workspaces/contact-plan-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';

// A WhatsApp workspace that contacts first in the calling window (`contactPlan.firstContact:
// 'in_window'`): the lead's first template waits in the queue until the window next opens in the
// lead's time zone. The lead is stored and answered 201 as always; only its first agent-turn job
// starts later (the outbox row's start_after, src/leads/lead-batch-statement.ts).

/**
 * When the first template may go out: null for now (an `immediate` workspace, or the window is
 * open), else the window's next opening. A window with no opening within two weeks (holidays
 * only) sends now rather than never, as the first call does (src/voice/first-call.ts).
 */
export async function firstTemplateAfter(
  workspace: Pick<WorkspaceRow, 'agent'>,
  lead: { phoneE164: string; metadata: Record<string, unknown> },
  now: Date,
): Promise<Date | null> {
  const settings = contactPlanOf(workspace.agent);
  if (settings.firstContact !== 'in_window') return null;
  const tz = workspace.agent?.timeZone;
  const { zones } = await leadTimeZones({
    phoneE164: lead.phoneE164,
    metadata: lead.metadata,
    workspaceTimeZone: tz && tz.length > 0 ? tz : 'UTC',
  });
  if (insideWindow(now, settings.window, zones)) return null;
  return nextOpening(now, settings.window, zones);
}

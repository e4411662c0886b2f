import { agentConfigOf } from '../../workspaces/agent-config.ts';
import type { Queryable } from '../../db/pool.ts';
import { getLeadDetails } from '../../leads/lead-details.ts';
import { voiceCallView } from '../../leads/lead-view.ts';
import { transcriptTurns } from '../../voice/call-transcript.ts';
import { WINDOW_MS } from '../../whatsapp/turn-context.ts';
import type { WorkspaceRow } from '../../workspaces/workspace-queries.ts';
import type { LeadPageBody } from './admin-schemas.ts';
import { HISTORY_PAGE, messagePage, timelinePage } from './lead-history-queries.ts';
import { readPlan } from '../../contact-plan/contact-plan-queries.ts';
import { contactPlanView } from './contact-plan-view.ts';
import { windowZones } from '../../contact-plan/lead-clock.ts';
import { contactPlanOf } from '../../workspaces/contact-plan-config.ts';
import { leadSourceView } from './lead-source-view.ts';

// The lead page's data (docs/DASHBOARD.md, "Lead page"): the details `leadintake lead show` prints
// (lead-details.ts) plus what only the page shows — form answers with the questions' labels, the
// consent record, the API key that created the lead (name and prefix only), every call with its
// transcript by speaker, the 24-hour WhatsApp window, where the lead came from (lead-source-view.ts)
// and the consent text it agreed to.

export async function leadPage(
  db: Queryable,
  workspace: WorkspaceRow,
  leadId: string,
  now: Date,
): Promise<LeadPageBody | null> {
  const d = await getLeadDetails(db, { leadId, workspaceId: workspace.id, history: false });
  if (!d) return null;
  // The newest page of the thread and of the timeline; older ones and the provider traffic are
  // fetched when asked for (lead-history-routes.ts), so a long conversation costs one page here.
  const newest = { leadId, limit: HISTORY_PAGE };
  const [extra, calls, messages, timeline, plan] = await Promise.all([
    db.query(
      `SELECT l.livemode, l.consent_ip, l.consent_user_agent,
              l.last_inbound_at, k.name AS key_name, k.prefix AS key_prefix,
              l.owner_operator_id AS owner_id, o.name AS owner_name,
              l.source, s.name AS source_name, l.source_lead_id, l.source_detail,
              c.version AS consent_version, c.text AS consent_text
         FROM leads l LEFT JOIN api_keys k ON k.id = l.api_key_id
         LEFT JOIN operators o ON o.id = l.owner_operator_id
         -- The workspace's own rows only, however the ids were written.
         LEFT JOIN lead_sources s ON s.id = l.source_id AND s.workspace_id = l.workspace_id
         LEFT JOIN consent_texts c ON c.id = l.consent_text_id AND c.workspace_id = l.workspace_id
        WHERE l.id = $1`,
      [leadId],
    ),
    db.query(
      `SELECT provider_call_id, status, started_at, ended_at,
         duration_seconds, ended_reason, summary, transcript, recording_url
         FROM call_sessions WHERE lead_id = $1 ORDER BY created_at, id`,
      [leadId],
    ),
    d.lead.channel === 'whatsapp' ? messagePage(db, newest) : { rows: [], olderCursor: null },
    timelinePage(db, newest),
    readPlan(db, leadId),
  ]);
  const x = extra.rows[0];
  if (!x) return null;
  const { questions, retiredQuestions = [] } = agentConfigOf(workspace);
  // A question taken off the form keeps the label it had (the form builder retires it).
  const labels = new Map([...retiredQuestions, ...questions].map((q) => [q.id, q.label]));
  const order = (id: string) => {
    const i = questions.findIndex((q) => q.id === id);
    return i === -1 ? questions.length : i;
  };
  const l = d.lead;
  const lastInbound: Date | null = x.last_inbound_at;
  // The zones the lead's calling window is read in (docs/FOLLOW-UP.md, "The lead's clock").
  const agent = agentConfigOf(workspace);
  const leadZones = plan
    ? await windowZones(now, contactPlanOf(agent).window, {
        phoneE164: l.phoneNormalized,
        metadata: l.metadata,
        workspaceTimeZone: agent.timeZone,
      })
    : [];
  return {
    ok: true,
    lead: {
      id: l.id,
      workspaceSlug: l.workspaceSlug,
      channel: l.channel,
      status: l.status,
      livemode: x.livemode,
      name: l.name,
      phone: l.phone,
      phoneNormalized: l.phoneNormalized,
      email: l.email,
      goal: l.goal,
      qualificationNotes: l.qualificationNotes,
      agentNotes: l.agentNotes,
      // What the agent collected, with the questions' labels (retired ones' too; unknown ids: label null).
      answers: Object.entries(l.answers)
        .map(([id, value]) => ({ id, label: labels.get(id) ?? null, value }))
        .sort((a, b) => order(a.id) - order(b.id)),
      metadata: l.metadata,
      // In the form's order; retired questions' answers after them with the label they had; ids never on the form:
      // label null.
      formAnswers: Object.entries(l.formResponses)
        .map(([id, value]) => ({ id, label: labels.get(id) ?? null, value }))
        .sort((a, b) => order(a.id) - order(b.id)),
      consent: {
        at: l.consentedAt,
        ip: x.consent_ip,
        userAgent: x.consent_user_agent,
        text: x.consent_version === null ? null : { version: x.consent_version, text: x.consent_text },
      },
      source: leadSourceView(x),
      bookingUid: l.bookingUid,
      bookingStart: l.bookingStart,
      optedOutAt: l.optedOutAt,
      doNotContact: l.doNotContact,
      createdAt: l.createdAt,
      updatedAt: l.updatedAt,
      apiKey: x.key_name === null ? null : { name: x.key_name, prefix: x.key_prefix },
    },
    owner: x.owner_id
      ? { kind: 'operator', id: x.owner_id, name: x.owner_name }
      : l.status === 'needs_human'
        ? { kind: 'nobody' }
        : { kind: 'ai' },
    timeZone: agentConfigOf(workspace).timeZone ?? null,
    contactPlan: contactPlanView(plan, leadZones),
    whatsappWindow:
      l.channel === 'whatsapp'
        ? {
            open: lastInbound !== null && now.getTime() - lastInbound.getTime() < WINDOW_MS,
            until: lastInbound ? new Date(lastInbound.getTime() + WINDOW_MS).toISOString() : null,
          }
        : null,
    timeline: timeline.rows.reverse(),
    timelineOlderCursor: timeline.olderCursor,
    messages: messages.rows.reverse(),
    messagesOlderCursor: messages.olderCursor,
    calls: calls.rows.map((c) => ({ ...voiceCallView(c), transcriptTurns: transcriptTurns(c.transcript) })),
  };
}

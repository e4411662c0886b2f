import { agentConfigOf } from '../agent/agent-config.ts';
import type { Queryable } from '../db/pool.ts';
import { getLeadDetails } from '../leads/lead-details.ts';
import { voiceCallView } from '../leads/lead-view.ts';
import { transcriptTurns } from '../voice/call-transcript.ts';
import { WINDOW_MS } from '../whatsapp/turn-engine.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import type { LeadPageBody } from './admin-schemas.ts';

// The lead page's data (docs/DASHBOARD.md, "Lead page"): the details `leadintake lead show` prints
// (lead-details.ts) plus what only the page shows — form answers with the questions' labels, the
// consent record, the API key that created the lead (name and prefix only), every call with its
// transcript by speaker, the 24-hour WhatsApp window.

export async function leadPage(db: Queryable, workspace: WorkspaceRow, leadId: string, now: Date): Promise<LeadPageBody | null> {
  const d = await getLeadDetails(db, { leadId, workspaceId: workspace.id, logLimit: 50 });
  if (!d) return null;
  const [extra, calls] = await Promise.all([
    db.query(
      `SELECT l.livemode, l.consent_ip, l.consent_user_agent, l.last_inbound_at, k.name AS key_name, k.prefix AS key_prefix
         FROM leads l LEFT JOIN api_keys k ON k.id = l.api_key_id WHERE l.id = $1`,
      [leadId],
    ),
    db.query(
      `SELECT provider_call_id, status, started_at, ended_at, duration_seconds, ended_reason, summary, transcript, recording_url
         FROM call_sessions WHERE lead_id = $1 ORDER BY created_at, id`,
      [leadId],
    ),
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
      // What the agent collected, with the questions' labels (retired ones' too; unknown ids: label null).
      answers: Object.entries(l.answers).map(([id, value]) => ({ id, label: labels.get(id) ?? null, value })).sort((a, b) => order(a.id) - order(b.id)),
      metadata: l.metadata,
      // In the form's order; retired questions' answers after them with the label they had; ids never on the form: label null.
      formAnswers: Object.entries(l.formResponses)
        .map(([id, value]) => ({ id, label: labels.get(id) ?? null, value }))
        .sort((a, b) => order(a.id) - order(b.id)),
      consent: { at: l.consentedAt, ip: x.consent_ip, userAgent: x.consent_user_agent },
      bookingUid: l.bookingUid,
      bookingStart: l.bookingStart,
      optedOutAt: l.optedOutAt,
      createdAt: l.createdAt,
      updatedAt: l.updatedAt,
      apiKey: x.key_name === null ? null : { name: x.key_name, prefix: x.key_prefix },
    },
    timeZone: agentConfigOf(workspace).timeZone ?? null,
    whatsappWindow:
      l.channel === 'whatsapp'
        ? {
            open: lastInbound !== null && now.getTime() - lastInbound.getTime() < WINDOW_MS,
            until: lastInbound ? new Date(lastInbound.getTime() + WINDOW_MS).toISOString() : null,
          }
        : null,
    timeline: d.timeline,
    messages: d.messages.map(({ provider: _p, ...m }) => m),
    truncated: d.truncated,
    calls: calls.rows.map((c) => ({ ...voiceCallView(c), transcriptTurns: transcriptTurns(c.transcript) })),
    integrationLog: d.integrationLog,
  };
}

import type { z } from 'zod';
import { agentConfigOf, agentConfigSchema, withQuestionIds, type AgentConfig } from '../../workspaces/agent-config.ts';
import { buildAgentPrompt, type PromptLead } from '../../agent/prompt.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../shared/errors.ts';
import { parse } from '../../shared/schema-parse.ts';
import {
  whatsappSettingsSchema,
  type WhatsappSettings,
  type WorkspaceSettings,
} from '../../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../../workspaces/workspace-queries.ts';
import type { agentSchema, AgentBody, AgentDraft } from './form-agent-admin-schemas.ts';
import { requireVersion, versionOf } from '../settings-version.ts';
import { contactPlanOf } from '../../workspaces/contact-plan-config.ts';

// The Agent page's data (docs/DASHBOARD.md, "Form builder and agent settings"): the persona,
// criteria, time zone and phone country of `workspaces.agent`, the first-contact template fields
// of the encrypted `whatsapp` settings (never its secrets), the kill switch, and the system prompt
// for a sample lead built by the agent's own buildAgentPrompt.

type AgentView = Omit<z.output<typeof agentSchema>, 'ok'>;
type TemplateView = NonNullable<AgentView['whatsappTemplate']>;

function templateOf(w: WhatsappSettings | undefined): TemplateView | null {
  if (!w) return null;
  return w.provider === 'twilio'
    ? { provider: 'twilio', templateContentSid: w.templateContentSid, templateBody: w.templateBody ?? null }
    : {
        provider: 'meta',
        templateName: w.templateName,
        templateLanguage: w.templateLanguage,
        templateBody: w.templateBody ?? null,
      };
}

function editable(agent: AgentConfig, settings: WorkspaceSettings) {
  const a = {
    persona: agent.persona,
    criteria: agent.criteria,
    timeZone: agent.timeZone,
    defaultCountry: agent.defaultCountry ?? null,
    ...(agent.allowedLinkDomains?.length ? { allowedLinkDomains: agent.allowedLinkDomains } : {}),
    ...(agent.holdingMessage ? { holdingMessage: agent.holdingMessage } : {}),
    contactPlan: contactPlanOf(agent),
  };
  return { agent: a, whatsappTemplate: templateOf(settings.whatsapp) };
}

/** Only what this page edits: a form save does not make an agent save a conflict. */
const agentVersion = (agent: AgentConfig, settings: WorkspaceSettings) => versionOf(editable(agent, settings));

export async function agentEnabled(db: Queryable, workspaceId: string): Promise<boolean> {
  const { rows } = await db.query('SELECT agent_enabled FROM workspaces WHERE id = $1', [workspaceId]);
  return rows[0]?.agent_enabled === true;
}

export function agentView(workspace: WorkspaceRow, settings: WorkspaceSettings, enabled: boolean): AgentView {
  const agent = agentConfigOf(workspace);
  const view = editable(agent, settings);
  return {
    channel: workspace.channel,
    version: agentVersion(agent, settings),
    enabled,
    ...view,
    whatsappTemplate: workspace.channel === 'whatsapp' ? view.whatsappTemplate : null,
  };
}

/** The draft as a full agent section (the current questions kept), or 400 naming each bad field. */
export function draftAgent(workspace: WorkspaceRow, draft: AgentDraft): AgentConfig {
  const current = agentConfigOf(workspace);
  const country = draft.defaultCountry?.trim();
  const agent = parse(agentConfigSchema, {
    persona: draft.persona,
    criteria: draft.criteria,
    timeZone: draft.timeZone,
    ...(country ? { defaultCountry: country } : {}),
    ...linkDomains(draft.allowedLinkDomains ?? current.allowedLinkDomains),
    ...holdingMessage(draft.holdingMessage === undefined ? current.holdingMessage : draft.holdingMessage),
    questions: current.questions,
    // Kept when the draft leaves it out (a page that does not edit follow-ups must not drop them).
    ...((draft.contactPlan ?? current.contactPlan) ? { contactPlan: draft.contactPlan ?? current.contactPlan } : {}),
  });
  return withQuestionIds(agent, workspace.agent);
}

/** The link domains to keep; none is the same as an empty list. */
function linkDomains(domains: string[] | undefined): { allowedLinkDomains?: string[] } {
  const kept = (domains ?? []).map((d) => d.trim()).filter((d) => d !== '');
  return kept.length > 0 ? { allowedLinkDomains: kept } : {};
}

/** The workspace's own holding message; empty or null: none (the default is used). */
function holdingMessage(text: string | null | undefined): { holdingMessage?: string } {
  const t = text?.trim();
  return t ? { holdingMessage: t } : {};
}

/** The `whatsapp` settings with the draft's template fields; secrets and sender untouched. */
function withTemplate(settings: WorkspaceSettings, draft: AgentDraft): WorkspaceSettings | undefined {
  const t = draft.whatsappTemplate;
  if (!t) return undefined;
  const current = settings.whatsapp;
  if (!current) {
    throw new AppError('validation_failed', {
      issues: [
        {
          path: ['whatsappTemplate'],
          message:
            'The WhatsApp provider is not set for this workspace: ' +
            'set its `whatsapp` settings first, then the template.',
        },
      ],
    });
  }
  const body = t.templateBody ? { templateBody: t.templateBody } : {};
  const { templateBody: _old, ...rest } = current;
  const next =
    current.provider === 'twilio'
      ? { ...rest, templateContentSid: t.templateContentSid ?? current.templateContentSid, ...body }
      : {
          ...rest,
          templateName: t.templateName ?? (current as { templateName: string }).templateName,
          templateLanguage: t.templateLanguage ?? (current as { templateLanguage: string }).templateLanguage,
          ...body,
        };
  // Name the field of this page (whatsappTemplate.x), whatever the config file calls it.
  return { ...settings, whatsapp: parse(whatsappSettingsSchema, next, ['whatsappTemplate']) };
}

/** The new agent section and settings of a save; throws on a stale version or a bad field. */
export function applyAgent(
  workspace: WorkspaceRow,
  settings: WorkspaceSettings,
  body: AgentBody,
): { agent: AgentConfig; settings?: WorkspaceSettings } {
  requireVersion(body.version, agentVersion(agentConfigOf(workspace), settings));
  const agent = draftAgent(workspace, body);
  const next = workspace.channel === 'whatsapp' ? withTemplate(settings, body) : undefined;
  return { agent, ...(next ? { settings: next } : {}) };
}

/** A lead as a form would submit one, with every question still open, so the preview lists them. */
export const SAMPLE_LEAD: PromptLead = {
  name: 'Sam Sample',
  email: 'sam@example.com',
  goal: 'Wants to know whether the offer suits them',
  metadata: { source: 'website form' },
  formResponses: {},
  answers: {},
  notes: null,
};

export function previewPrompt(workspace: WorkspaceRow, draft: AgentDraft, now: Date): string {
  return buildAgentPrompt({ agent: draftAgent(workspace, draft), lead: SAMPLE_LEAD, channel: workspace.channel, now });
}

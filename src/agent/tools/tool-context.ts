import type { z } from 'zod';
import type { Pool } from '../../db/pool.ts';
import type { SchedulingProvider } from '../../scheduling/scheduling-provider.ts';
import type { Clock } from '../../shared/clock.ts';
import type { Logger } from '../../shared/logger.ts';
import type { WorkspaceSettings } from '../../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../../workspaces/workspace-queries.ts';
import { findAgentLead, type AgentLead } from '../agent-lead-queries.ts';
import { TERMINAL_STATUSES, type LeadStatus } from '../../leads/lead-state.ts';

/** What a tool call runs with; each channel builds it for the lead it is talking to. */
export interface ToolContext {
  pool: Pool;
  leadId: string;
  /** The lead's workspace, including its agent config. */
  workspace: WorkspaceRow;
  /** Its decrypted provider settings (the Cal.com key is in `scheduling`). */
  settings: WorkspaceSettings;
  scheduling: SchedulingProvider;
  clock: Clock;
  log: Logger;
  /**
   * Set when the tool call comes from a voice call: the provider's call id and what the lead has
   * said in it so far. Absent: the lead's WhatsApp conversation (src/agent/conversation-scope.ts).
   */
  call?: { providerCallId: string; leadSaid: readonly string[] };
}

/**
 * One tool, shared by both channels. `run` gets arguments already validated by `args` and answers
 * with short text for the model; expected failures are answers too, never throws.
 */
export interface AgentTool<S extends z.ZodType = z.ZodType> {
  name: string;
  description: string;
  args: S;
  // Method syntax on purpose: it lets tools with different argument types share one list.
  run(ctx: ToolContext, args: z.output<S>): Promise<string>;
}

export function defineTool<S extends z.ZodType>(tool: AgentTool<S>): AgentTool<S> {
  return tool;
}

export const LEAD_NOT_FOUND = 'Lead not found in this workspace; nothing was done.';

/** What the agent is told when the lead is in a status only an operator can change. */
export function alreadyTerminal(status: LeadStatus): string {
  return (
    `Nothing changed: the lead is already ${status}, and only a human operator can change that now. ` +
    'Do not retry; close the conversation politely.'
  );
}

/** The answer when a change was not applied: the lead is gone, or a racing change won. */
export function refusalAnswer(r: { reason: 'not_found' } | { reason: 'refused'; status: LeadStatus }): string {
  return r.reason === 'not_found' ? LEAD_NOT_FOUND : alreadyTerminal(r.status);
}

/** The lead the tool acts on, or the text to answer with when it cannot act. */
export async function loadActiveLead(ctx: ToolContext): Promise<{ lead: AgentLead } | { answer: string }> {
  const lead = await findAgentLead(ctx.pool, ctx.workspace.id, ctx.leadId);
  if (!lead) return { answer: LEAD_NOT_FOUND };
  if (TERMINAL_STATUSES.has(lead.status)) return { answer: alreadyTerminal(lead.status) };
  return { lead };
}

import { z } from 'zod';
import { bookConsult } from './tools/book-consult.ts';
import { endConversation } from './tools/end-conversation.ts';
import { escalateToHuman } from './tools/escalate-to-human.ts';
import { listSlots } from './tools/list-slots.ts';
import { markUnqualified } from './tools/mark-unqualified.ts';
import { optOut } from './tools/opt-out.ts';
import { scheduleCallback } from './tools/schedule-callback.ts';
import type { AgentTool, ToolContext } from './tools/tool-context.ts';
import { updateLeadProfile } from './tools/update-lead-profile.ts';

// The agent's tools, once for both channels: the voice provider's model calls them over HTTP,
// the WhatsApp loop calls them in process. Each channel only turns its tool calls into
// runTool(ctx, name, args) and the answer back into its own message format.

export type { AgentTool, ToolContext } from './tools/tool-context.ts';

export const agentTools: readonly AgentTool[] = [
  updateLeadProfile,
  listSlots,
  bookConsult,
  markUnqualified,
  optOut,
  escalateToHuman,
  scheduleCallback,
  endConversation,
];

/**
 * Runs one tool call. Never throws: unknown tools, bad arguments and internal errors are all
 * answered with text the model can act on. `rawArgs` is the arguments object, or the JSON text
 * of it as OpenAI-style APIs send it.
 */
export async function runTool(ctx: ToolContext, name: string, rawArgs: unknown): Promise<string> {
  const tool = agentTools.find((t) => t.name === name);
  if (!tool) {
    ctx.log.warn({ tool: String(name).slice(0, 64), leadId: ctx.leadId }, 'agent called an unknown tool');
    return (
      `There is no tool called "${String(name).slice(0, 64)}". ` +
      `The tools are: ${agentTools.map((t) => t.name).join(', ')}.`
    );
  }
  const json = argumentsObject(rawArgs);
  if ('problem' in json) return `Invalid arguments for ${name}: ${json.problem}. Nothing was done.`;
  const parsed = tool.args.safeParse(json.value);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => `${i.path.join('.') || 'arguments'}: ${i.message}`).join('; ');
    return `Invalid arguments for ${name}: ${problems}. Nothing was done; correct them and call ${name} again.`;
  }
  const started = Date.now();
  try {
    const answer = await tool.run(ctx, parsed.data);
    // Arguments and answers stay out of the log: they carry the lead's personal data.
    ctx.log.info({ tool: name, leadId: ctx.leadId, ms: Date.now() - started }, 'agent tool');
    return answer;
  } catch (err) {
    ctx.log.error({ err, tool: name, leadId: ctx.leadId }, 'agent tool failed');
    return (
      `${name} failed because of a technical problem on our side. ` +
      'Apologise; try once more, and if it fails again tell the lead a colleague will follow up.'
    );
  }
}

/** Tool declarations in the OpenAI `tools` format (Vapi uses the same `function` object). */
export function toolDeclarations(): Array<{
  type: 'function';
  function: { name: string; description: string; parameters: Record<string, unknown> };
}> {
  return agentTools.map((t) => {
    // `io: 'input'`: arguments with defaults are optional for the caller.
    const { $schema: _dialect, ...parameters } = z.toJSONSchema(t.args, { io: 'input' }) as Record<string, unknown>;
    return { type: 'function', function: { name: t.name, description: t.description, parameters } };
  });
}

function argumentsObject(raw: unknown): { value: Record<string, unknown> } | { problem: string } {
  let value = raw;
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { value: {} };
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      return { problem: 'the arguments are not valid JSON' };
    }
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return { problem: 'the arguments must be a JSON object' };
  return { value: value as Record<string, unknown> };
}

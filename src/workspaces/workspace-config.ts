import { z } from 'zod';
import { agentConfigSchema, type AgentConfigInput } from '../agent/agent-config.ts';

// The JSON file given to `leadintake workspace create|update --config FILE`. Documented in
// docs/WORKSPACE-CONFIG.md. Unknown keys are errors: a typo must not silently drop a setting.
export const vapiSettingsSchema = z
  .object({
    provider: z.literal('vapi'),
    apiKey: z.string().min(1, 'voice.apiKey is required (your Vapi private API key)'),
    assistantId: z.string().min(1),
    phoneNumberId: z.string().min(1),
  })
  .strict();

export const calcomSettingsSchema = z
  .object({
    provider: z.literal('calcom'),
    /** Cal.com API key (`cal_live_…`), sent as Bearer. */
    apiKey: z.string().min(1),
    /** The event type consultations are booked into. */
    eventTypeId: z.number().int().positive(),
    /** Secret configured on the Cal.com webhook; checks X-Cal-Signature-256. */
    webhookSecret: z.string().min(16, 'scheduling.webhookSecret must be at least 16 characters').optional(),
  })
  .strict();

export const workspaceConfigSchema = z
  .object({
    voice: vapiSettingsSchema.optional(),
    scheduling: calcomSettingsSchema.optional(),
    // Not a secret: stored in clear in workspaces.agent, not in the encrypted settings.
    agent: agentConfigSchema.optional(),
  })
  .strict();

export type WorkspaceConfig = z.output<typeof workspaceConfigSchema>;
export type VapiSettings = z.output<typeof vapiSettingsSchema>;
export type CalcomSettings = z.output<typeof calcomSettingsSchema>;

/** Settings stored (encrypted) per workspace: the config file's secret sections, merged on update. */
export type WorkspaceSettings = Omit<WorkspaceConfig, 'agent'>;

/** Separates the sections stored encrypted from the agent section stored in clear. */
export function splitWorkspaceConfig(config: WorkspaceConfig): { settings: WorkspaceSettings; agent?: AgentConfigInput } {
  const { agent, ...settings } = config;
  return agent ? { settings, agent } : { settings };
}

export function mergeSettings(current: WorkspaceSettings, update: WorkspaceSettings): WorkspaceSettings {
  return { ...current, ...update };
}

export function parseWorkspaceConfig(json: unknown): { ok: true; config: WorkspaceConfig } | { ok: false; message: string } {
  const result = workspaceConfigSchema.safeParse(json);
  if (result.success) return { ok: true, config: result.data };
  const message = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  return { ok: false, message };
}

import { z } from 'zod';
import { agentConfigSchema, type AgentConfigInput } from './agent-config.ts';

// The JSON file given to `leadintake workspace create|update --config FILE`. Documented in
// docs/WORKSPACE-CONFIG.md. Unknown keys are errors: a typo must not silently drop a setting.
// Every section a workspace stores is defined here or in agent-config.ts, below the features
// that use it: the providers' clients and the agent read their settings, they do not define them.

/** `voice.hmac` in the workspace config: Vapi's webhook credential and the secret it signs with. */
export const vapiHmacSettingsSchema = z
  .object({
    /** The credential created in Vapi (`POST /credential`, provider `webhook`, an `hmac` plan). */
    credentialId: z.string().min(1).max(200),
    secretKey: z.string().min(16, 'voice.hmac.secretKey must be at least 16 characters'),
    algorithm: z.enum(['sha256', 'sha512', 'sha1']).optional(),
    signatureHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/)
      .optional(),
    timestampHeader: z
      .string()
      .regex(/^[A-Za-z0-9-]{1,100}$/)
      .optional(),
    signaturePrefix: z.string().max(40).optional(),
    payloadFormat: z
      .string()
      .max(200)
      .refine((f) => f.includes('{body}'), 'must contain {body}')
      .refine((f) => !/\{(?!body\}|timestamp\})/.test(f), 'only the placeholders {timestamp} and {body} are supported')
      .optional(),
    signatureEncoding: z.enum(['hex', 'base64']).optional(),
    secretIsBase64: z.boolean().optional(),
    /** How far a signed timestamp may be from our clock. Default 300. */
    toleranceSeconds: z.number().int().min(30).max(3600).optional(),
  })
  .strict();

/** The workspace config's `voice` section (docs/WORKSPACE-CONFIG.md); unknown keys are errors. */
export const vapiSettingsSchema = z
  .object({
    provider: z.literal('vapi'),
    apiKey: z.string().min(1, 'voice.apiKey is required (your Vapi private API key)'),
    assistantId: z.string().min(1),
    phoneNumberId: z.string().min(1),
    /** X-Vapi-Secret Vapi sends us (docs/VOICE.md); default: derived from apiKey and the workspace id. */
    serverSecret: z.string().min(16, 'voice.serverSecret must be at least 16 characters').max(200).optional(),
    /** Vapi's HMAC credential plan instead of X-Vapi-Secret. */
    hmac: vapiHmacSettingsSchema.optional(),
    /** Add our six tools to the assistant on each call (default true). */
    appendTools: z.boolean().optional(),
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

// WhatsApp senders (docs/WHATSAPP.md). The number is normalised to +digits, as inbound webhooks
// report it, so routing compares like with like.
const whatsappNumber = z
  .string()
  .trim()
  .regex(/^\+?[0-9 ().-]{7,32}$/, 'must be a phone number such as +15551234567')
  .transform((v) => `+${v.replace(/\D/g, '')}`)
  .refine((v) => v.length >= 8 && v.length <= 16, 'must have 7 to 15 digits');

export const twilioWhatsappSettingsSchema = z
  .object({
    provider: z.literal('twilio'),
    accountSid: z
      .string()
      .trim()
      .regex(/^AC[0-9a-fA-F]{32}$/, 'whatsapp.accountSid must be AC followed by 32 hex characters'),
    /** Signs Twilio's webhooks to us and authenticates our sends (secret). */
    authToken: z.string().trim().min(1),
    /** The WhatsApp sender, `+digits`. */
    from: whatsappNumber,
    /** The approved first-contact template (HX…), {{1}} = the lead's first name. */
    templateContentSid: z
      .string()
      .trim()
      .regex(/^HX[0-9a-fA-F]{32}$/, 'whatsapp.templateContentSid must be HX followed by 32 hex characters'),
    /** Optional: the template's text with {{1}}, shown to the model as the conversation's first message. */
    templateBody: z.string().trim().min(1).max(1024).optional(),
  })
  .strict();

export const metaWhatsappSettingsSchema = z
  .object({
    provider: z.literal('meta'),
    /** System-user access token (secret). */
    accessToken: z.string().trim().min(1),
    phoneNumberId: z
      .string()
      .trim()
      .regex(/^\d{1,30}$/, 'whatsapp.phoneNumberId is the numeric id of the WhatsApp number'),
    /** The Meta app's secret: checks X-Hub-Signature-256 on webhooks (secret). */
    appSecret: z.string().trim().min(1),
    /** What you type as "Verify token" when subscribing the webhook in the App Dashboard. */
    verifyToken: z.string().trim().min(8, 'whatsapp.verifyToken must be at least 8 characters'),
    templateName: z.string().trim().min(1).max(512),
    templateLanguage: z.string().trim().min(2).max(15).default('en_US'),
    /** Optional: the template's text with {{1}}, shown to the model as the conversation's first message. */
    templateBody: z.string().trim().min(1).max(1024).optional(),
  })
  .strict();

export const whatsappSettingsSchema = z.discriminatedUnion('provider', [
  twilioWhatsappSettingsSchema,
  metaWhatsappSettingsSchema,
]);

/** Per-workspace chat model; each field overrides OPENAI_BASE_URL, OPENAI_API_KEY, LLM_MODEL. */
export const llmSettingsSchema = z
  .object({
    baseUrl: z
      .url({ protocol: /^https?$/, error: 'llm.baseUrl must be an http(s) URL such as http://localhost:11434/v1' })
      .optional(),
    apiKey: z.string().trim().min(1).optional(),
    model: z.string().trim().min(1).max(200).optional(),
  })
  .strict();

export const workspaceConfigSchema = z
  .object({
    voice: vapiSettingsSchema.optional(),
    scheduling: calcomSettingsSchema.optional(),
    whatsapp: whatsappSettingsSchema.optional(),
    llm: llmSettingsSchema.optional(),
    // Not a secret: stored in clear in workspaces.agent, not in the encrypted settings.
    agent: agentConfigSchema.optional(),
  })
  .strict();

export type WorkspaceConfig = z.output<typeof workspaceConfigSchema>;
export type VapiSettings = z.output<typeof vapiSettingsSchema>;
export type VapiHmacSettings = z.output<typeof vapiHmacSettingsSchema>;
export type CalcomSettings = z.output<typeof calcomSettingsSchema>;
export type WhatsappSettings = z.output<typeof whatsappSettingsSchema>;
export type LlmSettings = z.output<typeof llmSettingsSchema>;

/** Settings stored (encrypted) per workspace: the config file's secret sections, merged on update. */
export type WorkspaceSettings = Omit<WorkspaceConfig, 'agent'>;

/** Separates the sections stored encrypted from the agent section stored in clear. */
export function splitWorkspaceConfig(config: WorkspaceConfig): {
  settings: WorkspaceSettings;
  agent?: AgentConfigInput;
} {
  const { agent, ...settings } = config;
  return agent ? { settings, agent } : { settings };
}

export function mergeSettings(current: WorkspaceSettings, update: WorkspaceSettings): WorkspaceSettings {
  return { ...current, ...update };
}

export function parseWorkspaceConfig(
  json: unknown,
): { ok: true; config: WorkspaceConfig } | { ok: false; message: string } {
  const result = workspaceConfigSchema.safeParse(json);
  if (result.success) return { ok: true, config: result.data };
  const message = result.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ');
  return { ok: false, message };
}

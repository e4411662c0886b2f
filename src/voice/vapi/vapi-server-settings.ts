import crypto from 'node:crypto';
import { z } from 'zod';
import { hmacPlanWithDefaults, type HmacPlan } from './vapi-hmac.ts';

// How Vapi reaches a workspace (Vapi's API docs): one events URL and one tools URL under
// PUBLIC_BASE_URL, authenticated by the workspace's server secret in `X-Vapi-Secret`, or by an
// HMAC signature when the workspace configured Vapi's HMAC credential plan (docs/VOICE.md).

/** `voice.hmac` in the workspace config: Vapi's webhook credential and the secret it signs with. */
export const vapiHmacSettingsSchema = z
  .object({
    /** The credential created in Vapi (`POST /credential`, provider `webhook`, an `hmac` plan). */
    credentialId: z.string().min(1).max(200),
    secretKey: z.string().min(16, 'voice.hmac.secretKey must be at least 16 characters'),
    algorithm: z.enum(['sha256', 'sha512', 'sha1']).optional(),
    signatureHeader: z.string().regex(/^[A-Za-z0-9-]{1,100}$/).optional(),
    timestampHeader: z.string().regex(/^[A-Za-z0-9-]{1,100}$/).optional(),
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

export type VapiSettings = z.output<typeof vapiSettingsSchema>;

export type VapiHmacSettings = z.output<typeof vapiHmacSettingsSchema>;

export interface VapiServerUrls {
  events: string;
  tools: string;
}

export function vapiServerUrls(publicBaseUrl: string, slug: string): VapiServerUrls {
  const base = `${publicBaseUrl.replace(/\/+$/, '')}/api/vapi/${slug}`;
  return { events: `${base}/events`, tools: `${base}/tools` };
}

/**
 * The `X-Vapi-Secret` value: `voice.serverSecret` when set, else derived from the workspace's Vapi
 * API key and id (HMAC-SHA256, base64url). Derived, not stored: nothing to generate, back up or
 * leak from our database, and only someone holding the Vapi private key could compute it. Changing
 * the API key changes it; pin `serverSecret` to rotate keys while calls are running.
 */
export function serverSecretOf(workspaceId: string, voice: Pick<VapiSettings, 'apiKey' | 'serverSecret'>): string {
  if (voice.serverSecret) return voice.serverSecret;
  return crypto.createHmac('sha256', voice.apiKey).update(`leadintake/vapi-server-secret/v1:${workspaceId}`).digest('base64url');
}

export type VapiServerAuth =
  | { kind: 'secret'; secret: string }
  | { kind: 'hmac'; plan: HmacPlan; credentialId: string; toleranceSeconds: number };

export function serverAuthOf(workspaceId: string, voice: VapiSettings): VapiServerAuth {
  if (voice.hmac) {
    const { credentialId, toleranceSeconds, ...plan } = voice.hmac;
    return { kind: 'hmac', plan: hmacPlanWithDefaults(plan), credentialId, toleranceSeconds: toleranceSeconds ?? 300 };
  }
  return { kind: 'secret', secret: serverSecretOf(workspaceId, voice) };
}

/** What Vapi must send to be believed: our secret header, or the HMAC credential. */
export function serverAuthForVapi(auth: VapiServerAuth): { headers: Record<string, string> } | { credentialId: string } {
  return auth.kind === 'hmac' ? { credentialId: auth.credentialId } : { headers: { 'X-Vapi-Secret': auth.secret } };
}

/** The secret values of a workspace's voice settings, masked in the integration log. */
export function voiceSecrets(workspaceId: string, voice: VapiSettings): string[] {
  return [voice.apiKey, serverSecretOf(workspaceId, voice), ...(voice.hmac ? [voice.hmac.secretKey] : [])];
}

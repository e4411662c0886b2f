import crypto from 'node:crypto';
import type { VapiSettings } from '../../workspaces/workspace-config.ts';
import { hmacPlanWithDefaults, type HmacPlan } from './vapi-hmac.ts';

// How Vapi reaches a workspace (Vapi's API docs): one events URL and one tools URL under
// PUBLIC_BASE_URL, authenticated by the workspace's server secret in `X-Vapi-Secret`, or by an
// HMAC signature when the workspace configured Vapi's HMAC credential plan (docs/VOICE.md). The
// settings themselves (`voice` in the workspace config) are checked by vapiSettingsSchema in
// src/workspaces/workspace-config.ts.

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
  return crypto
    .createHmac('sha256', voice.apiKey)
    .update(`leadintake/vapi-server-secret/v1:${workspaceId}`)
    .digest('base64url');
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
export function serverAuthForVapi(
  auth: VapiServerAuth,
): { headers: Record<string, string> } | { credentialId: string } {
  return auth.kind === 'hmac' ? { credentialId: auth.credentialId } : { headers: { 'X-Vapi-Secret': auth.secret } };
}

/** The secret values of a workspace's voice settings, masked in the integration log. */
export function voiceSecrets(workspaceId: string, voice: VapiSettings): string[] {
  return [voice.apiKey, serverSecretOf(workspaceId, voice), ...(voice.hmac ? [voice.hmac.secretKey] : [])];
}

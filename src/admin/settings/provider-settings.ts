import { serverAuthOf, vapiServerUrls } from '../../voice/vapi/vapi-server-settings.ts';
import { isLocalHost } from '../../workspaces/verify/workspace-checks.ts';
import type { WorkspaceRow } from '../../workspaces/workspace-queries.ts';
import type { WorkspaceSettings } from '../../workspaces/workspace-config.ts';

// The Providers page's view of a workspace's encrypted settings (docs/DASHBOARD.md, "Providers,
// API keys and team"). Secrets are write-only: the view carries only whether each is set and its
// last four characters; a save that leaves a secret empty keeps the stored one. Which fields are
// secrets is decided here, in one table, so the view and the merge cannot disagree.

export const PROVIDER_SECTIONS = ['voice', 'whatsapp', 'scheduling', 'llm'] as const;
export type ProviderSection = (typeof PROVIDER_SECTIONS)[number];

/**
 * The secret fields of each section (dotted for nested ones). Credentials that let someone act as
 * the workspace or forge a provider's callbacks; ids, numbers, URLs and template names are not.
 */
export const SECRET_FIELDS: Record<string, readonly string[]> = {
  voice: ['apiKey', 'serverSecret', 'hmac.secretKey'],
  'whatsapp:twilio': ['authToken'],
  'whatsapp:meta': ['accessToken', 'appSecret', 'verifyToken'],
  scheduling: ['apiKey', 'webhookSecret'],
  llm: ['apiKey'],
};

/** A secret as the page sees it: set or not, and (for secrets long enough to spare them) the last 4 characters. */
export interface MaskedSecret {
  set: true;
  last4: string | null;
}

type Json = Record<string, unknown>;

const secretsOf = (section: ProviderSection, value: Json): readonly string[] =>
  SECRET_FIELDS[section === 'whatsapp' ? `whatsapp:${String(value.provider)}` : section] ?? [];

function getPath(obj: Json, path: string): unknown {
  return path.split('.').reduce<unknown>((o, k) => (o && typeof o === 'object' ? (o as Json)[k] : undefined), obj);
}

function setPath(obj: Json, path: string, value: unknown): void {
  const keys = path.split('.');
  let o = obj;
  for (const k of keys.slice(0, -1)) {
    if (!o[k] || typeof o[k] !== 'object') return;
    o = o[k] as Json;
  }
  if (value === undefined) delete o[keys.at(-1)!];
  else o[keys.at(-1)!] = value;
}

/** Showing 4 characters of a short secret would give away too much of it: 12 characters or more only. */
export function mask(secret: string): MaskedSecret {
  return { set: true, last4: secret.length >= 12 ? secret.slice(-4) : null };
}

/** The section with every secret replaced by its mask (or left out when not set). */
export function maskedSection(section: ProviderSection, value: Json): Json {
  const copy = structuredClone(value);
  for (const path of secretsOf(section, value)) {
    const v = getPath(value, path);
    setPath(copy, path, typeof v === 'string' ? mask(v) : undefined);
  }
  return copy;
}

export function maskedSettings(settings: WorkspaceSettings): Record<ProviderSection, Json | null> {
  const out = {} as Record<ProviderSection, Json | null>;
  for (const section of PROVIDER_SECTIONS) {
    const value = settings[section] as Json | undefined;
    out[section] = value ? maskedSection(section, value) : null;
  }
  return out;
}

/**
 * The section to store from what the page sent: a secret sent empty or left out keeps the stored
 * one (when the provider is the same); `null` removes an optional secret. The result is then
 * checked by the workspace config schema, which names any field still missing.
 */
export function mergeSecrets(section: ProviderSection, sent: Json, stored: Json | undefined): Json {
  const merged = structuredClone(sent);
  const sameProvider = section !== 'whatsapp' || (stored !== undefined && stored.provider === sent.provider);
  for (const path of secretsOf(section, sent)) {
    const v = getPath(sent, path);
    if (v === null) setPath(merged, path, undefined);
    else if ((v === undefined || v === '') && sameProvider && stored) {
      const kept = getPath(stored, path);
      if (path.includes('.') && getPath(merged, path.split('.').slice(0, -1).join('.')) === undefined) continue;
      setPath(merged, path, kept);
    } else if (v === '') setPath(merged, path, undefined);
  }
  return merged;
}

export interface PasteUrl {
  provider: 'Vapi' | 'Twilio' | 'Meta' | 'Cal.com';
  label: string;
  url: string;
  note: string;
}

/**
 * The addresses to paste into each provider's console, built from PUBLIC_BASE_URL and the routes the service serves.
 */
export function pasteUrls(publicBaseUrl: string, workspace: Pick<WorkspaceRow, 'slug'>): PasteUrl[] {
  const base = `${publicBaseUrl.replace(/\/+$/, '')}`;
  const slug = encodeURIComponent(workspace.slug);
  const vapi = vapiServerUrls(publicBaseUrl, slug);
  return [
    {
      provider: 'Vapi',
      label: 'Server URL (events)',
      url: vapi.events,
      note:
        "Sent to Vapi with every call; paste it as the assistant's Server URL " +
        'to receive events for calls started elsewhere.',
    },
    {
      provider: 'Vapi',
      label: 'Tools URL',
      url: vapi.tools,
      note: 'The server URL of the six tools (sent with every call).',
    },
    {
      provider: 'Twilio',
      label: 'Inbound messages webhook',
      url: `${base}/api/whatsapp/twilio/${slug}/inbound`,
      note: 'WhatsApp sender → "A message comes in" (HTTP POST).',
    },
    {
      provider: 'Twilio',
      label: 'Status callback',
      url: `${base}/api/whatsapp/twilio/${slug}/status`,
      note: "Sent with every message; paste it as the sender's status callback URL too.",
    },
    {
      provider: 'Meta',
      label: 'Webhook callback URL',
      url: `${base}/api/whatsapp/meta/${slug}/webhook`,
      note: 'App Dashboard → WhatsApp → Configuration, with the verify token; subscribe to "messages".',
    },
    {
      provider: 'Cal.com',
      label: 'Webhook subscriber URL',
      url: `${base}/api/webhooks/calcom/${slug}`,
      note: 'Settings → Developer → Webhooks, with the webhook secret; booking created, cancelled and rescheduled.',
    },
  ];
}

/** Why providers could not call PUBLIC_BASE_URL, or null when it is a public https address. */
export function publicUrlWarning(publicBaseUrl: string): string | null {
  const url = new URL(publicBaseUrl);
  if (isLocalHost(url.hostname)) {
    return (
      `PUBLIC_BASE_URL is ${publicBaseUrl}, a local address: Vapi, Twilio, Meta and Cal.com cannot reach it, ` +
      "so their webhooks will not arrive. Set PUBLIC_BASE_URL to the service's public https address."
    );
  }
  if (url.protocol !== 'https:')
    return (
      `PUBLIC_BASE_URL is ${publicBaseUrl}, not https: ` +
      "providers would send their secrets and your leads' data in clear. Use an https address."
    );
  return null;
}

/** How Vapi authenticates to us, without the secret. */
export function voiceAuthKind(workspace: WorkspaceRow, settings: WorkspaceSettings): 'secret' | 'hmac' | null {
  return settings.voice ? serverAuthOf(workspace.id, settings.voice).kind : null;
}

import type { Config } from '../../config/config.ts';
import type { Pool } from '../../db/pool.ts';
import type { CalcomClient } from '../../scheduling/calcom/calcom-client.ts';
import type { Logger } from '../../shared/logger.ts';
import type { VoiceSettingsChecker } from '../../voice/voice-provider.ts';
import type { WorkspaceRow } from '../workspace-queries.ts';
import type { WorkspaceSettings } from '../workspace-config.ts';
import { verifyCalcom, verifyModel } from './verify-booking-model.ts';
import type { MissingSection, VerifyLine } from './verify-line.ts';
import { verifyVapi } from './verify-vapi.ts';
import { verifyWhatsapp } from './verify-whatsapp.ts';

// The checks of `leadintake workspace verify` and of the dashboard's Test connection
// (docs/DASHBOARD.md, "Providers, API keys and team"): one function, so both ask the providers
// exactly the same read-only questions through the same clients and word the answers the same.
// The CLI prints the result; the admin API returns it as JSON.

/** The provider groups a Test connection button can ask about on its own. */
export const PROVIDER_GROUPS = ['voice', 'whatsapp', 'scheduling', 'model'] as const;
export type ProviderGroup = (typeof PROVIDER_GROUPS)[number];

/** The installation's clients the checks ask (src/verify-clients.ts builds them). */
export interface VerifyClients {
  voice: VoiceSettingsChecker;
  scheduling: Pick<CalcomClient, 'getEventType'>;
}

export interface CheckDeps {
  config: Config;
  pool: Pool;
  log: Logger;
  clients: VerifyClients;
}

export interface CheckResult {
  lines: VerifyLine[];
  missing: MissingSection[];
  /** Failed lines plus missing required sections. */
  failed: number;
}

/**
 * Runs the checks of the workspace's providers: every group its channel uses (`only` absent, the
 * CLI), or one group (a Test connection button). A missing channel section is a failure; a
 * missing `scheduling` section is only reported.
 */
export async function checkWorkspace(
  workspace: WorkspaceRow,
  settings: WorkspaceSettings,
  deps: CheckDeps,
  only?: ProviderGroup,
): Promise<CheckResult> {
  const wants = (g: ProviderGroup) =>
    only ? only === g : g === 'scheduling' || (workspace.channel === 'voice' ? g === 'voice' : g !== 'voice');
  const missing: MissingSection[] = [];
  const runs: Array<Promise<VerifyLine[]>> = [];
  const { config } = deps;

  if (wants('voice')) {
    if (settings.voice) {
      runs.push(
        verifyVapi(settings.voice, deps.clients.voice, { pool: deps.pool, log: deps.log, workspaceId: workspace.id }),
      );
    } else {
      missing.push({
        section: 'voice',
        required: workspace.channel === 'voice',
        note:
          'no "voice" section: live leads cannot be called (a live POST answers 502) ' +
          'until it is added with workspace update',
      });
    }
  }
  if (wants('whatsapp')) {
    if (settings.whatsapp) runs.push(verifyWhatsapp(settings.whatsapp, config));
    else
      missing.push({
        section: 'whatsapp',
        required: workspace.channel === 'whatsapp',
        note:
          'no "whatsapp" section: live leads cannot be messaged (they go to needs_human) ' +
          'until it is added with workspace update',
      });
  }
  if (wants('model')) runs.push(verifyModel(settings.llm, config));
  if (wants('scheduling')) {
    if (settings.scheduling) runs.push(verifyCalcom(settings.scheduling, deps.clients.scheduling));
    else
      missing.push({
        section: 'scheduling',
        required: false,
        note:
          'no "scheduling" section (optional): the agent offers no times; ' +
          'leads who want to book are handed to a human',
      });
  }

  const lines = (await Promise.all(runs)).flat();
  const failed = lines.filter((l) => !l.ok).length + missing.filter((m) => m.required).length;
  return { lines, missing, failed };
}

const PRIVATE_HOST = new RegExp(
  String.raw`^(localhost|127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|169\.254\.|0\.0\.0\.0$|` +
    String.raw`\[?::1\]?$|\[?f[cd][0-9a-f]{2}:|\[?fe80:)`,
  'i',
);

/** Whether providers on the internet can reach the host (loopback, private ranges and .local cannot). */
export function isLocalHost(host: string): boolean {
  return PRIVATE_HOST.test(host) || /(^|\.)local$|(^|\.)localhost$/i.test(host);
}

/** Providers call PUBLIC_BASE_URL from the internet: a loopback or private address cannot work. */
export function reachabilityWarnings(
  publicBaseUrl: string,
  caller = 'Vapi',
  consequence = 'calls would get no events or tool answers',
): string[] {
  const host = new URL(publicBaseUrl).hostname;
  if (isLocalHost(host))
    return [`PUBLIC_BASE_URL is ${publicBaseUrl}; ${caller} cannot reach a local address, so ${consequence}.`];
  if (!publicBaseUrl.startsWith('https://'))
    return [`PUBLIC_BASE_URL is ${publicBaseUrl}; use https so the secret is not sent in clear.`];
  return [];
}

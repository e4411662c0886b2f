import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { VapiClient } from '../voice/vapi/vapi-client.ts';
import { serverAuthOf, vapiServerUrls } from '../voice/vapi/vapi-server-settings.ts';
import { recordVoiceExchange } from '../voice/voice-exchange-log.ts';
import type { LookupResult, VoiceSettingsChecker } from '../voice/voice-provider.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { CliError } from './args.ts';

// `leadintake workspace verify S`: asks Vapi whether the workspace's assistant and phone number
// exist (GET /assistant/{id}, GET /phone-number/{id}, with its API key), says which setting is
// wrong, and prints the server URLs Vapi is given with every call. Exit 0 when all is well.

type Check = { ok: true; note: string } | { ok: false; note: string };

export interface VerifyOptions {
  json: boolean;
  showSecret: boolean;
  /** Defaults to the real Vapi client on VAPI_BASE_URL. */
  checker?: VoiceSettingsChecker;
  /** Defaults to warnings on stderr, like the rest of the CLI. */
  log?: Logger;
}

export async function verifyWorkspace(slug: string, opts: VerifyOptions, config: Config, pool: Pool, service: WorkspaceService): Promise<number> {
  const log = opts.log ?? createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, process.stderr);
  const workspace = await service.findBySlug(slug);
  if (!workspace) throw new CliError(`No workspace "${slug}".`);
  if (workspace.channel !== 'voice') throw new CliError(`Workspace "${slug}" is a ${workspace.channel} workspace; verify checks voice settings.`);
  const voice = service.settingsOf(workspace).voice;
  if (!voice) throw new CliError(`Workspace "${slug}" has no voice settings; add a "voice" section with workspace update.`);

  const checker = opts.checker ?? new VapiClient({ baseUrl: config.VAPI_BASE_URL, timeoutMs: config.VAPI_TIMEOUT_MS });
  const [assistant, phone] = await Promise.all([checker.getAssistant(voice.apiKey, voice.assistantId), checker.getPhoneNumber(voice.apiKey, voice.phoneNumberId)]);
  for (const r of [assistant, phone]) {
    if (r.exchange) await recordVoiceExchange(pool, log, { workspaceId: workspace.id, exchange: r.exchange, outcome: r.ok ? 'found' : 'failed', secrets: [voice.apiKey] });
  }
  const keyRejected = [assistant, phone].every((r) => !r.ok && r.httpStatus === 401);
  const checks: Record<'apiKey' | 'assistant' | 'phoneNumber', Check> = {
    apiKey: keyRejected
      ? { ok: false, note: 'Vapi rejected the API key (401): check voice.apiKey (the private key, not the public one)' }
      : assistant.ok || phone.ok || [assistant, phone].some((r) => !r.ok && r.httpStatus === 404)
        ? { ok: true, note: 'accepted by Vapi' }
        : { ok: false, note: failure(assistant, 'voice.apiKey') },
    assistant: keyRejected ? { ok: false, note: 'not checked (API key rejected)' } : lookupCheck(assistant, voice.assistantId, 'voice.assistantId'),
    phoneNumber: keyRejected ? { ok: false, note: 'not checked (API key rejected)' } : lookupCheck(phone, voice.phoneNumberId, 'voice.phoneNumberId'),
  };
  const urls = vapiServerUrls(config.PUBLIC_BASE_URL, workspace.slug);
  const auth = serverAuthOf(workspace.id, voice);
  const authText = auth.kind === 'hmac'
    ? `HMAC signature (credential ${auth.credentialId}, header ${auth.plan.signatureHeader})`
    : `X-Vapi-Secret (${voice.serverSecret ? 'voice.serverSecret' : 'derived from the API key'})`;
  const warnings = reachabilityWarnings(config.PUBLIC_BASE_URL);
  const ok = Object.values(checks).every((c) => c.ok);

  if (opts.json) {
    console.log(JSON.stringify({
      ok,
      checks,
      serverUrls: urls,
      serverAuth: auth.kind,
      ...(opts.showSecret && auth.kind === 'secret' ? { serverSecret: auth.secret } : {}),
      warnings,
    }));
    return ok ? 0 : 1;
  }
  console.log(`Workspace ${workspace.slug} (voice): Vapi settings`);
  const label = { apiKey: 'API key', assistant: 'assistant', phoneNumber: 'phone number' } as const;
  for (const [k, c] of Object.entries(checks) as Array<[keyof typeof label, Check]>) {
    console.log(`  ${c.ok ? 'ok  ' : 'FAIL'}  ${label[k].padEnd(12)}  ${c.note}`);
  }
  console.log('Server URLs (sent to Vapi with every call):');
  console.log(`  events  ${urls.events}`);
  console.log(`  tools   ${urls.tools}`);
  console.log(`  auth    ${authText}`);
  if (opts.showSecret && auth.kind === 'secret') console.log(`  secret  ${auth.secret}`);
  for (const w of warnings) console.log(`warning: ${w}`);
  return ok ? 0 : 1;
}

function lookupCheck(r: LookupResult, id: string, setting: string): Check {
  if (r.ok) return { ok: true, note: `${id} exists` };
  // Vapi answers 400 for an id that is not a UUID, 404 for an unknown one.
  if (r.httpStatus === 404 || r.httpStatus === 400) return { ok: false, note: `${id} not found (${r.httpStatus}): check ${setting}` };
  return { ok: false, note: failure(r, setting) };
}

function failure(r: LookupResult, setting: string): string {
  if (r.ok) return 'ok';
  if (r.httpStatus === undefined) return `${r.message} Nothing could be checked.`;
  return `Vapi answered ${r.httpStatus}: ${r.message.slice(0, 200)} (${setting})`;
}

/** Vapi calls PUBLIC_BASE_URL from the internet: a loopback or private address cannot work. */
function reachabilityWarnings(publicBaseUrl: string): string[] {
  const host = new URL(publicBaseUrl).hostname;
  const local = host === 'localhost' || /^(127\.|10\.|192\.168\.|172\.(1[6-9]|2\d|3[01])\.|0\.0\.0\.0$|\[?::1\]?$)/.test(host);
  const out: string[] = [];
  if (local) out.push(`PUBLIC_BASE_URL is ${publicBaseUrl}; Vapi cannot reach a local address, so calls would get no events or tool answers.`);
  else if (!publicBaseUrl.startsWith('https://')) out.push(`PUBLIC_BASE_URL is ${publicBaseUrl}; use https so the secret is not sent in clear.`);
  return out;
}

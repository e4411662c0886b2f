import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import { createLogger, type Logger } from '../shared/logger.ts';
import { serverAuthOf, vapiServerUrls } from '../voice/vapi/vapi-server-settings.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { CliError } from './args.ts';
import { checkWorkspace, reachabilityWarnings, type VerifyClients } from '../workspaces/verify/workspace-checks.ts';

// `leadintake workspace verify S`: asks every provider the workspace is configured for whether its
// settings are right, with read-only requests through the same clients the service uses: Vapi
// (voice), Twilio or Meta (WhatsApp), Cal.com (both) and the chat model (WhatsApp; a call's model
// lives in the Vapi assistant). One PASS/FAIL line per check names what is wrong; a missing
// channel section fails (live leads cannot be contacted), a missing `scheduling` section is only
// reported. Voice workspaces also get the server URLs Vapi is given. Exit 0 when nothing failed.
// The checks themselves live in src/workspaces/verify/ (the dashboard's Test connection runs them too).

export interface VerifyOptions {
  json: boolean;
  showSecret: boolean;
  /** Defaults to warnings on stderr, like the rest of the CLI. */
  log?: Logger;
}

export async function verifyWorkspace(
  slug: string,
  opts: VerifyOptions,
  config: Config,
  pool: Pool,
  service: WorkspaceService,
  clients: VerifyClients,
): Promise<number> {
  const log = opts.log ?? createLogger(config.LOG_LEVEL === 'info' ? 'warn' : config.LOG_LEVEL, process.stderr);
  const workspace = await service.findBySlug(slug);
  if (!workspace) throw new CliError(`No workspace "${slug}".`);
  const settings = service.settingsOf(workspace);
  const { lines, missing, failed } = await checkWorkspace(workspace, settings, {
    config,
    pool,
    log,
    clients,
  });
  const voice = workspace.channel === 'voice' && settings.voice ? settings.voice : undefined;
  const urls = voice ? vapiServerUrls(config.PUBLIC_BASE_URL, workspace.slug) : undefined;
  const auth = voice ? serverAuthOf(workspace.id, voice) : undefined;
  const warnings = voice ? reachabilityWarnings(config.PUBLIC_BASE_URL) : [];

  if (opts.json) {
    console.log(
      JSON.stringify({
        ok: failed === 0,
        checks: lines,
        notConfigured: missing,
        ...(urls && auth ? { serverUrls: urls, serverAuth: auth.kind } : {}),
        ...(opts.showSecret && auth?.kind === 'secret' ? { serverSecret: auth.secret } : {}),
        warnings,
      }),
    );
    return failed === 0 ? 0 : 1;
  }
  console.log(`Workspace ${workspace.slug} (${workspace.channel})`);
  for (const l of lines)
    console.log(`  ${l.ok ? 'PASS' : 'FAIL'}  ${l.provider.padEnd(8)} ${l.check.padEnd(13)} ${l.note}`);
  for (const m of missing)
    console.log(`  ${m.required ? 'FAIL' : 'SKIP'}  ${m.section.padEnd(8)} ${'not set'.padEnd(13)} ${m.note}`);
  if (urls && auth && voice) {
    const authText =
      auth.kind === 'hmac'
        ? `HMAC signature (credential ${auth.credentialId}, header ${auth.plan.signatureHeader})`
        : `X-Vapi-Secret (${voice.serverSecret ? 'voice.serverSecret' : 'derived from the API key'})`;
    console.log('Server URLs (sent to Vapi with every call):');
    console.log(`  events  ${urls.events}`);
    console.log(`  tools   ${urls.tools}`);
    console.log(`  auth    ${authText}`);
    if (opts.showSecret && auth.kind === 'secret') console.log(`  secret  ${auth.secret}`);
  }
  for (const w of warnings) console.log(`warning: ${w}`);
  const total = lines.length + missing.filter((m) => m.required).length;
  console.log(
    failed === 0
      ? `All ${total} checks passed.`
      : `${failed} of ${total} checks failed: fix the settings named above (docs/WORKSPACE-CONFIG.md), ` +
          'then run verify again.',
  );
  return failed === 0 ? 0 : 1;
}

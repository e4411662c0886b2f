import type { Config } from '../config/config.ts';
import type { Pool } from '../db/pool.ts';
import type { Sandbox } from '../sandbox/sandbox.ts';
import type { SchedulingProvider } from '../scheduling/scheduling-provider.ts';
import type { Clock } from '../shared/clock.ts';
import type { Logger } from '../shared/logger.ts';
import type { VapiSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';
import type { WorkspaceService } from '../workspaces/workspace-service.ts';
import { vapiRoutes } from './voice-server-routes.ts';
import { VapiServerService } from './voice-server-service.ts';
import { serverAuthForVapi, serverAuthOf, vapiServerUrls } from './vapi/vapi-server-settings.ts';
import { vapiCallTools } from './vapi/vapi-tools.ts';
import { VoiceAttempter } from './voice-attempter.ts';
import { withVoiceExchangeLog } from './voice-exchange-log.ts';
import type { PlaceCallRequest, VoiceProvider } from './voice-provider.ts';

// The voice channel's pieces, wired once by the composition root (src/composition.ts): the provider (with its
// integration log),
// what each call is told about our server, and the routes Vapi calls.

/** The only server messages we act on; Vapi sends these to the call's server URL. */
export const SERVER_MESSAGES = ['status-update', 'end-of-call-report', 'tool-calls'];
/** Vapi's own default and maximum wait for an answer is 20 s (Vapi's OpenAPI document `Server.timeoutSeconds`). */
const SERVER_TIMEOUT_SECONDS = 20;

export type CallOptions = Pick<PlaceCallRequest, 'server' | 'serverMessages' | 'tools'>;

/** Our server URL, its credentials and (unless `appendTools` is false) our tools, for one call. */
export function vapiCallOptions(
  publicBaseUrl: string,
  workspace: Pick<WorkspaceRow, 'id' | 'slug'>,
  voice: VapiSettings,
): CallOptions {
  const urls = vapiServerUrls(publicBaseUrl, workspace.slug);
  const auth = serverAuthForVapi(serverAuthOf(workspace.id, voice));
  const tools =
    voice.appendTools === false
      ? []
      : vapiCallTools({ url: urls.tools, timeoutSeconds: SERVER_TIMEOUT_SECONDS, ...auth });
  return {
    server: { url: urls.events, timeoutSeconds: SERVER_TIMEOUT_SECONDS, ...auth },
    serverMessages: SERVER_MESSAGES,
    ...(tools.length > 0 ? { tools } : {}),
  };
}

export interface VoiceChannelDeps {
  config: Config;
  pool: Pool;
  log: Logger;
  clock: Clock;
  voice: VoiceProvider;
  workspaces: WorkspaceService;
  scheduling: SchedulingProvider;
  sandbox: Sandbox;
}

/** What a sandbox call needs: the simulated Vapi (with the integration log), its settings, our /sandbox URLs. */
export interface SandboxDial {
  provider: VoiceProvider;
  settings: VapiSettings;
  callOptions: (workspace: WorkspaceRow, voice: VapiSettings) => CallOptions;
}

export function voiceChannel(deps: VoiceChannelDeps) {
  const common = {
    pool: deps.pool,
    log: deps.log,
    clock: deps.clock,
    workspaces: deps.workspaces,
    scheduling: deps.scheduling,
    toolDeadlineMs: deps.config.VAPI_TOOL_DEADLINE_MS,
  };
  const service = new VapiServerService(common);
  // The twin for sandbox calls, mounted under /sandbox: same code, simulated credentials and calendar.
  const sandboxService = new VapiServerService({ ...common, sandbox: deps.sandbox });
  const provider = withVoiceExchangeLog(deps.voice, deps.pool, deps.log);
  const callOptions = (workspace: WorkspaceRow, voice: VapiSettings) =>
    vapiCallOptions(deps.config.PUBLIC_BASE_URL, workspace, voice);
  const sandboxDial = async (): Promise<SandboxDial> => {
    const sb = await deps.sandbox.providers();
    return {
      provider: withVoiceExchangeLog(sb.voice, deps.pool, deps.log),
      settings: sb.settings.voice!,
      callOptions: sb.callOptions,
    };
  };
  return {
    provider,
    callOptions,
    routes: vapiRoutes({ service, workspaces: deps.workspaces }),
    sandboxRoutes: vapiRoutes({ service: sandboxService, workspaces: deps.workspaces }),
    sandboxDial,
    service,
    /** The contact plan's calls again (registered in src/composition.ts). */
    attempter: new VoiceAttempter({
      pool: deps.pool,
      log: deps.log,
      clock: deps.clock,
      dial: async (livemode, workspace) =>
        livemode ? { provider, settings: deps.workspaces.settingsOf(workspace).voice, callOptions } : sandboxDial(),
    }),
  };
}

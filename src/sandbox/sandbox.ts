import type { SchedulingProvider } from '../scheduling/scheduling-provider.ts';
import type { PlaceCallRequest, VoiceProvider } from '../voice/voice-provider.ts';
import type { ConversationProviders } from '../whatsapp/turn-providers.ts';
import type { VapiSettings, WorkspaceSettings } from '../workspaces/workspace-config.ts';
import type { WorkspaceRow } from '../workspaces/workspace-queries.ts';

// Test mode (docs/SANDBOX.md). A sandbox lead runs through the real service (lead service, queue,
// worker, turn engine, tools, webhooks, state machine) with every provider replaced by the
// in-process simulators, whatever the workspace's own settings say. This file is the interface the
// service sees; src/sandbox/sandbox-providers.ts, the one production file allowed to import the
// simulators, implements it.

/** Sandbox provider callbacks arrive under PUBLIC_BASE_URL + this prefix (the live routes' twins). */
export const SANDBOX_ROUTE_PREFIX = '/sandbox';

/** The providers of sandbox leads, once the simulators of this process run. */
export interface SandboxProviders {
  /** The settings every sandbox lead runs with: simulator credentials only, never the workspace's. */
  settings: WorkspaceSettings;
  voice: VoiceProvider;
  /** Our server URLs (under the sandbox prefix) and tools, for a sandbox call. */
  callOptions(
    workspace: WorkspaceRow,
    voice: VapiSettings,
  ): Pick<PlaceCallRequest, 'server' | 'serverMessages' | 'tools'>;
  scheduling: SchedulingProvider;
  conversation: ConversationProviders;
}

export interface Sandbox {
  /** Starts this process's simulators on first use; the same providers afterwards. */
  providers(): Promise<SandboxProviders>;
  /** Resolves when this process's simulators have no call, callback or reply under way (tests). */
  settled(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The sandbox of a process, its simulators' code loaded only when the first sandbox lead needs
 * them: a process that never sees one keeps neither their modules nor their memory.
 */
export function lazySandbox<O>(options: O, load: () => Promise<{ createSandbox(o: O): Sandbox }>): Sandbox {
  let inner: Promise<Sandbox> | null = null;
  const get = () =>
    (inner ??= load()
      .then((m) => m.createSandbox(options))
      .catch((err) => {
        inner = null;
        throw err;
      }));
  return {
    providers: async () => (await get()).providers(),
    settled: async () => {
      if (inner) await (await inner).settled();
    },
    close: async () => {
      if (inner) await (await inner.catch(() => null))?.close();
    },
  };
}

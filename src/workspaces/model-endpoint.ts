import type { Config } from '../config/config.ts';
import { hostProblem, type EgressOptions } from '../shared/egress-policy.ts';
import type { LlmSettings } from './workspace-config.ts';

// Which model server a workspace's turns and Test connection talk to, and with which key. The
// installation's key (OPENAI_API_KEY) belongs to the operator: it is sent only to the
// installation's base URL (OPENAI_BASE_URL). A workspace that names its own model server must
// give its own key, and that server is reached only where the address policy allows
// (src/shared/egress-policy.ts). Used when the settings are saved (admin API, config file) and
// again at every use, so settings stored before this rule cannot leak the key either.

export interface ModelEndpoint {
  baseUrl: string;
  apiKey: string;
  model: string;
  /** Set when the workspace chose the base URL: its connections go through the address policy. */
  egress?: EgressOptions;
  /** The setting that holds the key and the model name, for messages. */
  keySetting: string;
  modelSetting: string;
}

export const OWN_URL_NEEDS_OWN_KEY =
  "llm.baseUrl names a model server of the workspace's own, so llm.apiKey must be set too: the installation's " +
  "key is sent only to the installation's model server (set both, or neither)";

const normalized = (url: string) => url.replace(/\/+$/, '');

/** Whether the workspace chose a base URL other than the installation's. */
function ownBaseUrl(llm: LlmSettings | undefined, config: Config): string | null {
  const url = llm?.baseUrl;
  return url !== undefined && normalized(url) !== normalized(config.OPENAI_BASE_URL) ? url : null;
}

export function egressOptions(config: Config): EgressOptions {
  return { allowPrivateNetworks: config.EGRESS_ALLOW_PRIVATE_NETWORKS };
}

/** The endpoint to use, or why none may be used. */
export function modelEndpoint(
  llm: LlmSettings | undefined,
  config: Config,
): { ok: true; endpoint: ModelEndpoint } | { ok: false; problem: string } {
  const own = ownBaseUrl(llm, config);
  if (own !== null && !llm?.apiKey) return { ok: false, problem: OWN_URL_NEEDS_OWN_KEY };
  return {
    ok: true,
    endpoint: {
      baseUrl: own ?? config.OPENAI_BASE_URL,
      apiKey: llm?.apiKey ?? config.OPENAI_API_KEY ?? '',
      model: llm?.model ?? config.LLM_MODEL,
      ...(own !== null ? { egress: egressOptions(config) } : {}),
      keySetting: llm?.apiKey ? 'llm.apiKey' : 'OPENAI_API_KEY (or llm.apiKey)',
      modelSetting: llm?.model ? 'llm.model' : 'LLM_MODEL (or llm.model)',
    },
  };
}

/** Why an `llm` section may not be saved, with the field to name, or null. */
export function llmSettingsProblem(
  llm: LlmSettings | undefined,
  config: Config,
): { field: 'apiKey' | 'baseUrl'; message: string } | null {
  const own = ownBaseUrl(llm, config);
  if (own === null) return null;
  const address = hostProblem(new URL(own), egressOptions(config));
  if (address) return { field: 'baseUrl', message: `llm.baseUrl ${address}` };
  if (!llm?.apiKey) return { field: 'apiKey', message: OWN_URL_NEEDS_OWN_KEY };
  return null;
}

import type { Config } from './config/config.ts';
import { CalcomClient } from './scheduling/calcom/calcom-client.ts';
import { VapiClient } from './voice/vapi/vapi-client.ts';
import type { VerifyClients } from './workspaces/verify/workspace-checks.ts';

// The installation's provider clients that `leadintake workspace verify` and the dashboard's Test
// connection ask. Built apart from src/composition.ts so that the CLI's verify loads only these.
export function verifyClients(config: Config): VerifyClients {
  return {
    voice: new VapiClient({ baseUrl: config.VAPI_BASE_URL, timeoutMs: config.VAPI_TIMEOUT_MS }),
    // One attempt: a verify run should answer now, not after back-off.
    scheduling: new CalcomClient({ baseUrl: config.CALCOM_BASE_URL, maxRetries: 0 }),
  };
}

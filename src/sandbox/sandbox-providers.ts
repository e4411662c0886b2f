import crypto from 'node:crypto';
import type { Config } from '../config/config.ts';
import { CalcomClient } from '../scheduling/calcom/calcom-client.ts';
import type { Logger } from '../shared/logger.ts';
import {
  DEFAULT_EVENT_TYPE,
  startCalcomSimulator,
  type CalcomSimulator,
} from '../simulators/calcom/calcom-simulator.ts';
import { startChatSimulator, type ChatSimulator } from '../simulators/chat-model/chat-simulator.ts';
import type { LeadPersonaName } from '../simulators/personas/lead-personas.ts';
import type { VapiPersona } from '../simulators/personas/vapi-personas.ts';
import {
  SIM_ACCOUNT_SID,
  SIM_TEMPLATE_BODY,
  SIM_TEMPLATE_SID,
  SIM_WHATSAPP_SENDER,
  startTwilioSimulator,
  type TwilioSimulator,
} from '../simulators/twilio/twilio-simulator.ts';
import {
  SIM_ASSISTANT_ID,
  SIM_PHONE_NUMBER_ID,
  startVapiSimulator,
  type VapiCall,
  type VapiSimulator,
} from '../simulators/vapi/vapi-simulator.ts';
import { VapiClient } from '../voice/vapi/vapi-client.ts';
import { vapiCallOptions } from '../voice/voice-channel.ts';
import { defaultConversationProviders } from '../whatsapp/turn-providers.ts';
import type { WorkspaceSettings } from '../workspaces/workspace-config.ts';
import { sandboxOutcome, type SandboxOutcome } from './sandbox-outcomes.ts';
import { SANDBOX_ROUTE_PREFIX, type Sandbox, type SandboxProviders } from './sandbox.ts';

// The sandbox's composition root: the one production file that imports the simulators
// (test/unit/layout-boundaries.test.ts). Each process (`serve`, `worker`) runs its own simulators on
// 127.0.0.1, started at the first sandbox lead it handles, and points the REAL clients at them:
// VapiClient, TwilioClient, the OpenAI-compatible chat client and CalcomClient. The simulators call
// back like the providers do, to PUBLIC_BASE_URL under /sandbox (Vapi's events and tool calls,
// Twilio's status callbacks and the simulated lead's replies), so whichever process receives a
// callback and whichever runs the next turn, the conversation goes on (docs/SANDBOX.md).

export interface SandboxOptions {
  config: Config;
  log: Logger;
  /**
   * The installation's secret (its encryption key). The sandbox credentials derive from it, so all
   * processes of one installation agree on them and nobody without it can forge a sandbox callback.
   */
  secret: Buffer;
  /** `life` (default): timing close to a real conversation. `instant`: no waits (tests). */
  pace?: 'life' | 'instant';
}

/** Real waits in `life` pace: a WhatsApp lead is booked in about 10 s, a call lasts about 15 s. */
const LIFE = { vapiMsPerSecond: 300, twilioStatusMs: 100, leadReplyMs: 900, modelMs: 150 };
/** Keep the simulators' request records short: a sandbox runs for days. */
const RECORDS_KEPT = 200;

/** The simulated WhatsApp lead; `templatesSent` counts the templates sent to its number, this one included. */
function whatsappPersona(outcome: SandboxOutcome, templatesSent: number): LeadPersonaName {
  switch (outcome) {
    case 'no-answer':
      return 'goes-quiet';
    case 'model-failure':
      return 'breaks-model';
    case 'answers-second-follow-up':
      // Silent to the first template and the first follow-up; answers the 2nd follow-up and on.
      return templatesSent < 3 ? 'goes-quiet' : 'books';
    case 'not-a-fit':
    case 'wants-human':
    case 'opts-out':
      return outcome;
    default:
      return 'books';
  }
}

/** The simulated callee of the `nth` call to a number (1: the first). */
function voicePersona(outcome: SandboxOutcome, nth: number): VapiPersona {
  switch (outcome) {
    case 'answers-third-call':
      return nth <= 2 ? 'no-answer' : 'books';
    case 'answers-second-call':
      return nth === 1 ? 'no-answer' : 'books';
    case 'busy-then-answers':
      return nth === 1 ? 'busy' : 'books';
    case 'not-a-fit':
    case 'wants-human':
    case 'no-answer':
    case 'opts-out':
    case 'voicemail':
      return outcome;
    default:
      return 'books';
  }
}

/** Sandbox wording for a refused call, in the shape of Vapi's 400s (NestJS error body). */
export const SANDBOX_CALL_REJECTED = (number: string) => ({
  message: `Couldn't Create Call. The sandbox refuses numbers ending in 0006: ${number} cannot be dialled.`,
  error: 'Bad Request',
  statusCode: 400,
});

interface Running {
  providers: SandboxProviders;
  sims: { vapi: VapiSimulator; twilio: TwilioSimulator; chat: ChatSimulator; calcom: CalcomSimulator };
  trim: NodeJS.Timeout;
}

/** This process's sandbox (`serve`, `worker`, tests): simulators started at the first sandbox lead. */
export function createSandbox(o: SandboxOptions): Sandbox {
  let running: Promise<Running> | null = null;
  return {
    providers() {
      running ??= start(o).catch((err) => {
        running = null; // a later lead tries again
        throw err;
      });
      return running.then((r) => r.providers);
    },
    async settled() {
      const r = await running?.catch(() => null);
      if (!r) return;
      // A call's tool answers may queue more work: wait until both are quiet together.
      do {
        await r.sims.vapi.settled().catch(() => {});
        await r.sims.twilio.idle();
      } while (r.sims.twilio.pending > 0);
    },
    async close() {
      const r = await running?.catch(() => null);
      if (!r) return;
      clearInterval(r.trim);
      await Promise.all(Object.values(r.sims).map((s) => s.close()));
    },
  };
}

function derived(secret: Buffer, what: string): string {
  return crypto.createHmac('sha256', secret).update(`leadintake/sandbox/v1:${what}`).digest('hex');
}

async function start(o: SandboxOptions): Promise<Running> {
  const life = o.pace !== 'instant';
  const credentials = {
    vapiKey: `sandbox-${derived(o.secret, 'vapi-api-key').slice(0, 32)}`,
    vapiServerSecret: derived(o.secret, 'vapi-server-secret').slice(0, 40),
    twilioToken: derived(o.secret, 'twilio-auth-token').slice(0, 32),
    calcomKey: `cal_test_sandbox_${derived(o.secret, 'calcom-api-key').slice(0, 24)}`,
    chatKey: `sk-sandbox-${derived(o.secret, 'chat-api-key').slice(0, 32)}`,
  };
  const [vapi, twilio, chat, calcom] = await Promise.all([
    startVapiSimulator({
      apiKeys: [credentials.vapiKey],
      forgetEndedCalls: true,
      refuseCall: (body) => {
        const number = String((body.customer as { number?: unknown } | undefined)?.number ?? '');
        return sandboxOutcome(number, 'voice') === 'call-rejected' ? [400, SANDBOX_CALL_REJECTED(number)] : null;
      },
      autoPlay: {
        persona: (call: VapiCall, nth: number) =>
          voicePersona(
            sandboxOutcome(String((call.customer as { number?: unknown } | undefined)?.number ?? ''), 'voice'),
            nth,
          ),
        realMsPerSecond: life ? LIFE.vapiMsPerSecond : 0,
      },
    }),
    startTwilioSimulator({
      authToken: credentials.twilioToken,
      // Another process's simulator may have seen the lead's last message: our turn engine keeps the window.
      enforceWindow: false,
      statusDelayMs: life ? LIFE.twilioStatusMs : 0,
      replyDelayMs: life ? LIFE.leadReplyMs : 0,
      personaFor: (m) => {
        // The lead answers through the workspace's sandbox inbound URL, the twin of the status URL the send named.
        if (!m.statusCallback) return null;
        const url = new URL(m.statusCallback);
        url.pathname = url.pathname.replace(/\/status$/, '/inbound');
        url.search = '';
        return {
          name: whatsappPersona(sandboxOutcome(m.to, 'whatsapp'), m.templatesSent),
          inboundUrl: url.toString(),
          profileName: 'Sandbox Lead',
        };
      },
    }),
    startChatSimulator({ apiKeys: [credentials.chatKey], ...(life ? { delayMs: LIFE.modelMs } : {}) }),
    startCalcomSimulator({ apiKey: credentials.calcomKey, eventTypes: [DEFAULT_EVENT_TYPE], capacity: 'unlimited' }),
  ]);
  const settings: WorkspaceSettings = {
    voice: {
      provider: 'vapi',
      apiKey: credentials.vapiKey,
      assistantId: SIM_ASSISTANT_ID,
      phoneNumberId: SIM_PHONE_NUMBER_ID,
      serverSecret: credentials.vapiServerSecret,
    },
    whatsapp: {
      provider: 'twilio',
      accountSid: SIM_ACCOUNT_SID,
      authToken: credentials.twilioToken,
      from: SIM_WHATSAPP_SENDER,
      templateContentSid: SIM_TEMPLATE_SID,
      templateBody: SIM_TEMPLATE_BODY,
    },
    scheduling: { provider: 'calcom', apiKey: credentials.calcomKey, eventTypeId: DEFAULT_EVENT_TYPE.id },
    llm: { baseUrl: chat.baseUrl, apiKey: credentials.chatKey, model: 'sandbox-scripted-model' },
  };
  const callbackBase = `${o.config.PUBLIC_BASE_URL}${SANDBOX_ROUTE_PREFIX}`;
  // Every provider URL of the config is replaced, so nothing in here can reach a real provider
  // whatever a workspace's settings or the environment say.
  const simConfig: Config = {
    ...o.config,
    PUBLIC_BASE_URL: callbackBase,
    VAPI_BASE_URL: vapi.url,
    TWILIO_BASE_URL: twilio.url,
    WHATSAPP_GRAPH_BASE_URL: twilio.url,
    OPENAI_BASE_URL: chat.baseUrl,
    OPENAI_API_KEY: credentials.chatKey,
    CALCOM_BASE_URL: calcom.url,
  };
  const scheduling = new CalcomClient({ baseUrl: calcom.url });
  const providers: SandboxProviders = {
    settings,
    voice: new VapiClient({ baseUrl: vapi.url, timeoutMs: o.config.VAPI_TIMEOUT_MS }),
    callOptions: (workspace, voice) => vapiCallOptions(callbackBase, workspace, voice),
    scheduling,
    conversation: defaultConversationProviders(simConfig, { scheduling }),
  };
  const trim = setInterval(() => {
    for (const list of [
      vapi.calls,
      vapi.requests,
      vapi.deliveries,
      twilio.messages,
      twilio.requests,
      twilio.webhooks,
      chat.requests,
      calcom.requests,
    ]) {
      if (list.length > RECORDS_KEPT) list.splice(0, list.length - RECORDS_KEPT);
    }
    // Map order is insertion order: the oldest bookings go first.
    for (const uid of [...calcom.bookings.keys()].slice(0, Math.max(0, calcom.bookings.size - RECORDS_KEPT * 5)))
      calcom.bookings.delete(uid);
  }, 60_000);
  trim.unref();
  o.log.info({ vapi: vapi.url, twilio: twilio.url, chat: chat.url, calcom: calcom.url }, 'sandbox simulators started');
  return { providers, sims: { vapi, twilio, chat, calcom }, trim };
}

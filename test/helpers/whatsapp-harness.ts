import { gateConversation } from '../../src/contact-plan/suppression-gate.ts';
import { startChatSimulator, type ChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { defaultConversationProviders } from '../../src/whatsapp/turn-providers.ts';
import { TurnEngine } from '../../src/whatsapp/turn-engine.ts';
import { TurnWorker } from '../../src/whatsapp/turn-worker.ts';
import { freePort } from '../../src/db/embedded.ts';
import type { LeadPersonaName } from '../../src/simulators/personas/lead-personas.ts';
import { META_SIM, startMetaSimulator, type MetaSimulator } from '../../src/simulators/meta/meta-simulator.ts';
import { startTwilioSimulator, type TwilioSimulator } from '../../src/simulators/twilio/twilio-simulator.ts';
import { CalcomClient } from '../../src/scheduling/calcom/calcom-client.ts';
import {
  DEFAULT_EVENT_TYPE,
  startCalcomSimulator,
  type CalcomSimulator,
} from '../../src/simulators/calcom/calcom-simulator.ts';
import type { WorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { AGENT_TEST_NOW, SOLAR_AGENT } from './agent-harness.ts';
import { postLead, validLead } from './http.ts';
import { retryWhilePortTaken, startTestApp, TEST_ENCRYPTION_KEY, TestClock, type TestApp } from './test-app.ts';

// The WhatsApp channel end to end in one process: the real app listening on a port (the
// simulators post signed webhooks to it), the real turn engine and worker, and the Twilio, Meta,
// chat-completions and Cal.com simulators reached through the real clients. `settle()` runs jobs
// and waits for the simulators' webhooks until nothing is left: no sleeps.

export type WhatsappProvider = 'twilio' | 'meta';

export interface WhatsappHarness {
  app: TestApp;
  clock: TestClock;
  twilio: TwilioSimulator;
  meta: MetaSimulator;
  chat: ChatSimulator;
  calcom: CalcomSimulator;
  worker: TurnWorker;
  baseUrl: string;
  /** Environment for a `leadintake worker` process on this harness's database and simulators. */
  workerEnv(extra?: Record<string, string>): Record<string, string>;
  /** A WhatsApp workspace on `provider`, with the solar agent and working Cal.com settings. */
  workspace(
    provider: WhatsappProvider,
    extra?: Partial<WorkspaceConfig>,
  ): Promise<{ slug: string; apiKey: string; sandboxKey: string; workspaceId: string }>;
  /** The lead at `phone` answers as `persona` through the workspace's webhook URL. */
  persona(provider: WhatsappProvider, slug: string, phone: string, persona: LeadPersonaName): void;
  /** The lead writes a message of its own (outside the persona script). */
  leadSays(provider: WhatsappProvider, slug: string, phone: string, text: string): Promise<void>;
  /** POSTs a lead; returns its id and normalised phone. */
  submit(apiKey: string, overrides?: Record<string, unknown>): Promise<{ leadId: string; phone: string }>;
  /** Relays, runs turn jobs and waits for the simulators until no work is left; returns the jobs run. */
  settle(opts?: { ignoreBackoff?: boolean }): Promise<number>;
  close(): Promise<void>;
}

let counter = 0;

export interface WhatsappHarnessOptions {
  env?: Record<string, string>;
  /** Run the outbox relay (for worker processes; in-process tests drain it instead). */
  startRelay?: boolean;
  /** Delays of the simulated model and lead (worker tests spread work over time with them). */
  chatDelayMs?: number;
  replyDelayMs?: number;
  /** Where the test clock starts (AGENT_TEST_NOW by default); contact-plan tests start at the database's now. */
  clockStart?: number;
}

export function startWhatsappHarness(opts: WhatsappHarnessOptions = {}): Promise<WhatsappHarness> {
  return retryWhilePortTaken(() => startHarnessOnce(opts));
}

/** Starts everything, or closes what it started and throws: a failed start must not keep the test process alive. */
async function startHarnessOnce(opts: WhatsappHarnessOptions): Promise<WhatsappHarness> {
  const clock = new TestClock(opts.clockStart ?? AGENT_TEST_NOW);
  const port = await freePort();
  const baseUrl = `http://127.0.0.1:${port}`;
  const [twilio, meta, chat, calcom] = await Promise.all([
    startTwilioSimulator({ now: clock.read, ...(opts.replyDelayMs ? { replyDelayMs: opts.replyDelayMs } : {}) }),
    startMetaSimulator({ now: clock.read }),
    startChatSimulator({ ...(opts.chatDelayMs ? { delayMs: opts.chatDelayMs } : {}) }),
    startCalcomSimulator({ now: clock.read, eventTypes: [DEFAULT_EVENT_TYPE] }),
  ]);
  // Where the app and the worker processes find the simulators.
  const providerEnv = {
    PUBLIC_BASE_URL: baseUrl,
    TWILIO_BASE_URL: twilio.url,
    WHATSAPP_GRAPH_BASE_URL: meta.graphBaseUrl,
    OPENAI_BASE_URL: chat.baseUrl,
    OPENAI_API_KEY: chat.apiKey,
    CALCOM_BASE_URL: calcom.url,
  };
  const closeSimulators = () => Promise.all([twilio.close(), meta.close(), chat.close(), calcom.close()]);
  let app: TestApp;
  try {
    app = await startTestApp({
      clock,
      ...(opts.startRelay ? { startRelay: true } : {}),
      env: { PORT: String(port), ...providerEnv, ...opts.env },
    });
  } catch (err) {
    await closeSimulators();
    throw err;
  }
  try {
    await app.http.listen({ port, host: '127.0.0.1' });
  } catch (err) {
    await app.close();
    await closeSimulators();
    throw err;
  }
  // Behind the do-not-contact gate, as the composition root builds them (src/composition.ts).
  const providers = gateConversation(
    defaultConversationProviders(app.config, {
      chat: { sleep: async () => {} },
      scheduling: new CalcomClient({ baseUrl: calcom.url, sleep: async () => {} }),
    }),
    app.db.pool,
  );
  const engine = new TurnEngine({
    integrationLog: app.integrationLog,
    pool: app.db.pool,
    log: app.log,
    clock: clock.read,
    workspaces: app.workspaces,
    providers,
  });
  const worker = new TurnWorker({ boss: app.boss, engine, log: app.log, concurrency: 4 });

  const twilioInboundUrl = (slug: string) => `${baseUrl}/api/whatsapp/twilio/${slug}/inbound`;
  const metaWebhookUrl = (slug: string) => `${baseUrl}/api/whatsapp/meta/${slug}/webhook`;
  const h = () => harness;
  let settling: Promise<unknown> = Promise.resolve();
  async function settleLoop(o: { ignoreBackoff?: boolean }): Promise<number> {
    let total = 0;
    for (let round = 0; round < 100; round++) {
      await app.relay.drain();
      const ran = await worker.drainOnce(o);
      await Promise.all([twilio.idle(), meta.idle()]);
      total += ran;
      const { rows } = await app.db.pool.query('SELECT count(*)::int AS n FROM outbox');
      if (ran === 0 && rows[0].n === 0) return total;
    }
    throw new Error('the conversation did not settle within 100 rounds');
  }
  const harness: WhatsappHarness = {
    app,
    clock,
    twilio,
    meta,
    chat,
    calcom,
    worker,
    baseUrl,
    workerEnv: (extra = {}) => ({
      DATABASE_URL: app.db.url,
      LEADINTAKE_ENCRYPTION_KEY: TEST_ENCRYPTION_KEY,
      ...providerEnv,
      LOG_LEVEL: 'warn',
      // Child processes share the machine's 100 PostgreSQL connections with the other test files.
      DB_POOL_MAX: '4',
      ...extra,
    }),
    async workspace(provider, extra = {}) {
      const slug = `wa-${process.pid}-${++counter}`;
      const whatsapp: WorkspaceConfig['whatsapp'] =
        provider === 'twilio'
          ? {
              provider,
              accountSid: twilio.accountSid,
              authToken: twilio.authToken,
              from: twilio.sender,
              templateContentSid: twilio.templateSid,
            }
          : {
              provider,
              accessToken: META_SIM.accessToken,
              phoneNumberId: META_SIM.phoneNumberId,
              appSecret: META_SIM.appSecret,
              verifyToken: 'verify-token-for-tests',
              templateName: META_SIM.template.name,
              templateLanguage: META_SIM.template.language,
            };
      if (provider === 'meta') meta.setWebhookUrl(META_SIM.phoneNumberId, metaWebhookUrl(slug));
      const config: WorkspaceConfig = {
        whatsapp,
        agent: { ...SOLAR_AGENT, questions: SOLAR_AGENT.questions.map((q) => ({ ...q })) },
        scheduling: { provider: 'calcom', apiKey: calcom.apiKey, eventTypeId: DEFAULT_EVENT_TYPE.id },
        ...extra,
      };
      const created = await app.createWorkspace('whatsapp', config, slug);
      return { slug, apiKey: created.apiKey, sandboxKey: created.sandboxKey, workspaceId: created.workspaceId };
    },
    persona(provider, slug, phone, persona) {
      if (provider === 'twilio') h().twilio.setPersona(phone, persona, { inboundUrl: twilioInboundUrl(slug) });
      else h().meta.setPersona(phone, persona, { webhookUrl: metaWebhookUrl(slug) });
    },
    async leadSays(provider, slug, phone, text) {
      const status =
        provider === 'twilio'
          ? (await twilio.leadSays(phone, text, { inboundUrl: twilioInboundUrl(slug) })).httpStatus
          : (await meta.leadSays(phone, text, { webhookUrl: metaWebhookUrl(slug) })).status;
      if (status === undefined || status >= 300) throw new Error(`inbound webhook answered ${status}`);
    },
    async submit(apiKey, overrides = {}) {
      const body = validLead({ email: 'lead@example.com', ...overrides });
      // Personas are set before the POST (by phone), so pick the phone with uniquePhone() first.
      const res = await postLead(app.http, apiKey, body);
      if (res.status !== 201) throw new Error(`POST answered ${res.status}: ${JSON.stringify(res.body)}`);
      return { leadId: res.body.leadId, phone: `+${String(body.phone).replace(/\D/g, '')}` };
    },
    settle(settleOpts = {}) {
      // One loop at a time: a concurrent test's loop may be running this test's jobs, and this
      // one must not see "nothing to fetch" before those have finished.
      const run = settling.then(() => settleLoop(settleOpts));
      settling = run.catch(() => 0);
      return run;
    },
    async close() {
      await app.close();
      await closeSimulators();
    },
  };
  return harness;
}

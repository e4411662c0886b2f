import { after, afterEach, before, beforeEach } from 'node:test';
import type { ChatMessage, ChatRequest } from '../../src/agent/chat-model.ts';
import { OpenAIChatClient, type OpenAIChatClientOptions } from '../../src/agent/openai/openai-chat-client.ts';
import { toolDeclarations } from '../../src/agent/tool-registry.ts';
import {
  CHAT_SIM_API_KEY,
  startChatSimulator,
  type ChatSimulator,
} from '../../src/simulators/chat-model/chat-simulator.ts';

// The chat-completions simulator tests' setup: the simulator, the requests they send it, and a
// client whose waits are recorded instead of slept.

export const NOW = Date.parse('2050-09-04T10:00:00.000Z');
export const SYSTEM: ChatMessage = {
  role: 'system',
  content: [
    '## Who you are',
    'You are Mia, speaking for Sunny Roofs. What Sunny Roofs offers: solar.',
    '## What we know about the lead',
    '<lead_data>',
    'Name: "Ada Lovelace"',
    '</lead_data>',
    '## Questions still open',
    '- q_owner: Do you own the property? (required; one of: Yes, No)',
  ].join('\n'),
};
export const greetRequest: ChatRequest = { model: 'gpt-4o-mini', messages: [SYSTEM], tools: toolDeclarations() };
export const stopRequest: ChatRequest = {
  model: 'gpt-4o-mini',
  messages: [SYSTEM, { role: 'user', content: 'STOP' }],
  tools: toolDeclarations(),
};

export interface ChatSimulatorSetup {
  sim: ChatSimulator;
  /** The waits of this test's clients, in order. */
  delays: number[];
  /** A client whose waits are recorded instead of slept; jitter off (random 0) so delays are exact. */
  client(opts?: Partial<OpenAIChatClientOptions>): OpenAIChatClient;
}

/**
 * Registers the calling file's hooks: one simulator for the file, its requests, failures and delay
 * reset before each test. sim is set once the file's before has run.
 */
export function chatSimulatorSetup(): ChatSimulatorSetup {
  const s = {
    delays: [] as number[],
    client: (opts: Partial<OpenAIChatClientOptions> = {}) =>
      new OpenAIChatClient({
        baseUrl: s.sim.baseUrl,
        apiKey: CHAT_SIM_API_KEY,
        sleep: async (ms) => void s.delays.push(ms),
        now: () => NOW,
        random: () => 0,
        ...opts,
      }),
  } as ChatSimulatorSetup;

  before(async () => {
    s.sim = await startChatSimulator();
  });
  after(() => s.sim.close());
  beforeEach(() => {
    s.sim.requests.length = 0;
    s.delays.length = 0;
  });
  afterEach(() => {
    s.sim.clearFailures();
    s.sim.setDelay(0);
  });

  return s;
}

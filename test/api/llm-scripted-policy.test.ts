// Whole WhatsApp qualifications, in process: the real system prompt and the real agent tools on a
// real database with the Cal.com simulator, the chat simulator's scripted policy reached through
// the real OpenAI client, and the scripted lead personas answering the agent's texts.
import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { agentConfigOf } from '../../src/workspaces/agent-config.ts';
import { findAgentLead } from '../../src/agent/agent-lead-queries.ts';
import type { ChatMessage } from '../../src/agent/chat-model.ts';
import { startChatSimulator, type ChatSimulator } from '../../src/simulators/chat-model/chat-simulator.ts';
import { OpenAIChatClient } from '../../src/agent/openai/openai-chat-client.ts';
import { answerFor, pickedLabel } from '../../src/simulators/chat-model/policy-reading.ts';
import { scriptedReply } from '../../src/simulators/chat-model/scripted-policy.ts';
import { buildAgentPrompt } from '../../src/agent/prompt.ts';
import { runTool, toolDeclarations } from '../../src/agent/tool-registry.ts';
import { PERSONA_PHRASES, personaReply, type LeadPersonaName } from '../../src/simulators/personas/lead-personas.ts';
import type { WorkspaceRow } from '../../src/workspaces/workspace-queries.ts';
import {
  leadEvents,
  leadRow,
  SOLAR_AGENT,
  startAgentHarness,
  type AgentHarness,
  type LeadFixture,
} from '../helpers/agent-harness.ts';

let h: AgentHarness;
let llm: ChatSimulator;
let model: OpenAIChatClient;
let ws: WorkspaceRow;

before(async () => {
  h = await startAgentHarness();
  llm = await startChatSimulator({ now: h.clock.read });
  model = new OpenAIChatClient({ baseUrl: llm.baseUrl, apiKey: llm.apiKey, sleep: async () => {} });
  ws = await h.workspace();
});
// Each conversation starts from an empty calendar.
beforeEach(() => h.sim.bookings.clear());
after(async () => {
  await llm.close();
  await h.close();
});

interface Options {
  workspace?: WorkspaceRow;
  lead?: LeadFixture;
  /** The lead's side; default the persona's. */
  reply?: (agentText: string) => string | null;
  /** 'every-call' rebuilds the system prompt before each model call, 'per-turn' once per lead message. */
  prompt?: 'every-call' | 'per-turn';
  /** Keep only texts between turns (no tool calls and answers), as a frugal worker might. */
  textsOnly?: boolean;
  /** A template sent first (the agent's first contact) instead of the model greeting. */
  firstContact?: string;
  /** Runs before the lead answers each text, e.g. to change the calendar meanwhile. */
  beforeReply?: (agentText: string) => Promise<void>;
}

/** Runs one conversation to its end: the agent's texts, the tools it called, the lead's final row. */
async function converse(persona: LeadPersonaName, opts: Options = {}) {
  const workspace = opts.workspace ?? ws;
  const leadId = await h.lead(workspace, opts.lead);
  const reply = opts.reply ?? ((text: string) => personaReply(persona, text));
  const ctx = h.ctx(workspace, leadId);
  let history: ChatMessage[] = [];
  const texts: string[] = [];
  const calls: string[] = [];
  const leadSaid: string[] = [];
  let system = '';
  const refreshPrompt = async () => {
    const lead = await findAgentLead(h.db.pool, workspace.id, leadId);
    system = buildAgentPrompt({
      agent: agentConfigOf(workspace),
      lead: lead!,
      channel: 'whatsapp',
      now: h.clock.read(),
    });
  };
  await refreshPrompt();
  let agentText = opts.firstContact;
  if (agentText) history.push({ role: 'assistant', content: agentText });
  for (let step = 0; step < 40; step++) {
    if (agentText !== undefined) {
      await opts.beforeReply?.(agentText);
      const answer = reply(agentText);
      if (answer === null)
        return {
          texts,
          calls,
          leadSaid,
          row: await leadRow(h.db.pool, leadId),
          events: await leadEvents(h.db.pool, leadId),
        };
      leadSaid.push(answer);
      // Stored as the WhatsApp webhook stores it: bookConsult takes an address only from what the lead wrote.
      await h.db.pool.query(
        `INSERT INTO whatsapp_messages (lead_id, direction, provider, kind,
          body, status) VALUES ($1, 'inbound', 'twilio', 'text', $2, 'received')`,
        [leadId, answer],
      );
      if (opts.textsOnly)
        history = history.filter((m) => m.role === 'user' || (m.role === 'assistant' && !m.tool_calls));
      history.push({ role: 'user', content: answer });
      agentText = undefined;
      await refreshPrompt();
    } else if (opts.prompt !== 'per-turn') {
      await refreshPrompt();
    }
    const result = await model.complete({
      model: 'gpt-4o-mini',
      messages: [{ role: 'system', content: system }, ...history],
      tools: toolDeclarations(),
    });
    assert.ok(result.ok, JSON.stringify(result));
    const { content, tool_calls: toolCalls } = result.message;
    if (toolCalls && toolCalls.length > 0) {
      history.push({ role: 'assistant', content, tool_calls: toolCalls });
      for (const c of toolCalls) {
        calls.push(c.function.name);
        history.push({
          role: 'tool',
          tool_call_id: c.id,
          content: await runTool(ctx, c.function.name, c.function.arguments),
        });
      }
      continue;
    }
    assert.ok(content, 'the model says something');
    history.push({ role: 'assistant', content });
    texts.push(content);
    agentText = content;
  }
  throw new Error(`the conversation did not end: ${texts.join(' | ')}`);
}

const OFFER = [
  'Here are some free times for a consultation (Europe/Berlin):',
  '1) Monday, 5 September 2050 at 09:00',
  '2) Monday, 5 September 2050 at 13:00',
  '3) Tuesday, 6 September 2050 at 09:00',
  'Which one suits you? Just reply with its number.',
].join('\n');

describe('each persona, start to end', () => {
  it("books: three answers saved in the form's terms, free times offered, the first one booked", async () => {
    const c = await converse('books');
    assert.deepEqual(c.texts, [
      'Hi Ada, this is Mia from Sunny Roofs. Do you own the property? (Yes or No)',
      'Monthly electricity bill (EUR)?',
      'When would you like it installed?',
      OFFER,
      "You're booked for Monday, 5 September 2050 at 09:00. The " +
        'confirmation is on its way to your e-mail. See you then!',
    ]);
    assert.deepEqual(c.calls, [
      'updateLeadProfile',
      'updateLeadProfile',
      'updateLeadProfile',
      'listSlots',
      'bookConsult',
    ]);
    // The persona answers the question asked: an option, an amount that meets the criteria.
    assert.deepEqual(c.leadSaid, [
      'Yes.',
      PERSONA_PHRASES.amount,
      PERSONA_PHRASES.answer,
      PERSONA_PHRASES.pickFirstSlot,
    ]);
    assert.deepEqual([c.row.status, c.row.booking_start.toISOString()], ['booked', '2050-09-05T07:00:00.000Z']);
    assert.deepEqual(c.row.answers, { q_owner: 'Yes', q_bill: '120', q_when: PERSONA_PHRASES.answer });
    assert.deepEqual(
      c.events.map((e) => e.type),
      ['lead.profile_updated', 'lead.profile_updated', 'lead.profile_updated', 'booking.created'],
    );
  });

  it('an answer below a minimum the criteria state: saved, then unqualified, never booked', async () => {
    const c = await converse('books', {
      reply: (text) => (text.includes('electricity bill') ? 'about 20 people' : personaReply('books', text)),
    });
    assert.deepEqual(c.calls, ['updateLeadProfile', 'updateLeadProfile', 'markUnqualified']);
    assert.equal(c.row.status, 'unqualified');
    assert.equal(c.row.answers.q_bill, '20');
    assert.equal(c.row.qualification_notes, "Monthly electricity bill (EUR): 20, below the criteria's minimum of 80.");
    assert.match(c.texts.at(-1)!, /not the right fit .* goodbye!$/);
    assert.equal(c.row.booking_start, null);
  });

  it("not-a-fit: unqualified with the lead's words as the reason, then silence after the goodbye", async () => {
    const c = await converse('not-a-fit');
    assert.deepEqual(c.calls, ['markUnqualified']);
    assert.equal(c.texts.length, 2);
    assert.match(c.texts[1]!, /not the right fit .* goodbye!$/);
    assert.equal(c.row.status, 'unqualified');
    assert.equal(c.row.qualification_notes, `Not a fit, in the lead's words: "${PERSONA_PHRASES.notAFit}"`);
  });

  it('wants-human: escalated (needs_human) with the reason on the timeline', async () => {
    const c = await converse('wants-human');
    assert.deepEqual(c.calls, ['escalateToHuman']);
    assert.equal(c.texts[1], 'Thanks! A colleague from the Sunny Roofs team will get back to you soon. Goodbye!');
    assert.equal(c.row.status, 'needs_human');
    assert.deepEqual(
      c.events.map((e) => [e.type, e.data.reason]),
      [['lead.escalated', 'The lead asked to talk to a person.']],
    );
  });

  it('opts-out: the policy opts the lead out (the worker handles STOP before the model too)', async () => {
    const c = await converse('opts-out');
    assert.deepEqual(c.calls, ['optOut']);
    assert.equal(c.row.status, 'unqualified');
    assert.match(c.row.qualification_notes, /^Opted out/);
    assert.ok(c.row.opted_out_at);
  });

  it('goes-quiet: one greeting, no tool call, nothing changes', async () => {
    const c = await converse('goes-quiet');
    assert.deepEqual([c.texts.length, c.calls, c.row.status, c.events], [1, [], 'in_conversation', []]);
  });
});

describe('the history a worker keeps', () => {
  it('texts only between turns, the prompt once per turn, a template first: the same booking', async () => {
    const c = await converse('books', {
      textsOnly: true,
      prompt: 'per-turn',
      firstContact: 'Hi Ada, thanks for your request at Sunny Roofs! May I ask you a few quick questions?',
    });
    assert.equal(c.texts[0], 'Monthly electricity bill (EUR)?', 'the reply to the template answers the first question');
    // The pick finds no listSlots answer in the history, so the policy asks for the times again.
    assert.deepEqual(c.calls, [
      'updateLeadProfile',
      'updateLeadProfile',
      'updateLeadProfile',
      'listSlots',
      'listSlots',
      'bookConsult',
    ]);
    assert.equal(c.row.status, 'booked');
    assert.equal(c.row.booking_start.toISOString(), '2050-09-05T07:00:00.000Z');
  });

  it('answers already on the form are not asked again; a lead who gives numbers with separators', async () => {
    const c = await converse('books', {
      lead: { formResponses: { q_owner: 'Yes', q_when: 'this summer' } },
      reply: (text) =>
        text.includes('Monthly electricity bill') ? 'About 1,200 a year, so 100 a month' : personaReply('books', text),
    });
    assert.equal(c.texts[0], 'Hi Ada, this is Mia from Sunny Roofs. Monthly electricity bill (EUR)?');
    assert.deepEqual(c.row.answers, { q_bill: '1200' });
    assert.equal(c.row.status, 'booked');
  });
});

describe('when booking does not go straight through', () => {
  it('the picked time is taken meanwhile: fresh times are offered and the new first one is booked', async () => {
    const c = await converse('books', {
      beforeReply: async (text) => {
        if (!text.startsWith('Here are some free times')) return;
        const taken = await h.scheduling.createBooking({
          apiKey: h.sim.apiKey,
          eventTypeId: 1001,
          start: '2050-09-05T09:00:00.000+02:00',
          attendee: { name: 'Someone Else', email: 'else@example.com', timeZone: 'UTC' },
        });
        assert.ok(taken.ok);
      },
    });
    assert.match(
      c.texts.at(-2)!,
      new RegExp(
        /^Sorry, that time was just taken\. Here are other free times \(Europe\/Berlin\):\n/.source +
          /1\) Monday, 5 September 2050 at 09:30\n/.source,
      ),
    );
    assert.equal(c.row.booking_start.toISOString(), '2050-09-05T07:30:00.000Z');
  });

  it('no e-mail on file: asked for, then booked with the one the lead gives', async () => {
    const c = await converse('books', {
      lead: { email: null },
      reply: (text) => (/e-mail address/.test(text) ? 'Sure, it is ada@work.example' : personaReply('books', text)),
    });
    assert.ok(c.texts.includes('Which e-mail address should the booking confirmation go to?'));
    assert.deepEqual(c.calls.slice(-2), ['bookConsult', 'bookConsult']);
    assert.equal(c.row.status, 'booked');
    assert.equal(
      [...h.sim.bookings.values()].find((b) => b.metadata.leadId === c.row.id)?.attendee.email,
      'ada@work.example',
    );
  });

  it(
    'no e-mail on file, and the lead answers beside the ' + 'question: a colleague takes over instead of a loop',
    async () => {
      const c = await converse('books', {
        lead: { email: null },
        reply: (text) => (/e-mail address/.test(text) ? PERSONA_PHRASES.answer : personaReply('books', text)),
      });
      assert.equal(
        c.texts.filter((t) => t === 'Which e-mail address should the booking confirmation go to?').length,
        1,
      );
      assert.equal(c.calls.at(-1), 'escalateToHuman');
      assert.equal(c.row.status, 'needs_human');
    },
  );

  it('no e-mail on file: the simulated lead gives one when asked', async () => {
    const c = await converse('books', { lead: { email: null } });
    assert.equal(c.row.status, 'booked');
    assert.ok(c.leadSaid.includes(PERSONA_PHRASES.email));
  });

  it('no scheduling configured: the lead is handed to a colleague', async () => {
    const c = await converse('books', { workspace: await h.workspace({ agent: SOLAR_AGENT }) });
    assert.deepEqual(c.calls.slice(-2), ['listSlots', 'escalateToHuman']);
    assert.equal(c.row.status, 'needs_human');
    assert.match(String(c.events.at(-1)?.data.reason), /^The listSlots tool answered: Booking is unavailable/);
  });

  it('Cal.com down: listSlots is tried once more, then a colleague takes over', async () => {
    h.sim.setFailure('down');
    try {
      const c = await converse('books', { lead: { formResponses: { q_owner: 'Yes', q_bill: '120', q_when: 'soon' } } });
      assert.deepEqual(c.calls, ['listSlots', 'listSlots', 'escalateToHuman']);
      assert.equal(c.row.status, 'needs_human');
    } finally {
      h.sim.setFailure('none');
    }
  });
});

describe('the policy itself', () => {
  it('is deterministic: the same request gives the same reply, tool call ids included', () => {
    const request = {
      messages: [
        { role: 'system' as const, content: 'x' },
        { role: 'user' as const, content: 'Can I talk to a real person?' },
      ],
      tools: toolDeclarations(),
    };
    const a = scriptedReply(request);
    assert.deepEqual(scriptedReply(structuredClone(request)), a);
    assert.equal(a.tool_calls?.[0]?.function.name, 'escalateToHuman');
  });

  it('calls only tools the request declares; otherwise it says a colleague will follow up', () => {
    const reply = scriptedReply({ messages: [{ role: 'user', content: 'STOP' }] });
    assert.deepEqual(reply, {
      content: 'Hi, thanks for your interest. Thanks! A colleague from our team will get back to you soon. Goodbye!',
    });
  });

  it("reads answers in the question's terms and picks by ordinal, number or time", () => {
    const choice = { id: 'q_a', label: 'Own?', type: 'choice' as const, options: ['Yes', 'No'] };
    assert.equal(answerFor(choice, 'no, we rent'), 'No');
    assert.equal(answerFor(choice, 'we rent'), 'Yes', 'none named: the first option');
    const number = { id: 'q_b', label: 'Bill', type: 'number' as const, options: [] };
    assert.deepEqual(
      [answerFor(number, 'about 1 500 EUR'), answerFor(number, '80,5'), answerFor(number, 'no idea')],
      [1500, 80.5, 'no idea'],
    );
    const labels = ['Monday at 09:00', 'Monday at 13:00', 'Tuesday at 09:00'];
    assert.deepEqual(
      ['the second one', '3', 'Option 1 please', '13:00 works', 'the last', 'about 20 people', '09:00'].map((t) =>
        pickedLabel(t, labels),
      ),
      [
        'Monday at 13:00',
        'Tuesday at 09:00',
        'Monday at 09:00',
        'Monday at 13:00',
        'Tuesday at 09:00',
        undefined,
        undefined,
      ],
    );
  });
});

import { createHash } from 'node:crypto';
import type { ChatMessage, ChatToolCall, ChatToolDeclaration } from '../../agent/chat-model.ts';
import {
  answerFor,
  belowMinimum,
  criteriaMinimums,
  emailIn,
  excerpt,
  notAFit,
  offeredLabels,
  optsOut,
  pickedLabel,
  questionLines,
  readPrompt,
  slotLines,
  wantsHuman,
  type OpenQuestion,
  type PromptFacts,
} from './policy-reading.ts';
import { PERSONA_PHRASES } from '../personas/lead-personas.ts';

// The chat simulator's "model": a pure, deterministic function from a chat-completions request
// (the real system prompt, the conversation, the real tools' text answers) to the assistant's
// next message. It runs a whole WhatsApp qualification with the personas of
// src/simulators/personas/lead-personas.ts, offline. All state comes from the request, so a worker may send
// the whole history each turn or only its texts: both work (docs/LLM.md).

export interface AssistantReply {
  content: string | null;
  tool_calls?: ChatToolCall[];
  /** Default `tool_calls` when there are calls, else `stop`; `length` is an answer cut by max_tokens. */
  finish_reason?: 'stop' | 'tool_calls' | 'length' | 'content_filter';
  /** Sent as the whole answer instead of a completion: a server that breaks the wire format. */
  raw?: { status: number; body: unknown };
}

type Decision = { say: string } | { call: string; args: Record<string, unknown> };

interface Exchange {
  /** Index in the conversation of the tool message. */
  at: number;
  name: string;
  args: Record<string, unknown>;
  result: string;
}

interface State {
  facts: PromptFacts;
  convo: ChatMessage[];
  exchanges: Exchange[];
  /** The lead's latest words are convo[leadFrom, leadTo): the last run of user messages (empty when there is none). */
  leadFrom: number;
  leadTo: number;
}

/** bookConsult's answer when the lead has no e-mail address, and the question the model then asks. */
const NEEDS_EMAIL = 'Nothing was booked yet: an e-mail address is needed';
const ASK_EMAIL = 'Which e-mail address should the booking confirmation go to?';
const DEFAULT_DAYS = 7;
const MAX_DAYS = 30;
const OFFERED = 3;

export function scriptedReply(request: { messages: ChatMessage[]; tools?: ChatToolDeclaration[] }): AssistantReply {
  const system = request.messages.flatMap((m) => (m.role === 'system' ? [m.content] : [])).join('\n\n');
  const convo = request.messages.filter((m) => m.role !== 'system');
  const leadTo = convo.findLastIndex((m) => m.role === 'user') + 1;
  let leadFrom = leadTo;
  while (leadFrom > 0 && convo[leadFrom - 1]!.role === 'user') leadFrom--;
  // The phrase this model breaks on (the persona `breaks-model`, the sandbox's "model failure" row):
  // an answer with neither text nor a tool call, which the server must hand to a person.
  const lastWords = leadTo > 0 ? convo[leadTo - 1]!.content : null;
  if (typeof lastWords === 'string' && lastWords.includes(PERSONA_PHRASES.breaksModel)) {
    return { content: null, finish_reason: 'content_filter' };
  }
  const s: State = { facts: readPrompt(system), convo, exchanges: exchangesOf(convo), leadFrom, leadTo };
  const last = convo.at(-1);
  const decision = !last
    ? nextStep(s)
    : last.role === 'tool'
      ? afterTools(s)
      : last.role === 'user'
        ? afterLead(s)
        : nextStep(s);
  return render(decision, s, request);
}

function render(
  d: Decision,
  s: State,
  request: { messages: ChatMessage[]; tools?: ChatToolDeclaration[] },
): AssistantReply {
  if ('say' in d) {
    const spoken = s.convo.some((m) => m.role === 'assistant' && m.content);
    return { content: spoken || d.say === '' ? d.say : `${greeting(s.facts)} ${d.say}` };
  }
  // A tool the request did not declare cannot be called: say what a colleague will do instead.
  if (!request.tools?.some((t) => t.function.name === d.call))
    return render({ say: closing(s, 'human') }, s, { messages: request.messages });
  // Same request, same id: the simulator stays deterministic.
  const digest = createHash('sha256').update(JSON.stringify(request.messages)).update(d.call).digest('hex');
  const id = `call_${digest.slice(0, 24)}`;
  return {
    content: null,
    tool_calls: [{ id, type: 'function', function: { name: d.call, arguments: JSON.stringify(d.args) } }],
  };
}

/** Nothing new from the lead: ask the next open question, or look for free times. */
function nextStep(s: State): Decision {
  const [question] = openQuestions(s);
  return question ? { say: ask(question) } : { call: 'listSlots', args: { daysAhead: DEFAULT_DAYS } };
}

function afterLead(s: State): Decision {
  const text = leadWords(s);
  if (optsOut(text)) return { call: 'optOut', args: { reason: 'The lead asked us to stop messaging them.' } };
  if (wantsHuman(text)) return escalate('The lead asked to talk to a person.');
  if (notAFit(text))
    return { call: 'markUnqualified', args: { reason: `Not a fit, in the lead's words: "${excerpt(text)}"` } };

  const lastBooking = s.exchanges.filter((e) => e.name === 'bookConsult').at(-1);
  const email = emailIn(text);
  if (email && lastBooking?.result.startsWith(NEEDS_EMAIL)) {
    return { call: 'bookConsult', args: { ...lastBooking.args, email } };
  }
  // Asked for the address and answered something else: offering times again would go round in
  // circles (the booking needs the address), so a colleague takes over.
  if (!email && lastAsked(s)?.includes(ASK_EMAIL)) {
    return escalate('The lead did not give an e-mail address for the booking confirmation.');
  }
  const picked = pendingPick(s);
  if (picked) {
    const start = startOf(s, picked, 0);
    // The offer's tool answer may not be in the history (a worker that keeps texts only): ask again.
    return start ? { call: 'bookConsult', args: { start } } : { call: 'listSlots', args: { daysAhead: DEFAULT_DAYS } };
  }
  const [question] = openQuestions(s);
  if (question) return { call: 'updateLeadProfile', args: { answers: { [question.id]: answerFor(question, text) } } };
  return { call: 'listSlots', args: { daysAhead: DEFAULT_DAYS } };
}

function afterTools(s: State): Decision {
  let i = s.convo.length;
  while (i > 0 && s.convo[i - 1]!.role === 'tool') i--;
  const latest = s.exchanges.filter((e) => e.at >= i);
  // A lead that just became booked, unqualified or escalated outweighs any other answer.
  const decisive = latest.find((e) => TERMINAL_ANSWER.test(e.result)) ?? latest.at(-1);
  return decisive ? afterTool(s, decisive) : nextStep(s);
}

const TERMINAL_ANSWER =
  /^(Booked for |The lead is now |It is not certain whether |Nothing changed: the lead is already )/;

function afterTool(s: State, e: Exchange): Decision {
  const r = e.result;
  if (r.startsWith('Nothing changed: the lead is already ')) return { say: closing(s, 'done') };
  if (e.name === 'endConversation') return { say: '' }; // nothing further is sent
  // What a model would say; the server sends nothing to an opted-out lead, this included.
  if (e.name === 'optOut') return { say: "Understood, we won't contact you again. Goodbye!" };
  if (e.name === 'escalateToHuman') return { say: closing(s, 'human') }; // also when it failed: never loop on it
  if (e.name === 'markUnqualified' && r.startsWith('The lead is now unqualified'))
    return { say: closing(s, 'unqualified') };
  if (e.name === 'updateLeadProfile' && r.startsWith('Saved ')) return belowCriteria(s, e) ?? nextStep(s);
  if (e.name === 'listSlots' || e.name === 'bookConsult') {
    const booked = /^Booked for (.+?) \(/.exec(r);
    if (booked)
      return { say: `You're booked for ${booked[1]}. The confirmation is on its way to your e-mail. See you then!` };
    if (r.startsWith('It is not certain whether')) return { say: closing(s, 'uncertain') };
    if (r.startsWith(NEEDS_EMAIL)) return { say: ASK_EMAIL };
    const lines = slotLines(r);
    if (lines.length > 0) {
      const picked = e.name === 'listSlots' ? pendingPick(s) : undefined;
      const start = picked ? startOf(s, picked, e.at) : undefined;
      return start
        ? { call: 'bookConsult', args: { start } }
        : {
            say: offer(
              lines.map((l) => l.label),
              r,
            ),
          };
    }
    const none = /^No free consultation times in the next (\d+) days/.exec(r);
    if (none)
      return Number(none[1]) < MAX_DAYS
        ? { call: 'listSlots', args: { daysAhead: MAX_DAYS } }
        : escalate(`No free consultation times in the next ${MAX_DAYS} days.`);
    // "Try once more in a minute": once, then a colleague takes over.
    const tries = s.exchanges.filter((x) => x.at > s.leadFrom && x.result.includes('Try once more')).length;
    if (r.includes('Try once more') && tries < 2) return { call: e.name, args: e.args };
  }
  return escalate(`The ${e.name} tool answered: ${excerpt(r, 300)}`);
}

/**
 * The agent applies the criteria it was given: an answer below a minimum they state ("at least
 * 80 EUR a month for electricity") makes the lead unqualified once the answer is saved.
 */
function belowCriteria(s: State, saved: Exchange): Decision | undefined {
  const minimums = criteriaMinimums(s.facts.criteria ?? '');
  if (minimums.length === 0) return undefined;
  const sent = (saved.args.answers ?? {}) as Record<string, unknown>;
  const labelOf = (id: string) => s.facts.open?.find((q) => q.id === id)?.label;
  const answers = [
    ...Object.entries(sent).flatMap(([id, value]) =>
      labelOf(id) ? [{ label: labelOf(id)!, value: String(value) }] : [],
    ),
    ...(s.facts.answers ?? []),
  ];
  for (const { label, value } of answers) {
    const n = Number(value.replace(',', '.'));
    const below = Number.isFinite(n) && value.trim() !== '' ? belowMinimum(minimums, label, n) : undefined;
    const reason = `${label}: ${value}, below the criteria's minimum of ${below?.min}.`;
    if (below) return { call: 'markUnqualified', args: { reason } };
  }
  return undefined;
}

function escalate(reason: string): Decision {
  return { call: 'escalateToHuman', args: { reason } };
}

/** Questions still open: the prompt's list, less what updateLeadProfile has saved since. */
function openQuestions(s: State): OpenQuestion[] {
  const saved = s.exchanges.filter((e) => e.name === 'updateLeadProfile' && e.result.startsWith('Saved ')).at(-1);
  if (!saved) return s.facts.open ?? [];
  const stillOpen = questionLines(saved.result);
  // Answers only accumulate, so whichever of the two is newer, the intersection is right.
  return s.facts.open ? s.facts.open.filter((q) => stillOpen.some((o) => o.id === q.id)) : stillOpen;
}

/** The slot the lead just picked from our last numbered offer, by its label. */
function pendingPick(s: State): string | undefined {
  if (s.leadFrom === s.leadTo) return undefined;
  const before = s.convo.slice(0, s.leadFrom).findLast((m) => m.role === 'assistant' && m.content);
  const labels = before?.content ? offeredLabels(before.content) : [];
  if (labels.length === 0) return undefined;
  return pickedLabel(leadWords(s), labels);
}

/** What the model said last before the lead's latest words. */
function lastAsked(s: State): string | null | undefined {
  return s.convo.slice(0, s.leadFrom).findLast((m) => m.role === 'assistant' && m.content)?.content;
}

function leadWords(s: State): string {
  return s.convo
    .slice(s.leadFrom, s.leadTo)
    .map((m) => m.content ?? '')
    .join('\n');
}

/** The start listSlots (or bookConsult's fresh times) gave for `label`, newest answer first, from `from` on. */
function startOf(s: State, label: string, from: number): string | undefined {
  for (const e of [...s.exchanges].reverse()) {
    if (e.at < from) break;
    const line = slotLines(e.result).find((l) => l.label === label);
    if (line) return line.start;
  }
  return undefined;
}

function exchangesOf(convo: ChatMessage[]): Exchange[] {
  const calls = new Map<string, { name: string; args: Record<string, unknown> }>();
  const out: Exchange[] = [];
  convo.forEach((m, at) => {
    if (m.role === 'assistant')
      for (const c of m.tool_calls ?? [])
        calls.set(c.id, { name: c.function.name, args: parseArgs(c.function.arguments) });
    if (m.role === 'tool') {
      const call = calls.get(m.tool_call_id);
      if (call) out.push({ at, ...call, result: m.content });
    }
  });
  return out;
}

function parseArgs(text: string): Record<string, unknown> {
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function ask(q: OpenQuestion): string {
  // Form labels are often not phrased as questions ("Monthly electricity bill (EUR)").
  if (q.type !== 'choice') return /[?:]$/.test(q.label) ? q.label : `${q.label}?`;
  const choices = q.options.length === 2 ? q.options.join(' or ') : `one of: ${q.options.join(', ')}`;
  return `${q.label} (${choices})`;
}

/** Numbered, as `offersSlots` in lead-personas.ts recognises. */
function offer(labels: string[], toolAnswer: string): string {
  const zone = /^Free consultation times in the next \d+ days \(([^)]+)\):$/m.exec(toolAnswer)?.[1];
  const intro = toolAnswer.startsWith('That time was taken')
    ? 'Sorry, that time was just taken. Here are other free times'
    : 'Here are some free times for a consultation';
  const list = labels.slice(0, OFFERED).map((l, i) => `${i + 1}) ${l}`);
  return [`${intro}${zone ? ` (${zone})` : ''}:`, ...list, 'Which one suits you? Just reply with its number.'].join(
    '\n',
  );
}

function greeting(f: PromptFacts): string {
  const first = f.leadName?.split(/\s+/)[0];
  const who = f.agentName && f.company ? ` this is ${f.agentName} from ${f.company}.` : '';
  return `Hi${first ? ` ${first}` : ''},${who || ' thanks for your interest.'}`;
}

function closing(s: State, why: 'human' | 'unqualified' | 'uncertain' | 'done'): string {
  const team = s.facts.company ? `the ${s.facts.company} team` : 'our team';
  switch (why) {
    case 'human':
      return `Thanks! A colleague from ${team} will get back to you soon. Goodbye!`;
    case 'unqualified':
      return (
        'Thank you for your time. It sounds like we are not the right fit at the moment, ' +
        'so I will leave it here. All the best, goodbye!'
      );
    case 'uncertain':
      return (
        `I could not confirm the booking just now. A colleague from ${team} will check the calendar ` +
        'and get back to you shortly. Goodbye!'
      );
    case 'done': {
      const capitalised = `${team.charAt(0).toUpperCase()}${team.slice(1)}`;
      return `Thanks for your message. ${capitalised} will take it from here. Goodbye!`;
    }
  }
}

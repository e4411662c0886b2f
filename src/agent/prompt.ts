import { renderMetadata } from '../leads/metadata-render.ts';
import type { Channel } from '../workspaces/workspace-queries.ts';
import type { AgentConfig } from './agent-config.ts';
import type { AgentLead } from './agent-lead-queries.ts';
import { formatLocalDate } from './local-time.ts';
import { describeQuestion, qualificationState } from './qualification-answers.ts';

// The one system prompt of the agent, for both channels: the voice call's assistant and the
// WhatsApp loop get the same text, so a lead is qualified the same way wherever they answer.
// Sections come in a fixed order; test/snapshots pins the output. The lead's phone number is
// left out on purpose: the agent never needs it (bookConsult reads it from the lead).

export type PromptLead = Pick<AgentLead, 'name' | 'email' | 'goal' | 'metadata' | 'formResponses' | 'answers' | 'notes'>;

export interface PromptInput {
  agent: AgentConfig;
  lead: PromptLead;
  channel: Channel;
  now: Date;
}

const CHANNEL_STYLE: Record<Channel, string> = {
  voice: 'You are on a phone call with the lead: speak naturally, in short sentences, and never read out lists, links or ids.',
  whatsapp: 'You are chatting with the lead on WhatsApp: write short, plain messages without markdown.',
};

export function buildAgentPrompt(input: PromptInput): string {
  return [
    roleSection(input.agent, input.channel),
    section('Qualification criteria', input.agent.criteria || 'None given: every lead who wants a consultation qualifies.'),
    knownSection(input.agent, input.lead),
    metadataSection(input.lead),
    openQuestionsSection(input.agent, input.lead),
    section('Today', `Today is ${formatLocalDate(input.now, input.agent.timeZone)} (${input.agent.timeZone}). Times you offer and book are in ${input.agent.timeZone}.`),
    section('Tools', TOOL_GUIDE),
  ]
    .filter((s) => s !== null)
    .join('\n\n');
}

function roleSection(agent: AgentConfig, channel: Channel): string {
  const p = agent.persona;
  return section('Who you are', [
    `You are ${p.agentName}, speaking for ${p.company}. What ${p.company} offers: ${sentence(p.offer)}`,
    `Tone: ${sentence(p.tone)}`,
    CHANNEL_STYLE[channel],
    'Your goal: find out whether the lead meets the qualification criteria and, if they do, book a consultation. Ask one question at a time. Never invent facts, prices or free times.',
  ].join('\n'));
}

function knownSection(agent: AgentConfig, lead: PromptLead): string {
  const state = qualificationState(agent.questions, lead);
  const retired = new Map((agent.retiredQuestions ?? []).map((r) => [r.id, r.label]));
  const lines = [
    `- Name: ${oneLine(lead.name)}`,
    `- Email: ${lead.email ?? 'not known yet (needed to book: ask for it)'}`,
    ...(lead.goal ? [`- Goal: ${oneLine(lead.goal)}`] : []),
    ...state.answered.map(({ question, answer }) => `- ${question.label}: ${oneLine(answer)}`),
    ...state.orphaned.map(({ id, answer }) => {
      // A question deleted in the form builder keeps its last label (retiredQuestions).
      const label = retired.get(id);
      return label ? `- ${label} (a question no longer on the form, ${id}): ${oneLine(answer)}` : `- ${id} (a question no longer on the form): ${oneLine(answer)}`;
    }),
    ...(lead.notes ? ['- Notes so far:', ...lead.notes.split('\n').map((n) => `  ${n}`)] : []),
  ];
  return section('What we already know', lines.join('\n'));
}

function metadataSection(lead: PromptLead): string | null {
  const text = renderMetadata(lead.metadata);
  // Spec 2.2: the section exists only when there is something in it.
  return text === '' ? null : section('What else we know about this lead', text);
}

function openQuestionsSection(agent: AgentConfig, lead: PromptLead): string {
  const { open } = qualificationState(agent.questions, lead);
  if (agent.questions.length === 0) return section('Questions still open', 'The form has no questions: qualify on the criteria alone.');
  if (open.length === 0) return section('Questions still open', 'None: every question of the form is answered.');
  return section(
    'Questions still open',
    ['Ask them in this order; save each answer with updateLeadProfile under its id.', ...open.map((q) => `- ${describeQuestion(q)}`)].join('\n'),
  );
}

const TOOL_GUIDE = [
  '- updateLeadProfile: save answers (by question id) as soon as the lead gives them, and notes worth passing on to the team.',
  '- listSlots: get free consultation times before you offer any; offer two or three of them.',
  '- bookConsult: book the time the lead picked, with its start exactly as listSlots gave it; it needs the lead\'s e-mail.',
  '- markUnqualified: the lead clearly does not meet the criteria; give the reason.',
  '- escalateToHuman: the lead asks for a person, is upset, or you cannot help them (also when booking is unavailable); give the reason.',
  '- endConversation: the conversation is over, after you have said goodbye.',
  'Every tool answers in plain text: act on what it says. Never tell the lead something is booked unless bookConsult said so.',
].join('\n');

function section(title: string, body: string): string {
  return `## ${title}\n${body}`;
}

// Config texts may or may not end with a full stop; the prompt reads the same either way.
function sentence(text: string): string {
  return /[.!?]$/.test(text) ? text : `${text}.`;
}

// Values from forms may contain line breaks, which would break the list layout.
function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' / ').trim();
}

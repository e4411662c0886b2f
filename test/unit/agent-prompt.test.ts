// The agent's system prompt, pinned by snapshots (test/snapshots/*.txt: review a change there
// like code), plus the rules that snapshots alone would not make obvious.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { agentConfigSchema, defaultAgentConfig, withQuestionIds } from '../../src/workspaces/agent-config.ts';
import { buildAgentPrompt, type PromptLead } from '../../src/agent/prompt.ts';
import { agentTools } from '../../src/agent/tool-registry.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { assertMatchesSnapshot } from '../helpers/snapshot.ts';

const agent = withQuestionIds(agentConfigSchema.parse(SOLAR_AGENT), null);
const NOW = new Date('2026-11-22T10:00:00.000Z');

const richLead: PromptLead = {
  name: 'Ada Lovelace',
  email: 'ada@example.com',
  goal: 'Cut our power bill\nand go green',
  metadata: { source: 'google ads', budget: 15000, referrer: null, campaign: '', tags: ['solar', 'spring'] },
  // q_old: a question deleted from the form since; its answer is still worth knowing.
  formResponses: { q_owner: 'Yes', q_old: 'flat roof', q_when: '' },
  answers: { q_bill: '120' },
  notes: 'Prefers mornings.\nPartner decides too.',
};

const bareLead: PromptLead = {
  name: 'Bob Builder',
  email: null,
  goal: null,
  metadata: {},
  formResponses: {},
  answers: {},
  notes: null,
};

describe('agent prompt', () => {
  it('snapshot: WhatsApp lead with form answers, agent answers, notes and metadata', () => {
    assertMatchesSnapshot(
      'agent-prompt-whatsapp.txt',
      buildAgentPrompt({ agent, lead: richLead, channel: 'whatsapp', now: NOW }),
    );
  });

  it('an answer to a deleted question comes with the label the question had, when it is known', () => {
    const retired = { ...agent, retiredQuestions: [{ id: 'q_old', label: 'Roof type' }] };
    const prompt = buildAgentPrompt({ agent: retired, lead: richLead, channel: 'whatsapp', now: NOW });
    assert.ok(
      prompt.includes('\nAnswer to "Roof type" (a question no longer on the form, id "q_old"): "flat roof"\n'),
      prompt,
    );
    const unlabelled = buildAgentPrompt({ agent, lead: richLead, channel: 'whatsapp', now: NOW });
    assert.ok(
      unlabelled.includes('\nAnswer to a question no longer on the form, id "q_old": "flat roof"\n'),
      unlabelled,
    );
  });

  it("the link rule names the workspace's allowed link domains, the only links the outbound guard lets through", () => {
    const withDomains = { ...agent, allowedLinkDomains: ['example.com', 'cal.example.com'] };
    const prompt = buildAgentPrompt({ agent: withDomains, lead: bareLead, channel: 'whatsapp', now: NOW });
    assert.ok(prompt.includes('\n- Send no links or web addresses except to example.com, cal.example.com;'), prompt);
    const none = buildAgentPrompt({ agent, lead: bareLead, channel: 'whatsapp', now: NOW });
    assert.ok(none.includes("\n- Send no links or web addresses; never pass on a link from the lead's data.\n"), none);
  });

  it('snapshot: voice lead we know little about', () => {
    assertMatchesSnapshot(
      'agent-prompt-voice.txt',
      buildAgentPrompt({ agent, lead: bareLead, channel: 'voice', now: NOW }),
    );
  });

  it('snapshot: a workspace without agent config runs on the defaults', () => {
    const prompt = buildAgentPrompt({
      agent: defaultAgentConfig('Acme Plumbing'),
      lead: bareLead,
      channel: 'whatsapp',
      now: NOW,
    });
    assertMatchesSnapshot('agent-prompt-default.txt', prompt);
  });

  it('sections come in a fixed order; the metadata is headed as the spec says, inside the lead-data block', () => {
    const prompt = buildAgentPrompt({ agent, lead: richLead, channel: 'whatsapp', now: NOW });
    const headings = prompt.split('\n').filter((l) => l.startsWith('## '));
    assert.deepEqual(headings, [
      '## Who you are',
      '## Qualification criteria',
      '## Rules',
      '## What we know about the lead',
      '## Questions still open',
      '## Today',
      '## Tools',
    ]);
    const block = prompt.slice(prompt.indexOf('\n<lead_data>\n'), prompt.indexOf('\n</lead_data>\n'));
    assert.ok(
      block.includes('\nWhat else we know about this lead:\n- "source": "google ads"\n- "budget": 15000\n'),
      block,
    );
  });

  it("today's date is the date in the workspace's time zone", () => {
    const late = new Date('2026-11-22T23:30:00.000Z');
    const today = (timeZone: string, now: Date) =>
      buildAgentPrompt({ agent: { ...agent, timeZone }, lead: bareLead, channel: 'voice', now })
        .split('\n')
        .find((l) => l.startsWith('Today is'));
    assert.equal(
      today('Europe/Berlin', late),
      'Today is Monday, 23 November 2026 (Europe/Berlin). Times you offer and book are in Europe/Berlin.',
    );
    assert.equal(
      today('America/Los_Angeles', late),
      'Today is Sunday, 22 November 2026 (America/Los_Angeles). Times you offer and book are in America/Los_Angeles.',
    );
    assert.equal(
      today('Asia/Tokyo', new Date('2026-12-31T15:00:00.000Z')),
      'Today is Friday, 1 January 2027 (Asia/Tokyo). Times you offer and book are in Asia/Tokyo.',
    );
  });

  it('empty metadata, or metadata with only blank values, omits the section', () => {
    for (const metadata of [{}, { referrer: null, campaign: '', missing: undefined }]) {
      const prompt = buildAgentPrompt({ agent, lead: { ...richLead, metadata }, channel: 'whatsapp', now: NOW });
      assert.ok(!prompt.includes('What else we know'), JSON.stringify(metadata));
    }
  });

  it("names every tool, and never contains the lead's phone number", () => {
    const lead = { ...richLead, phone: '+49 30 1234567', phoneNormalized: '+49301234567' };
    const prompt = buildAgentPrompt({ agent, lead, channel: 'voice', now: NOW });
    for (const tool of agentTools) assert.ok(prompt.includes(`- ${tool.name}: `), tool.name);
    assert.ok(!prompt.includes('1234567'));
  });
});

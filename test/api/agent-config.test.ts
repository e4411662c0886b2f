// The agent section of the workspace config: schema, question ids, storage beside (not inside)
// the encrypted settings, and form answers to unknown question ids at submission.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { withQuestionIds, type AgentConfigInput } from '../../src/workspaces/agent-config.ts';
import { parseWorkspaceConfig } from '../../src/workspaces/workspace-config.ts';
import { parseEncryptionKey, SecretBox } from '../../src/workspaces/secret-box.ts';
import { postLead, validLead } from '../helpers/http.ts';
import { SOLAR_AGENT } from '../helpers/agent-harness.ts';
import { startTestApp, TEST_ENCRYPTION_KEY, type TestApp } from '../helpers/test-app.ts';

const SCHEDULING = { provider: 'calcom', apiKey: 'cal_live_secret_key_123', eventTypeId: 1001 } as const;
const box = new SecretBox(parseEncryptionKey(TEST_ENCRYPTION_KEY));

function parseAgent(agent: unknown): AgentConfigInput {
  const r = parseWorkspaceConfig({ agent });
  assert.ok(r.ok, r.ok ? '' : r.message);
  return r.config.agent!;
}

function agentError(agent: unknown): string {
  const r = parseWorkspaceConfig({ agent });
  assert.ok(!r.ok, 'expected the config to be refused');
  return r.message;
}

describe('agent config schema', () => {
  it('accepts the documented shape; trims, defaults and canonicalises', () => {
    const a = parseAgent({
      persona: { agentName: ' Mia ', company: 'Sunny Roofs', offer: 'Solar', tone: 'warm' },
      timeZone: 'europe/berlin',
      questions: [{ label: 'Budget?', type: 'number' }],
    });
    assert.deepEqual(a, {
      persona: { agentName: 'Mia', company: 'Sunny Roofs', offer: 'Solar', tone: 'warm' },
      criteria: '',
      timeZone: 'Europe/Berlin',
      questions: [{ label: 'Budget?', type: 'number', required: false }],
    });
    assert.deepEqual(
      parseAgent(SOLAR_AGENT).questions.map((q) => q.id),
      ['q_owner', 'q_bill', 'q_when'],
    );
  });

  it('defaultCountry is optional and upper-cased', () => {
    assert.equal(
      parseAgent({ persona: SOLAR_AGENT.persona, timeZone: 'Europe/Berlin', defaultCountry: ' de ' }).defaultCountry,
      'DE',
    );
    assert.equal(parseAgent({ persona: SOLAR_AGENT.persona, timeZone: 'Europe/Berlin' }).defaultCountry, undefined);
  });

  it('refuses what would break the agent, naming the field', () => {
    const base = { persona: SOLAR_AGENT.persona, timeZone: 'Europe/Berlin' };
    const q = (over: Record<string, unknown>) => ({
      ...base,
      questions: [{ label: 'Own it?', type: 'choice', options: ['Yes', 'No'], required: true, ...over }],
    });
    assert.match(
      agentError({ ...base, timeZone: 'Mars/Olympus' }),
      /^agent\.timeZone: timeZone must be an IANA time zone such as Europe\/Berlin$/,
    );
    assert.match(agentError({ ...base, timeZone: '+01:00' }), /agent\.timeZone: timeZone must be an IANA time zone/);
    assert.match(
      agentError({ ...base, defaultCountry: 'Germany' }),
      /^agent\.defaultCountry: defaultCountry must be an ISO 3166-1 alpha-2 country code such as DE$/,
    );
    assert.match(agentError({ ...base, defaultCountry: 'XX' }), /agent\.defaultCountry: /);
    assert.match(
      agentError({ ...base, persona: { ...base.persona, agentName: '  ' } }),
      /agent\.persona\.agentName: persona\.agentName is required/,
    );
    assert.match(agentError({ timeZone: 'UTC' }), /agent\.persona: /);
    assert.match(
      agentError(q({ options: undefined })),
      /agent\.questions\.0\.options: a choice question needs at least two options/,
    );
    assert.match(
      agentError(q({ type: 'text' })),
      /agent\.questions\.0\.options: options are only for choice questions/,
    );
    assert.match(agentError(q({ options: ['Yes', 'yes '] })), /options must be different from each other/);
    assert.match(agentError(q({ type: 'date', options: undefined })), /agent\.questions\.0\.type: /);
    assert.match(agentError(q({ id: 'budget' })), /agent\.questions\.0\.id: a question id is q_ followed by/);
    assert.match(agentError(q({ colour: 'red' })), /agent\.questions\.0: Unrecognized key: "colour"/);
    assert.match(agentError({ ...base, persona: { ...base.persona, mood: 'x' } }), /Unrecognized key: "mood"/);
    const twice = {
      ...base,
      questions: [
        { id: 'q_a', label: 'One', type: 'text' },
        { id: 'q_a', label: 'Two', type: 'text' },
      ],
    };
    assert.match(agentError(twice), /agent\.questions: question id q_a is used twice/);
    const sameLabel = {
      ...base,
      questions: [
        { label: 'Budget', type: 'text' },
        { label: 'budget ', type: 'number' },
      ],
    };
    assert.match(agentError(sameLabel), /two questions are labelled "budget"/);
  });

  it('question ids: kept when given, reused by label from the stored config, otherwise new q_ + base62', () => {
    const first = withQuestionIds(
      parseAgent({
        ...SOLAR_AGENT,
        questions: [
          { label: 'Budget', type: 'number' },
          { id: 'q_mine', label: 'Roof', type: 'text' },
        ],
      }),
      null,
    );
    const generated = first.questions[0]!.id;
    assert.match(generated, /^q_[A-Za-z0-9]{12}$/);
    assert.equal(first.questions[1]!.id, 'q_mine');

    const edited = parseAgent({
      ...SOLAR_AGENT,
      questions: [
        { label: 'Roof', type: 'text' },
        { label: ' BUDGET', type: 'number', required: true },
        { label: 'New one', type: 'text' },
      ],
    });
    const second = withQuestionIds(edited, first);
    assert.deepEqual(second.questions.map((q) => q.id).slice(0, 2), ['q_mine', generated]);
    assert.notEqual(second.questions[2]!.id, generated);

    const many = withQuestionIds(
      parseAgent({
        ...SOLAR_AGENT,
        questions: Array.from({ length: 50 }, (_, i) => ({ label: `Q${i}`, type: 'text' })),
      }),
      null,
    );
    assert.equal(new Set(many.questions.map((q) => q.id)).size, 50);
  });
});

describe('agent config storage and submissions', () => {
  let app: TestApp;
  before(async () => {
    app = await startTestApp();
  });
  after(() => app.close());

  const stored = async (slug: string) =>
    (await app.db.pool.query('SELECT id, agent, settings_ciphertext FROM workspaces WHERE slug = $1', [slug])).rows[0];

  it('create and update: the agent section in its own column, secrets only in the ciphertext', async () => {
    const parsed = parseWorkspaceConfig({
      scheduling: SCHEDULING,
      agent: { ...SOLAR_AGENT, questions: [{ label: 'Budget', type: 'number' }] },
    });
    assert.ok(parsed.ok);
    const created = await app.workspaces.create({
      slug: 'solar',
      name: 'Solar',
      channel: 'voice',
      config: parsed.config,
    });
    assert.equal(created.kind, 'created');
    let row = await stored('solar');
    const budgetId = row.agent.questions[0].id;
    assert.match(budgetId, /^q_/);
    assert.equal(row.agent.persona.company, 'Sunny Roofs');
    assert.deepEqual(
      box.open(row.settings_ciphertext, row.id),
      { scheduling: SCHEDULING },
      'no agent section in the encrypted blob',
    );
    assert.ok(!JSON.stringify(row.agent).includes(SCHEDULING.apiKey));
    const sealed = row.settings_ciphertext as Buffer;

    // Agent only: the ciphertext is not touched; the question keeps its id by label.
    const agentOnly = parseWorkspaceConfig({
      agent: {
        ...SOLAR_AGENT,
        criteria: 'Homeowners only.',
        questions: [
          { label: 'budget', type: 'number' },
          { label: 'Roof', type: 'text' },
        ],
      },
    });
    assert.ok(agentOnly.ok);
    const updated = await app.workspaces.update('solar', agentOnly.config);
    assert.deepEqual(
      updated?.agent?.questions.map((q) => q.label),
      ['budget', 'Roof'],
    );
    row = await stored('solar');
    assert.deepEqual(row.settings_ciphertext, sealed);
    assert.equal(row.agent.criteria, 'Homeowners only.');
    assert.equal(row.agent.questions[0].id, budgetId);
    assert.deepEqual((await app.workspaces.findBySlug('solar'))?.agent, row.agent);

    // Scheduling only: the agent section is kept.
    const rotated = { ...SCHEDULING, apiKey: 'cal_live_rotated_key_456' };
    const schedOnly = parseWorkspaceConfig({ scheduling: rotated });
    assert.ok(schedOnly.ok);
    await app.workspaces.update('solar', schedOnly.config);
    const after = await stored('solar');
    assert.deepEqual(after.agent, row.agent);
    assert.deepEqual(box.open(after.settings_ciphertext, after.id), { scheduling: rotated });

    assert.equal(await app.workspaces.update('ghost', agentOnly.config), null);
    const plain = await app.workspaces.create({ slug: 'plain', name: 'Plain', channel: 'whatsapp' });
    assert.ok(plain.kind === 'created' && plain.workspace.agent === null);
    assert.deepEqual((await stored('plain')).agent, {});
  });

  it('formResponses with unknown question ids: stored as sent, the ids (only) logged as a warning', async () => {
    const parsed = parseWorkspaceConfig({ agent: SOLAR_AGENT });
    assert.ok(parsed.ok);
    const { apiKey } = await app.createWorkspace('whatsapp', parsed.config);
    const formResponses = {
      q_owner: 'Yes',
      q_deleted: 'answer-to-a-deleted-question',
      q_other: 'second-secret-answer',
    };
    const res = await postLead(app.http, apiKey, validLead({ formResponses }));
    assert.equal(res.status, 201);
    const { rows } = await app.db.pool.query('SELECT form_responses FROM leads WHERE id = $1', [res.body.leadId]);
    assert.deepEqual(rows[0].form_responses, formResponses);

    const warnings = app.logs.filter((l) => l.includes('unknown question ids')).map((l) => JSON.parse(l));
    assert.equal(warnings.length, 1);
    assert.deepEqual(
      [warnings[0].level, warnings[0].leadId, warnings[0].unknownQuestionIds],
      [40, res.body.leadId, ['q_deleted', 'q_other']],
    );
    const all = app.logs.join('\n');
    assert.ok(!all.includes('answer-to-a-deleted-question') && !all.includes('second-secret-answer'));

    // Known ids only, or a workspace without a form: nothing to report.
    assert.equal((await postLead(app.http, apiKey, validLead({ formResponses: { q_owner: 'No' } }))).status, 201);
    const bare = await app.createWorkspace('whatsapp');
    assert.equal((await postLead(app.http, bare.apiKey, validLead({ formResponses: { anything: 'x' } }))).status, 201);
    assert.equal(app.logs.filter((l) => l.includes('unknown question ids')).length, 1);
  });
});

// The agent's tools through runTool, on a real database: the registry (declarations, unknown
// tools, bad arguments, internal errors), the profile, qualification and escalation tools, and
// tool calls racing on one lead. Booking tools: test/api/agent-slots-and-booking.test.ts.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { agentTools, runTool, toolDeclarations } from '../../src/agent/tool-registry.ts';
import { createPool } from '../../src/db/pool.ts';
import type { WorkspaceRow } from '../../src/workspaces/workspace-queries.ts';
import { leadEvents, leadRow, SOLAR_AGENT, startAgentHarness, type AgentHarness } from '../helpers/agent-harness.ts';

let h: AgentHarness;
let ws: WorkspaceRow;

before(async () => {
  h = await startAgentHarness();
  ws = await h.workspace();
});
after(() => h.close());

const ALREADY = /^Nothing changed: the lead is already (booked|unqualified|needs_human)/;

describe('tool registry', () => {
  it('declares every tool in the OpenAI function format, from the zod schemas', () => {
    const decls = toolDeclarations();
    assert.deepEqual(
      decls.map((d) => d.function.name),
      [
        'updateLeadProfile',
        'listSlots',
        'bookConsult',
        'markUnqualified',
        'optOut',
        'escalateToHuman',
        'scheduleCallback',
        'endConversation',
      ],
    );
    assert.deepEqual(
      decls.map((d) => d.function.name),
      agentTools.map((t) => t.name),
    );
    for (const d of decls) {
      assert.equal(d.type, 'function');
      assert.equal(d.function.parameters.type, 'object');
      assert.equal('$schema' in d.function.parameters, false);
      assert.ok(d.function.description.length > 20);
    }
    const params = (name: string) =>
      decls.find((d) => d.function.name === name)!.function.parameters as Record<string, any>;
    assert.deepEqual(params('bookConsult').required, ['start']);
    assert.deepEqual(Object.keys(params('bookConsult').properties), ['start', 'name', 'email', 'phone', 'notes']);
    assert.equal(params('listSlots').required, undefined, 'daysAhead has a default, so it is optional');
    assert.equal(params('listSlots').properties.daysAhead.default, 7);
    assert.deepEqual(params('markUnqualified').required, ['reason']);
    assert.deepEqual(params('endConversation').properties, {});
  });

  it('an unknown tool is answered, not thrown', async () => {
    const lead = await h.lead(ws);
    const answer = await h.call(ws, lead, 'deleteEverything', {});
    assert.equal(
      answer,
      'There is no tool called "deleteEverything". The tools are: updateLeadProfile, listSlots, ' +
        'bookConsult, markUnqualified, optOut, escalateToHuman, scheduleCallback, endConversation.',
    );
  });

  it('bad arguments name the problem and change nothing; JSON text arguments are accepted', async () => {
    const lead = await h.lead(ws);
    assert.equal(
      await h.call(ws, lead, 'markUnqualified', '{"reason": '),
      'Invalid arguments for markUnqualified: the arguments are not valid JSON. Nothing was done.',
    );
    assert.equal(
      await h.call(ws, lead, 'markUnqualified', ['x']),
      'Invalid arguments for markUnqualified: the arguments must be a JSON object. Nothing was done.',
    );
    assert.equal(
      await h.call(ws, lead, 'markUnqualified', { reason: '   ' }),
      'Invalid arguments for markUnqualified: reason: give the reason. ' +
        'Nothing was done; correct them and call markUnqualified again.',
    );
    assert.match(
      await h.call(ws, lead, 'markUnqualified', {}),
      /^Invalid arguments for markUnqualified: reason: Invalid input: expected string, received undefined\./,
    );
    assert.match(
      await h.call(ws, lead, 'listSlots', { daysAhead: 0 }),
      /^Invalid arguments for listSlots: daysAhead: Too small/,
    );
    assert.match(
      await h.call(ws, lead, 'bookConsult', { start: '2050-09-05T09:00:00', email: 'nope' }),
      new RegExp(
        /^Invalid arguments for bookConsult: start: start must be a date-time with an offset, /.source +
          /exactly as listSlots gave it \(e\.g\. 2050-09-05T09:00:00\.000\+02:00\); /.source +
          /email: email must be a valid e-mail address\./.source,
      ),
    );
    assert.equal((await leadRow(h.db.pool, lead)).status, 'in_conversation');
    assert.deepEqual(await leadEvents(h.db.pool, lead), []);

    assert.match(
      await h.call(ws, lead, 'escalateToHuman', '{"reason":"Wants to talk to the owner."}'),
      /^The lead is now with a human colleague/,
    );
  });

  it('a technical failure is answered and logged, not thrown', async () => {
    const lead = await h.lead(ws);
    const closed = createPool(h.db.url, 1);
    await closed.end();
    const answer = await runTool({ ...h.ctx(ws, lead), pool: closed }, 'escalateToHuman', { reason: 'x' });
    assert.equal(
      answer,
      'escalateToHuman failed because of a technical problem on our side. Apologise; try ' +
        'once more, and if it fails again tell the lead a colleague will follow up.',
    );
    assert.ok(h.logs.some((l) => l.includes('"msg":"agent tool failed"') && l.includes(lead)));
  });

  it('a lead of another workspace, or a malformed id, is not found', async () => {
    const other = await h.workspace();
    const foreign = await h.lead(other);
    for (const tool of agentTools) {
      const args =
        tool.name === 'bookConsult'
          ? { start: '2050-09-05T09:00:00+02:00' }
          : tool.name.match(/Unqualified|Human/)
            ? { reason: 'x' }
            : tool.name === 'updateLeadProfile'
              ? { notes: 'x' }
              : tool.name === 'scheduleCallback'
                ? { at: '2050-09-05T18:00', leadWords: 'x' }
                : {};
      assert.equal(
        await h.call(ws, foreign, tool.name, args),
        'Lead not found in this workspace; nothing was done.',
        tool.name,
      );
      assert.equal(
        await h.call(ws, 'not-a-uuid', tool.name, args),
        'Lead not found in this workspace; nothing was done.',
        tool.name,
      );
    }
    assert.deepEqual(await leadEvents(h.db.pool, foreign), []);
  });
});

describe('updateLeadProfile', () => {
  it("saves answers in the question's terms, appends notes, and says what is still open", async () => {
    const lead = await h.lead(ws, { formResponses: { q_when: 'spring' } });
    await h.db.pool.query(`UPDATE leads SET updated_at = '2000-01-01' WHERE id = $1`, [lead]);
    const first = await h.call(ws, lead, 'updateLeadProfile', {
      answers: { q_owner: ' yes ' },
      notes: 'Has a south-facing roof.',
    });
    assert.equal(
      first,
      'Saved answers (Do you own the property? = Yes) and notes.\nStill open:\n- ' +
        'q_bill: Monthly electricity bill (EUR) (required; a number)',
    );
    const second = await h.call(ws, lead, 'updateLeadProfile', {
      answers: { q_bill: '1 200' },
      notes: 'Partner decides too.',
    });
    assert.equal(
      second,
      'Saved answers (Monthly electricity bill (EUR) = 1200) and notes.\nEvery question of the form is answered.',
    );
    assert.equal(
      await h.call(ws, lead, 'updateLeadProfile', { answers: { q_bill: 95.5 } }),
      'Saved answers (Monthly electricity bill (EUR) = 95.5).\nEvery question of the form is answered.',
    );
    assert.equal(
      await h.call(ws, lead, 'updateLeadProfile', { notes: 'Call after 6 pm.' }),
      'Saved notes.\nEvery question of the form is answered.',
    );

    const row = await leadRow(h.db.pool, lead);
    assert.deepEqual(row.answers, { q_owner: 'Yes', q_bill: '95.5' });
    assert.deepEqual(row.form_responses, { q_when: 'spring' }, "the form's answers stay as sent");
    assert.equal(row.agent_notes, 'Has a south-facing roof.\nPartner decides too.\nCall after 6 pm.');
    assert.equal(row.status, 'in_conversation');
    assert.ok(row.updated_at.getTime() > Date.parse('2000-01-02'));
    const events = await leadEvents(h.db.pool, lead);
    assert.deepEqual(
      events.map((e) => e.data),
      [
        { questionIds: ['q_owner'], notes: true, actor: 'agent' },
        { questionIds: ['q_bill'], notes: true, actor: 'agent' },
        { questionIds: ['q_bill'], notes: false, actor: 'agent' },
        { questionIds: [], notes: true, actor: 'agent' },
      ],
    );
    assert.ok(events.every((e) => e.type === 'lead.profile_updated'));
  });

  it('refuses unknown ids, bad choices and non-numbers as a whole, listing the questions', async () => {
    const lead = await h.lead(ws);
    const answer = await h.call(ws, lead, 'updateLeadProfile', {
      answers: { q_owner: 'Maybe', q_bill: 'about 90', q_ghost: 'x' },
      notes: 'n',
    });
    assert.equal(
      answer,
      [
        'Nothing was saved: unknown question id(s) q_ghost; q_owner (Do you own ' +
          'the property?) must be one of: Yes, No; q_bill (Monthly electricity bill ' +
          '(EUR)) needs a number such as 5000, got "about 90".',
        'The questions are:',
        '- q_owner: Do you own the property? (required; one of: Yes, No)',
        '- q_bill: Monthly electricity bill (EUR) (required; a number)',
        '- q_when: When would you like it installed? (optional; free text)',
      ].join('\n'),
    );
    assert.equal(
      await h.call(ws, lead, 'updateLeadProfile', {}),
      'Nothing to save: give answers by question id, notes, or both.',
    );
    assert.match(
      await h.call(ws, lead, 'updateLeadProfile', { answers: { q_when: '  ' } }),
      /^Nothing was saved: q_when has an empty answer\./,
    );
    const row = await leadRow(h.db.pool, lead);
    assert.deepEqual([row.answers, row.agent_notes], [{}, null]);
    assert.deepEqual(await leadEvents(h.db.pool, lead), []);

    const bare = await h.workspace({ agent: { ...SOLAR_AGENT, questions: [] } });
    const bareLead = await h.lead(bare);
    assert.equal(
      await h.call(bare, bareLead, 'updateLeadProfile', { answers: { q_owner: 'Yes' } }),
      'Nothing was saved: unknown question id(s) q_owner.\nThis workspace has ' +
        'no qualification questions: put what you learned in notes.',
    );
  });
});

describe('markUnqualified, escalateToHuman, endConversation', () => {
  it('markUnqualified: unqualified with the reason in qualificationNotes and the timeline', async () => {
    const lead = await h.lead(ws, { status: 'new' });
    const answer = await h.call(ws, lead, 'markUnqualified', { reason: 'Rents the flat; the landlord decides.' });
    assert.equal(
      answer,
      'The lead is now unqualified. Thank them politely, do not offer a consultation, and end the conversation.',
    );
    const row = await leadRow(h.db.pool, lead);
    assert.deepEqual([row.status, row.qualification_notes], ['unqualified', 'Rents the flat; the landlord decides.']);
    assert.deepEqual(await leadEvents(h.db.pool, lead), [
      {
        type: 'lead.unqualified',
        data: { reason: 'Rents the flat; the landlord decides.', from: 'new', to: 'unqualified', actor: 'agent' },
      },
    ]);
  });

  it('escalateToHuman: needs_human with the reason in the timeline', async () => {
    const lead = await h.lead(ws);
    const answer = await h.call(ws, lead, 'escalateToHuman', { reason: 'Asks about a commercial roof.' });
    assert.match(answer, /^The lead is now with a human colleague \(needs_human\)\./);
    const row = await leadRow(h.db.pool, lead);
    assert.deepEqual([row.status, row.qualification_notes], ['needs_human', null]);
    assert.deepEqual(await leadEvents(h.db.pool, lead), [
      {
        type: 'lead.escalated',
        data: { reason: 'Asks about a commercial roof.', from: 'in_conversation', to: 'needs_human', actor: 'agent' },
      },
    ]);
  });

  it('endConversation records the end in any status and changes nothing else', async () => {
    for (const status of ['new', 'in_conversation', 'booked', 'needs_human'] as const) {
      const lead = await h.lead(ws, { status });
      assert.equal(
        await h.call(ws, lead, 'endConversation'),
        `Conversation end recorded; the lead stays ${status}. Do not send anything further.`,
      );
      assert.equal((await leadRow(h.db.pool, lead)).status, status);
      assert.deepEqual(await leadEvents(h.db.pool, lead), [
        { type: 'conversation.ended', data: { status, actor: 'agent' } },
      ]);
    }
  });

  it('on a terminal lead every other tool changes nothing and says so', async () => {
    for (const status of ['booked', 'unqualified', 'needs_human'] as const) {
      const lead = await h.lead(ws, { status });
      await h.db.pool.query(`UPDATE leads SET updated_at = '2000-01-01', qualification_notes = 'kept' WHERE id = $1`, [
        lead,
      ]);
      const calls: Array<[string, unknown]> = [
        ['updateLeadProfile', { answers: { q_owner: 'Yes' }, notes: 'late note' }],
        ['listSlots', {}],
        ['bookConsult', { start: '2050-09-05T09:00:00.000+02:00' }],
        ['markUnqualified', { reason: 'x' }],
        ['escalateToHuman', { reason: 'x' }],
      ];
      for (const [tool, args] of calls) {
        const answer = await h.call(ws, lead, tool, args);
        assert.equal(
          answer,
          `Nothing changed: the lead is already ${status}, and only a human operator can change that now. ` +
            'Do not retry; close the conversation politely.',
          `${status} ${tool}`,
        );
      }
      const row = await leadRow(h.db.pool, lead);
      assert.deepEqual(
        [row.status, row.qualification_notes, row.answers, row.agent_notes, row.updated_at.toISOString()],
        [status, 'kept', {}, null, new Date('2000-01-01').toISOString()],
      );
      assert.deepEqual(await leadEvents(h.db.pool, lead), []);
    }
    assert.equal(h.sim.requests.length, 0, 'no scheduling request for a terminal lead');
  });
});

describe('racing tool calls', () => {
  it('10 markUnqualified and 10 escalateToHuman on one lead at once: exactly one applies', async () => {
    for (let round = 0; round < 3; round++) {
      const lead = await h.lead(ws);
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          h.call(ws, lead, i % 2 ? 'markUnqualified' : 'escalateToHuman', { reason: `call ${i}` }),
        ),
      );
      const applied = answers.filter((a) => a.startsWith('The lead is now'));
      assert.equal(applied.length, 1, answers.join('\n'));
      const status = (await leadRow(h.db.pool, lead)).status;
      for (const a of answers.filter((x) => !x.startsWith('The lead is now'))) {
        assert.match(a, ALREADY);
        assert.ok(a.includes(`already ${status},`), a);
      }
      assert.equal((await leadEvents(h.db.pool, lead)).length, 1);
    }
  });

  it('a profile update racing an escalation is either saved before it or refused after it', async () => {
    const lead = await h.lead(ws);
    const [saved, escalated] = await Promise.all([
      h.call(ws, lead, 'updateLeadProfile', { notes: 'racing note' }),
      h.call(ws, lead, 'escalateToHuman', { reason: 'race' }),
    ]);
    assert.match(escalated, /^The lead is now with a human colleague/);
    const row = await leadRow(h.db.pool, lead);
    const types = (await leadEvents(h.db.pool, lead)).map((e) => e.type);
    if (saved.startsWith('Saved')) {
      assert.deepEqual([row.agent_notes, types], ['racing note', ['lead.profile_updated', 'lead.escalated']]);
    } else {
      assert.match(saved, ALREADY);
      assert.deepEqual([row.agent_notes, types], [null, ['lead.escalated']]);
    }
  });
});

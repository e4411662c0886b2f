import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { Role } from '../../src/operators/roles.ts';
import { admin } from '../helpers/admin.ts';
import { setUpAdminApi } from '../helpers/admin-api-setup.ts';
import { postLead, validLead } from '../helpers/http.ts';

// The admin API (docs/DASHBOARD.md): the lead page and the lead actions, with CSRF and roles,
// through the real app on its own database. Sign-in, sessions and the inbox: admin-sign-in-inbox.test.ts.

const { setup: env, sessions, names, leadsUrl, newLead, signInEveryRole } = setUpAdminApi();

describe('the lead page and the actions', () => {
  before(signInEveryRole);

  it('the lead page: details, form answers with labels (unknown ids as ids), consent record, timeline', async () => {
    const id = await newLead({ formResponses: { q_owner: 'Yes', q_gone: 'kept' }, goal: 'Lower bills' });
    const page = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${id}`);
    assert.equal(page.status, 200);
    assert.deepEqual(page.body.lead.formAnswers, [
      { id: 'q_owner', label: 'Do you own the property?', value: 'Yes' },
      { id: 'q_gone', label: null, value: 'kept' },
    ]);
    assert.equal(page.body.lead.goal, 'Lower bills');
    assert.ok(page.body.lead.consent.at);
    assert.equal(page.body.lead.consent.ip, '127.0.0.1');
    assert.deepEqual(
      page.body.timeline.map((e: { type: string }) => e.type),
      ['lead.created'],
    );
    assert.deepEqual(page.body.whatsappWindow, { open: false, until: null, template: null });
  });

  it("a call's transcript comes split into turns, each with its speaker", async () => {
    const id = await newLead();
    await env.app.db.pool.query(
      `INSERT INTO call_sessions (lead_id, provider_call_id, status, transcript) VALUES ($1, $2, 'ended', $3)`,
      [id, `call-${id}`, 'Assistant: Hello, this is Mia. Lead: no, that stays\n\nLead: Hi, yes.\n\nAssistant: Great.'],
    );
    const page = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${id}`);
    assert.deepEqual(page.body.calls[0].transcriptTurns, [
      { speaker: 'Assistant', text: 'Hello, this is Mia. Lead: no, that stays' },
      { speaker: 'Lead', text: 'Hi, yes.' },
      { speaker: 'Assistant', text: 'Great.' },
    ]);
  });

  it(
    'the lead page names the API key that created the lead (name and ' +
      'prefix, never the key); none for a lead without one',
    async () => {
      const [key] = (await env.app.db.pool.query('SELECT name, prefix FROM api_keys WHERE id = $1', [env.ws.apiKeyId]))
        .rows;
      const id = await newLead();
      const page = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${id}`);
      assert.deepEqual(page.body.lead.apiKey, { name: key.name, prefix: key.prefix });
      assert.ok(env.ws.apiKey.startsWith(key.prefix) && env.ws.apiKey.length > key.prefix.length);
      assert.ok(!JSON.stringify(page.body).includes(env.ws.apiKey), 'the key itself is never shown');
      const sandboxId = await newLead({}, env.ws.sandboxKey);
      const [sandboxKey] = (
        await env.app.db.pool.query(
          'SELECT k.name, k.prefix FROM leads l JOIN api_keys k ON k.id = l.api_key_id WHERE l.id = $1',
          [sandboxId],
        )
      ).rows;
      assert.notEqual(sandboxKey.prefix, key.prefix);
      assert.deepEqual(
        (await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${sandboxId}`)).body.lead.apiKey,
        {
          name: sandboxKey.name,
          prefix: sandboxKey.prefix,
        },
      );
      await env.app.db.pool.query('UPDATE leads SET api_key_id = NULL WHERE id = $1', [id]);
      assert.equal((await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${id}`)).body.lead.apiKey, null);
    },
  );

  it("another workspace's lead, an unknown id and a malformed id are 404 for every action", async () => {
    const theirs = await newLead({}, env.other.apiKey);
    for (const id of [theirs, crypto.randomUUID(), 'not-a-uuid']) {
      assert.equal((await admin(env.app.http, sessions.owner, 'GET', `${leadsUrl()}/${id}`)).status, 404);
      assert.equal(
        (await admin(env.app.http, sessions.owner, 'POST', `${leadsUrl()}/${id}/take-over`)).body.error,
        'Lead not found.',
      );
      assert.equal((await admin(env.app.http, sessions.owner, 'DELETE', `${leadsUrl()}/${id}`)).status, 404);
    }
    const [{ status }] = (await env.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [theirs])).rows;
    assert.equal(status, 'new');
  });

  it('a state-changing request without the CSRF token is 403 and changes nothing', async () => {
    const id = await newLead();
    const r = await admin(env.app.http, sessions.owner, 'POST', `${leadsUrl()}/${id}/take-over`, {}, { csrf: false });
    assert.deepEqual([r.status, r.body], [403, { ok: false, error: 'Missing or invalid CSRF token.' }]);
    const wrong = await admin(env.app.http, { ...sessions.owner, csrf: 'guessed' }, 'DELETE', `${leadsUrl()}/${id}`);
    assert.equal(wrong.status, 403);
    const [{ status }] = (await env.app.db.pool.query('SELECT status FROM leads WHERE id = $1', [id])).rows;
    assert.equal(status, 'new');
  });

  const ACTS: Array<[string, Role[]]> = [
    ['take-over', ['owner', 'admin', 'agent']],
    ['outcome', ['owner', 'admin', 'agent']],
    ['resume', ['owner', 'admin', 'agent']],
    ['delete', ['owner', 'admin']],
  ];
  for (const [act, allowed] of ACTS) {
    for (const role of ['owner', 'admin', 'agent', 'viewer'] as const) {
      const ok = allowed.includes(role);
      it(`${act} by ${role}: ${ok ? 'done' : '403'}`, async () => {
        const id = await newLead();
        if (act === 'resume') await admin(env.app.http, sessions.owner, 'POST', `${leadsUrl()}/${id}/take-over`);
        const r =
          act === 'delete'
            ? await admin(env.app.http, sessions[role], 'DELETE', `${leadsUrl()}/${id}`)
            : await admin(
                env.app.http,
                sessions[role],
                'POST',
                `${leadsUrl()}/${id}/${act}`,
                act === 'outcome' ? { outcome: 'unqualified', note: 'Renting, not owning' } : {},
              );
        const { rows } = await env.app.db.pool.query('SELECT status, qualification_notes FROM leads WHERE id = $1', [
          id,
        ]);
        if (!ok) {
          assert.deepEqual(
            [r.status, r.body],
            [403, { ok: false, error: 'Your role in this workspace does not allow this.' }],
          );
          assert.equal(rows.length, 1);
          return;
        }
        assert.equal(r.status, 200, JSON.stringify(r.body));
        if (act === 'delete') {
          assert.equal(rows.length, 0);
          const audit = await env.app.db.pool.query(`SELECT actor FROM audit_events WHERE subject_id = $1`, [id]);
          assert.match(audit.rows[0].actor, /^operator:/);
          return;
        }
        const expected = { 'take-over': 'needs_human', outcome: 'unqualified', resume: 'in_conversation' }[act]!;
        assert.deepEqual(r.body, { ok: true, status: expected });
        assert.equal(rows[0].status, expected);
        const page = await admin(env.app.http, sessions.viewer, 'GET', `${leadsUrl()}/${id}`);
        const last = page.body.timeline.at(-1);
        assert.equal(last.data.operator, names[role]);
        if (act === 'outcome') assert.equal(rows[0].qualification_notes, 'Renting, not owning');
      });
    }
  }

  it('set outcome: booked with a note; a 409 names the status when the state machine refuses', async () => {
    const id = await newLead();
    const booked = await admin(env.app.http, sessions.agent, 'POST', `${leadsUrl()}/${id}/outcome`, {
      outcome: 'booked',
      note: 'Booked by phone for Tuesday',
    });
    assert.deepEqual(booked.body, { ok: true, status: 'booked' });
    const again = await admin(env.app.http, sessions.agent, 'POST', `${leadsUrl()}/${id}/outcome`, {
      outcome: 'unqualified',
      note: 'Changed their mind',
    });
    assert.deepEqual(
      [again.status, again.body],
      [409, { ok: false, error: "The lead's status does not allow this.", status: 'booked' }],
    );
    const noNote = await admin(env.app.http, sessions.agent, 'POST', `${leadsUrl()}/${id}/outcome`, {
      outcome: 'booked',
    });
    assert.equal(noNote.status, 400);
  });

  it('delete: the phone can be submitted again', async () => {
    const phone = '+49 30 5550 1234';
    const id = await newLead({ phone });
    assert.equal((await admin(env.app.http, sessions.admin, 'DELETE', `${leadsUrl()}/${id}`)).status, 200);
    assert.equal((await postLead(env.app.http, env.ws.apiKey, validLead({ phone }))).status, 201);
  });
});

// The lead state machine against a real database: every (actor, from, to) combination, the
// columns set with a transition, and racing transitions decided by the state-guarded UPDATE.
import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import {
  canTransition,
  LEAD_STATUSES,
  recordLeadEvent,
  TERMINAL_STATUSES,
  transitionLead,
  type Actor,
  type LeadStatus,
} from '../../src/leads/lead-state.ts';
import { insertLead, leadEvents, leadRow } from '../helpers/agent-harness.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

let db: TestDatabase;
let workspaceId: string;

before(async () => {
  db = await createTestDatabase();
  const { rows } = await db.pool.query(
    `INSERT INTO workspaces (slug, name, channel) VALUES ('states', 'States', 'whatsapp') RETURNING id`,
  );
  workspaceId = rows[0].id;
});
after(() => db.drop());

// Spec 3.2 as we implement it, written out here so a change to the module shows up as a diff
// against this table rather than silently passing.
const EXPECTED: Record<Actor, string[]> = {
  agent: [
    'new→in_conversation',
    'new→booked',
    'in_conversation→booked',
    'new→unqualified',
    'in_conversation→unqualified',
    'new→needs_human',
    'in_conversation→needs_human',
  ],
  operator: [
    'new→needs_human',
    'in_conversation→needs_human',
    'booked→needs_human',
    'unqualified→needs_human',
    'needs_human→in_conversation',
    'new→booked',
    'in_conversation→booked',
    'needs_human→booked',
    'new→unqualified',
    'in_conversation→unqualified',
    'needs_human→unqualified',
  ],
  system: [
    'new→in_conversation',
    'new→unqualified',
    'in_conversation→unqualified',
    'new→needs_human',
    'in_conversation→needs_human',
    'booked→needs_human',
  ],
};

/** A lead in `status` whose updated_at lies in the past, so a change to it is visible. */
async function leadIn(status: LeadStatus): Promise<string> {
  const id = await insertLead(db.pool, workspaceId, { status });
  await db.pool.query(`UPDATE leads SET updated_at = '2000-01-01T00:00:00Z' WHERE id = $1`, [id]);
  return id;
}

for (const actor of ['agent', 'operator', 'system'] as const) {
  describe(`transitions by the ${actor}`, { concurrency: true }, () => {
    for (const from of LEAD_STATUSES) {
      for (const to of LEAD_STATUSES) {
        const allowed = EXPECTED[actor].includes(`${from}→${to}`);
        it(`${from} → ${to}: ${allowed ? 'applied' : 'refused'}`, async () => {
          assert.equal(canTransition(actor, from, to), allowed);
          const id = await leadIn(from);
          const r = await transitionLead(db.pool, {
            leadId: id,
            to,
            actor,
            event: { type: 'test.transition', data: { note: 'x' } },
          });
          const row = await leadRow(db.pool, id);
          const events = (await leadEvents(db.pool, id)).filter((e) => e.type === 'test.transition');
          if (allowed) {
            assert.deepEqual(r, { ok: true, from, to });
            assert.equal(row.status, to);
            assert.ok(row.updated_at.getTime() > Date.parse('2000-01-01T00:00:00Z'), 'updated_at moved');
            assert.deepEqual(events, [{ type: 'test.transition', data: { note: 'x', from, to, actor } }]);
          } else {
            assert.deepEqual(r, { ok: false, reason: 'refused', status: from });
            assert.equal(row.status, from);
            assert.equal(
              row.updated_at.toISOString(),
              '2000-01-01T00:00:00.000Z',
              'a refused transition changes nothing',
            );
            assert.deepEqual(events, []);
          }
        });
      }
    }
  });
}

describe('transition details', () => {
  it('booked, unqualified and needs_human are terminal for the agent: no agent transition leaves them', () => {
    for (const from of TERMINAL_STATUSES) {
      for (const to of LEAD_STATUSES) assert.equal(canTransition('agent', from, to), false, `${from} → ${to}`);
    }
  });

  it('the columns given in `set` change with the status; the others are kept', async () => {
    const id = await leadIn('in_conversation');
    await db.pool.query(`UPDATE leads SET qualification_notes = 'earlier' WHERE id = $1`, [id]);
    const start = new Date('2050-09-05T07:00:00.000Z');
    const r = await transitionLead(db.pool, {
      leadId: id,
      to: 'booked',
      actor: 'agent',
      event: { type: 'booking.created' },
      set: { bookingUid: 'uid-1', bookingStart: start },
    });
    assert.equal(r.ok, true);
    const row = await leadRow(db.pool, id);
    assert.deepEqual(
      [row.status, row.booking_uid, row.booking_start.toISOString(), row.qualification_notes],
      ['booked', 'uid-1', start.toISOString(), 'earlier'],
    );

    const other = await leadIn('new');
    await transitionLead(db.pool, {
      leadId: other,
      to: 'unqualified',
      actor: 'agent',
      event: { type: 'lead.unqualified' },
      set: { qualificationNotes: 'Rents the flat.' },
    });
    const unq = await leadRow(db.pool, other);
    assert.deepEqual([unq.status, unq.qualification_notes, unq.booking_uid], ['unqualified', 'Rents the flat.', null]);
  });

  it('an unknown lead is not_found and nothing is written', async () => {
    const r = await transitionLead(db.pool, {
      leadId: crypto.randomUUID(),
      to: 'needs_human',
      actor: 'operator',
      event: { type: 'x' },
    });
    assert.deepEqual(r, { ok: false, reason: 'not_found' });
  });

  it('recordLeadEvent appends to the timeline and leaves the status alone', async () => {
    const id = await leadIn('booked');
    await recordLeadEvent(db.pool, id, 'conversation.ended', { actor: 'agent' });
    assert.deepEqual(await leadEvents(db.pool, id), [{ type: 'conversation.ended', data: { actor: 'agent' } }]);
    assert.equal((await leadRow(db.pool, id)).status, 'booked');
  });
});

describe('racing transitions', () => {
  it(
    '20 concurrent agent transitions of one lead to different ' + 'terminal states: exactly one applies, one event',
    async () => {
      for (let round = 0; round < 5; round++) {
        const id = await leadIn('in_conversation');
        const targets: LeadStatus[] = Array.from(
          { length: 20 },
          (_, i) => (['booked', 'unqualified', 'needs_human'] as const)[i % 3]!,
        );
        const results = await Promise.all(
          targets.map((to, i) =>
            transitionLead(db.pool, { leadId: id, to, actor: 'agent', event: { type: `race.${to}`, data: { i } } }),
          ),
        );
        const applied = results.filter((r) => r.ok);
        assert.equal(applied.length, 1, `round ${round}: ${JSON.stringify(results)}`);
        const winner = applied[0]!;
        assert.ok(winner.ok);
        // Every loser saw the winner's status, not a stale one.
        for (const r of results.filter((x) => !x.ok))
          assert.deepEqual(r, { ok: false, reason: 'refused', status: winner.to });
        const events = await leadEvents(db.pool, id);
        assert.equal(events.length, 1);
        assert.equal(events[0]!.type, `race.${winner.to}`);
        assert.equal((await leadRow(db.pool, id)).status, winner.to);
      }
    },
  );

  it('an operator take-over racing an agent booking: one of them wins, never both', async () => {
    const id = await leadIn('in_conversation');
    const [agent, operator] = await Promise.all([
      transitionLead(db.pool, {
        leadId: id,
        to: 'booked',
        actor: 'agent',
        event: { type: 'booking.created' },
        set: { bookingUid: 'u', bookingStart: new Date() },
      }),
      transitionLead(db.pool, {
        leadId: id,
        to: 'needs_human',
        actor: 'operator',
        event: { type: 'operator.took_over' },
      }),
    ]);
    const row = await leadRow(db.pool, id);
    const types = (await leadEvents(db.pool, id)).map((e) => e.type);
    if (agent.ok) {
      // The operator may take over a booked lead, so both can apply, in this order only.
      assert.equal(row.status, operator.ok ? 'needs_human' : 'booked');
      assert.deepEqual(types, operator.ok ? ['booking.created', 'operator.took_over'] : ['booking.created']);
    } else {
      assert.deepEqual([operator.ok, row.status, types], [true, 'needs_human', ['operator.took_over']]);
      assert.equal(row.booking_uid, null);
    }
  });
});

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { lockLead, tryLockLeads } from '../../src/leads/lead-lock.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/test-db.ts';

// The lead lock of a WhatsApp turn (src/leads/lead-lock.ts): when its connection is lost, and
// the "turn requested" flag a turn's start clears.

describe('lead lock', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db.drop();
  });

  /** Leads of a new workspace; the first `flagged` of them have a turn requested. */
  async function leads(n: number, flagged: number): Promise<string[]> {
    const {
      rows: [w],
    } = await db.pool.query(
      `INSERT INTO workspaces (slug, name, channel) VALUES ($1, 'Locks', 'whatsapp') RETURNING id`,
      [`locks-${crypto.randomUUID().slice(0, 8)}`],
    );
    const { rows } = await db.pool.query(
      `INSERT INTO leads (workspace_id, name, phone, phone_normalized, consented_at, turn_requested_at)
       SELECT $1, 'Lock ' || i, '+1558' || lpad(i::text, 7, '0'),
       '+1558' || lpad(i::text, 7, '0'), now(), CASE WHEN i <= $3 THEN now() END
         FROM generate_series(1, $2::int) AS i ORDER BY i RETURNING id`,
      [w.id, n, flagged],
    );
    return rows.map((r) => r.id as string);
  }
  const flags = async (ids: string[]) =>
    (
      await db.pool.query(
        `SELECT count(*) FILTER (WHERE turn_requested_at IS NOT NULL)::int AS n FROM leads WHERE id = ANY($1::uuid[])`,
        [ids],
      )
    ).rows[0].n as number;

  it(
    "a turn's start clears the flag, and runs no UPDATE of leads " + 'when there is none to clear (first contacts)',
    async () => {
      // Every UPDATE statement on leads, even of no row, fires the funnel's and the live pages'
      // statement triggers: counted here by one more such trigger.
      await db.pool.query(`CREATE TABLE lead_update_statements (at timestamptz NOT NULL DEFAULT now());
      CREATE FUNCTION count_lead_updates() RETURNS trigger LANGUAGE plpgsql AS $f$ BEGIN
      INSERT INTO lead_update_statements DEFAULT VALUES; RETURN NULL; END $f$;
      CREATE TRIGGER count_lead_updates AFTER UPDATE
      ON leads FOR EACH STATEMENT EXECUTE FUNCTION count_lead_updates();`);
      const updates = async () =>
        (await db.pool.query('SELECT count(*)::int AS n FROM lead_update_statements')).rows[0].n as number;
      try {
        const [one, two] = await leads(2, 1);
        let lock = await lockLead(db.pool, one!, { startTurn: true });
        await lock.release();
        assert.equal(await flags([one!]), 0);
        assert.equal(await updates(), 1);
        lock = await lockLead(db.pool, two!, { startTurn: true });
        await lock.release();
        assert.equal(await updates(), 1, 'no flag: no UPDATE');

        const batch = await leads(5, 2);
        const locks = await tryLockLeads(db.pool, batch);
        assert.deepEqual(locks.leadIds, batch);
        await locks.release();
        assert.equal(await flags(batch), 0);
        assert.equal(await updates(), 2, 'the two flags cleared by one UPDATE');
        const fresh = await leads(5, 0);
        const more = await tryLockLeads(db.pool, fresh);
        await more.release();
        assert.equal(await updates(), 2, 'no flag in the batch: no UPDATE');
      } finally {
        await db.pool.query('DROP TRIGGER count_lead_updates ON leads');
      }
    },
  );

  it('says it is lost when its connection is terminated, and the lead is free for the retry at once', async () => {
    const leadId = crypto.randomUUID();
    const lock = await lockLead(db.pool, leadId);
    const { rows } = await lock.db.query('SELECT pg_backend_pid() AS pid');
    const lost = once(lock.lost, 'abort');
    await db.pool.query('SELECT pg_terminate_backend($1)', [rows[0].pid]);
    await lost;
    assert.equal(lock.lost.aborted, true);
    // Nothing to unlock on a dead connection; release must neither throw nor hand it out again.
    await lock.release();
    const next = await lockLead(db.pool, leadId);
    assert.equal(next.lost.aborted, false);
    assert.notEqual((await next.db.query('SELECT pg_backend_pid() AS pid')).rows[0].pid, rows[0].pid);
    await next.release();
  });
});

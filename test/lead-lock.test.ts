import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import { once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { lockLead } from '../src/whatsapp/lead-lock.ts';
import { createTestDatabase, type TestDatabase } from './helpers/test-db.ts';

// The lead lock of a WhatsApp turn (src/whatsapp/lead-lock.ts) when its connection is lost.

describe('lead lock', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db.drop();
  });

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
